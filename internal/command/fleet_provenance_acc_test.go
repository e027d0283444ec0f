package command_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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

// bornAgentHCL is a fleet of two born restricted with allow (an HCL list)
// and its agent, which names the lists' digest in triggers — the
// resources' way to re-run an agent when the lists of an egress block
// change in place — clears /results, keeps its records in outDir and
// writes a reward the data source reads back, checked against each
// member's run. The outputs say whether each run recorded what the
// configuration holds.
func bornAgentHCL(m *mocktest.Mock, background bool, allow, outDir string) string {
	return m.Config(acctest.SandboxFleetHCL("eval", "prov", 2, fmt.Sprintf(`egress {
    allow  = %s
    routes = ["https://intercept.example.net/v1"]
  }`, allow)) + fmt.Sprintf(`
resource "prime_fleet_command" "agent" {
  sandbox_ids  = { for k, s in prime_sandbox_fleet.eval.sandboxes : k => s.id if s.egress_applied }
  commands     = ["mkdir -p /results && echo '{\"reward\": 1}' > /results/reward.json"]
  background   = %t
  result_paths = ["/results"]
  output_dir   = %q
  triggers     = { lists = prime_sandbox_fleet.eval.egress.lists_sha256 }
}

data "prime_fleet_file" "reward" {
  sandbox_ids = { for k, r in prime_fleet_command.agent.results : k => r.sandbox_id if !r.failed }
  path        = "/results/reward.json"
  run_ids     = { for k, r in prime_fleet_command.agent.results : k => r.run_id if !r.failed }
}

output "runs_under_the_lists" {
  value = alltrue([for k, r in prime_fleet_command.agent.results :
    r.egress_sha256 == prime_sandbox_fleet.eval.egress.lists_sha256 &&
    r.egress_generation == prime_sandbox_fleet.eval.sandboxes[k].egress_generation &&
  r.sandbox_id == prime_sandbox_fleet.eval.sandbox_ids[k] && r.started_at != null])
}

output "commands_digest" {
  value = prime_fleet_command.agent.commands_sha256 == sha256(jsonencode(prime_fleet_command.agent.commands))
}

output "rewards_of_the_runs" {
  value = alltrue([for k, f in data.prime_fleet_file.reward.files : f.exists && !f.stale && f.run_id == prime_fleet_command.agent.results[k].run_id])
}
`, background, outDir))
}

