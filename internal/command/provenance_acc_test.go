package command_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// bornSandboxAgentHCL is a sandbox born restricted to allow (an HCL list)
// and its agent, which names the lists' digest in triggers, clears
// /results, keeps its run.json in outDir; its reward is read back checked
// against its run, and downloaded the same way.
func bornSandboxAgentHCL(m *mocktest.Mock, background bool, allow, outDir string) string {
	return m.Config(acctest.SandboxHCL("box", "prov-single", fmt.Sprintf(`egress {
    allow = %s
  }`, allow)) + fmt.Sprintf(`
resource "prime_sandbox_command" "agent" {
  sandbox_id   = prime_sandbox.box.id
  command      = "mkdir -p /results && echo '{\"reward\": 1}' > /results/reward.json"
  background   = %t
  result_paths = ["/results"]
  output_dir   = %q
  triggers     = { lists = prime_sandbox.box.egress.lists_sha256 }
}

data "prime_sandbox_file" "reward" {
  sandbox_id = prime_sandbox_command.agent.sandbox_id
  path       = "/results/reward.json"
  run_id     = prime_sandbox_command.agent.run_id
}

resource "prime_sandbox_artifact" "results" {
  sandbox_id  = prime_sandbox_command.agent.sandbox_id
  remote_path = "/results"
  kind        = "directory"
  local_path  = "%[2]s/results"
  run_id      = prime_sandbox_command.agent.run_id
}

output "provenance" {
  value = (
    prime_sandbox_command.agent.id == "${prime_sandbox.box.id}/${prime_sandbox_command.agent.run_id}" &&
    prime_sandbox_command.agent.egress_sha256 == prime_sandbox.box.egress.lists_sha256 &&
    prime_sandbox_command.agent.egress_generation == prime_sandbox.box.egress_generation &&
    prime_sandbox_command.agent.command_sha256 == sha256(prime_sandbox_command.agent.command) &&
    prime_sandbox_command.agent.started_at != null
  )
}

output "reward_of_the_run" {
  value = data.prime_sandbox_file.reward.exists && !data.prime_sandbox_file.reward.stale
}
`, background, outDir))
}

// prime_sandbox_command records its run as a fleet member's is recorded:
// run_id (the second half of id, and its stamp's name), started_at, the
// egress it started under, command_sha256 and run.json. A change of the
// born lists runs it again (triggers name lists_sha256) under the new
// lists; the data source and the artifact given run_id read the new run's
// result.
func TestAccSandboxCommand_runRecordsItsProvenance(t *testing.T) {
	for _, background := range []bool{false, true} {
		t.Run(fmt.Sprintf("background=%t", background), func(t *testing.T) {
			m := mocktest.New(t, mocktest.Fast())
			out := t.TempDir()
			runs := statecheck.CompareValue(compare.ValuesDiffer())
			checks := func(allow ...string) []statecheck.StateCheck {
				return []statecheck.StateCheck{
					statecheck.ExpectKnownValue("prime_sandbox.box", tfjsonpath.New("egress").AtMapKey("lists_sha256"),
						knownvalue.StringExact(prime.EgressPolicy{Allowlist: allow}.Digest())),
					statecheck.ExpectKnownValue("prime_sandbox_command.agent", tfjsonpath.New("run_id"),
						knownvalue.StringRegexp(regexp.MustCompile(`^[0-9a-f]{16}$`))),
					runs.AddStateValue("prime_sandbox_command.agent", tfjsonpath.New("run_id")),
					statecheck.ExpectKnownOutputValue("provenance", knownvalue.Bool(true)),
					statecheck.ExpectKnownOutputValue("reward_of_the_run", knownvalue.Bool(true)),
					statecheck.ExpectKnownValue("prime_sandbox_artifact.results", tfjsonpath.New("exists"), knownvalue.Bool(true)),
				}
			}
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: acctest.ProviderFactories(t),
				CheckDestroy:             m.CheckNoLiveSandboxes,
				Steps: []resource.TestStep{
					{
						Config:            bornSandboxAgentHCL(m, background, `["example.com"]`, out),
						ConfigStateChecks: checks("example.com"),
						Check:             checkSingleRunRecord(out),
					},
					{
						Config: bornSandboxAgentHCL(m, background, `["example.com", "pypi.org"]`, out),
						ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
							plancheck.ExpectResourceAction("prime_sandbox.box", plancheck.ResourceActionUpdate),
							plancheck.ExpectResourceAction("prime_sandbox_command.agent", plancheck.ResourceActionReplace),
							plancheck.ExpectResourceAction("prime_sandbox_artifact.results", plancheck.ResourceActionReplace),
						}},
						ConfigStateChecks: checks("example.com", "pypi.org"),
						Check:             checkSingleRunRecord(out),
					},
				},
			})
		})
	}
}

// checkSingleRunRecord checks outDir/run.json against the command's state.
func checkSingleRunRecord(outDir string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		a := s.RootModule().Resources["prime_sandbox_command.agent"].Primary.Attributes
		data, err := os.ReadFile(filepath.Join(outDir, "run.json"))
		if err != nil {
			return err
		}
		var rec map[string]any
		if err := json.Unmarshal(data, &rec); err != nil {
			return err
		}
		for field, attr := range map[string]string{"run_id": "run_id", "sandbox_id": "sandbox_id", "started_at": "started_at",
			"ended_at": "executed_at", "command_sha256": "command_sha256", "egress_sha256": "egress_sha256"} {
			if got := fmt.Sprint(rec[field]); got != a[attr] || got == "" {
				return fmt.Errorf("run.json: %s = %q, want %q (%s)\n%s", field, got, a[attr], attr, data)
			}
		}
		if _, member := rec["member"]; member || strings.Contains(string(data), "commands_sha256") {
			return fmt.Errorf("run.json of a single command names no member and no steps' digest:\n%s", data)
		}
		return nil
	}
}