// Each run of a fleet command records its provenance: its ID (16 hex), when
// it started, the egress generation and the digest of the lists its
// sandbox enforced then (read from the platform: they equal the fleet's),
// and the steps' digest; run.json in output_dir says the same. A change
// of the born lists changes lists_sha256 at plan time, so an agent that
// names it runs again on every member, after the new lists are enforced
// (its runs record the new digest and generation), and the rewards are the
// new runs'. The next plan is empty.
func TestAccFleetCommand_runRecordsItsProvenance(t *testing.T) {
	for _, background := range []bool{false, true} {
		t.Run(fmt.Sprintf("background=%t", background), func(t *testing.T) {
			m := mocktest.New(t, mocktest.Fast())
			out := t.TempDir()
			narrow, wide := `["example.com"]`, `["example.com", "pypi.org"]`
			digest := func(hosts ...string) string {
				return prime.EgressPolicy{Allowlist: append([]string{"intercept.example.net"}, hosts...)}.Digest()
			}
			runID := func(k string) tfjsonpath.Path { return tfjsonpath.New("results").AtMapKey(k).AtMapKey("run_id") }
			sameRun0, sameRun1 := statecheck.CompareValue(compare.ValuesDiffer()), statecheck.CompareValue(compare.ValuesDiffer())
			outputsTrue := []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("runs_under_the_lists", knownvalue.Bool(true)),
				statecheck.ExpectKnownOutputValue("commands_digest", knownvalue.Bool(true)),
				statecheck.ExpectKnownOutputValue("rewards_of_the_runs", knownvalue.Bool(true)),
			}
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: acctest.ProviderFactories(t),
				CheckDestroy:             m.CheckNoLiveSandboxes,
				Steps: []resource.TestStep{
					{
						Config: bornAgentHCL(m, background, narrow, out),
						ConfigStateChecks: append([]statecheck.StateCheck{
							statecheck.ExpectKnownValue("prime_sandbox_fleet.eval", tfjsonpath.New("egress").AtMapKey("lists_sha256"),
								knownvalue.StringExact(digest("example.com"))),
							statecheck.ExpectKnownValue("prime_fleet_command.agent", runID("0"),
								knownvalue.StringRegexp(regexp.MustCompile(`^[0-9a-f]{16}$`))),
							sameRun0.AddStateValue("prime_fleet_command.agent", runID("0")),
							sameRun1.AddStateValue("prime_fleet_command.agent", runID("1")),
						}, outputsTrue...),
						Check: checkRunRecords(out, digest("example.com")),
					},
					{
						Config: bornAgentHCL(m, background, wide, out),
						ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
							plancheck.ExpectResourceAction("prime_sandbox_fleet.eval", plancheck.ResourceActionUpdate),
							plancheck.ExpectKnownValue("prime_sandbox_fleet.eval", tfjsonpath.New("egress").AtMapKey("lists_sha256"),
								knownvalue.StringExact(digest("example.com", "pypi.org"))),
							plancheck.ExpectResourceAction("prime_fleet_command.agent", plancheck.ResourceActionReplace),
						}},
						ConfigStateChecks: append([]statecheck.StateCheck{
							sameRun0.AddStateValue("prime_fleet_command.agent", runID("0")),
							sameRun1.AddStateValue("prime_fleet_command.agent", runID("1")),
							statecheck.ExpectKnownValue("prime_fleet_command.agent",
								tfjsonpath.New("results").AtMapKey("0").AtMapKey("egress_generation"), knownvalue.Int64Exact(1)),
						}, outputsTrue...),
						Check: checkRunRecords(out, digest("example.com", "pypi.org")),
					},
				},
			})
		})
	}
}

// checkRunRecords checks every member's run.json in outDir against the
// agent's state: the same run, the lists it ran under, its triggers.
func checkRunRecords(outDir, lists string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		rs := s.RootModule().Resources["prime_fleet_command.agent"]
		if rs == nil {
			return fmt.Errorf("no agent in state")
		}
		for _, k := range []string{"0", "1"} {
			data, err := os.ReadFile(filepath.Join(outDir, k, "run.json"))
			if err != nil {
				return err
			}
			var rec struct {
				RunID          string            `json:"run_id"`
				Member         string            `json:"member"`
				SandboxID      string            `json:"sandbox_id"`
				StartedAt      string            `json:"started_at"`
				EndedAt        string            `json:"ended_at"`
				CommandsSHA256 string            `json:"commands_sha256"`
				EgressSHA256   string            `json:"egress_sha256"`
				ExitCode       *int64            `json:"exit_code"`
				Failed         bool              `json:"failed"`
				Triggers       map[string]string `json:"triggers"`
			}
			if err := json.Unmarshal(data, &rec); err != nil {
				return fmt.Errorf("%s's run.json: %w", k, err)
			}
			a := rs.Primary.Attributes
			want := map[string][2]string{
				"run_id":          {rec.RunID, a["results."+k+".run_id"]},
				"member":          {rec.Member, k},
				"sandbox_id":      {rec.SandboxID, a["results."+k+".sandbox_id"]},
				"started_at":      {rec.StartedAt, a["results."+k+".started_at"]},
				"ended_at":        {rec.EndedAt, a["results."+k+".executed_at"]},
				"commands_sha256": {rec.CommandsSHA256, a["commands_sha256"]},
				"egress_sha256":   {rec.EgressSHA256, lists},
				"triggers.lists":  {rec.Triggers["lists"], lists},
			}
			for name, v := range want {
				if v[0] != v[1] || v[0] == "" {
					return fmt.Errorf("%s's run.json: %s = %q, want %q\n%s", k, name, v[0], v[1], data)
				}
			}
			if rec.ExitCode == nil || *rec.ExitCode != 0 || rec.Failed {
				return fmt.Errorf("%s's run.json: want exit code 0, not failed\n%s", k, data)
			}
		}
		return nil
	}
}
