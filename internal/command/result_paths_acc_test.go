package command_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// staleResultHCL is an evaluation whose agent writes /results/reward.json
// and a transcript when WRITE is "yes", and exits 0 before writing
// anything when it is not; the reward is read back by a data source and
// the transcript downloaded by an artifact, the way the guide shows.
// resultPaths is the agent's result_paths line ("" for none).
func staleResultHCL(m *mocktest.Mock, background bool, write, resultPaths, allowMissing, outDir string) string {
	return m.Config(fmt.Sprintf(acctest.SandboxFleetHCL("eval", "stale", 2)+`
resource "prime_fleet_command" "agent" {
  sandbox_ids = prime_sandbox_fleet.eval.sandbox_ids
  commands    = ["test \"$WRITE\" = yes || exit 0; mkdir -p /results && echo '{\"reward\": 1}' > /results/reward.json && echo transcript-of-$PRIME_MEMBER_KEY > /results/transcript.txt"]
  env         = { WRITE = %q }
  background  = %t
  %s
}

data "prime_fleet_file" "reward" {
  sandbox_ids   = { for k, r in prime_fleet_command.agent.results : k => r.sandbox_id }
  path          = "/results/reward.json"
  allow_missing = %s
}

resource "prime_fleet_artifact" "transcripts" {
  sandbox_ids     = { for k, r in prime_fleet_command.agent.results : k => r.sandbox_id }
  remote_path     = "/results"
  kind            = "directory"
  local_path      = "%s/{key}"
  allow_missing   = true
  member_triggers = { for k, r in prime_fleet_command.agent.results : k => r.run_id }
}
`, write, background, resultPaths, allowMissing, outDir))
}

// An agent that runs again and exits before writing its result: with
// result_paths, the data source finds no reward (null with allow_missing,
// an error without) and the artifact brings no transcript — not the
// previous run's, which is still in the sandbox without result_paths.
func TestAccFleetCommand_resultPathsNeverShowAnEarlierRun(t *testing.T) {
	for _, background := range []bool{false, true} {
		t.Run(fmt.Sprintf("background=%t", background), func(t *testing.T) {
			m := mocktest.New(t, mocktest.Fast())
			out := t.TempDir()
			const paths = `result_paths = ["/results"]`
			reward := tfjsonpath.New("files").AtMapKey("0")
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: acctest.ProviderFactories(t),
				CheckDestroy:             m.CheckNoLiveSandboxes,
				Steps: []resource.TestStep{
					{
						Config: staleResultHCL(m, background, "yes", paths, "true", out),
						ConfigStateChecks: []statecheck.StateCheck{
							statecheck.ExpectKnownValue("data.prime_fleet_file.reward", reward.AtMapKey("content"),
								knownvalue.StringExact("{\"reward\": 1}\n")),
							statecheck.ExpectKnownValue("prime_fleet_artifact.transcripts",
								tfjsonpath.New("members").AtMapKey("1").AtMapKey("exists"), knownvalue.Bool(true)),
						},
					},
					{
						// The agent runs again and exits before writing.
						PreConfig: func() {
							if err := os.RemoveAll(out); err != nil {
								t.Fatal(err)
							}
						},
						Config: staleResultHCL(m, background, "no", paths, "true", out),
						ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
							plancheck.ExpectResourceAction("prime_fleet_command.agent", plancheck.ResourceActionReplace),
						}},
						ConfigStateChecks: []statecheck.StateCheck{
							statecheck.ExpectKnownValue("data.prime_fleet_file.reward", reward.AtMapKey("exists"), knownvalue.Bool(false)),
							statecheck.ExpectKnownValue("data.prime_fleet_file.reward", reward.AtMapKey("content"), knownvalue.Null()),
							statecheck.ExpectKnownValue("prime_fleet_artifact.transcripts",
								tfjsonpath.New("members").AtMapKey("1").AtMapKey("exists"), knownvalue.Bool(false)),
						},
						Check: func(*terraform.State) error {
							for _, key := range []string{"0", "1"} {
								if _, err := os.Stat(filepath.Join(out, key, "transcript.txt")); err == nil {
									return fmt.Errorf("member %s: the artifact brought back a transcript the agent did not write in this run", key)
								}
							}
							return nil
						},
					},
					{
						// Without allow_missing the missing reward is an error,
						// not the earlier reward.
						Config:      staleResultHCL(m, background, "no", paths, "false", out),
						ExpectError: acctest.ExpectErr("there is no file /results/reward.json in sandbox"),
					},
				},
			})
		})
	}
}

// result_paths is checked at plan time, before any API call, naming the
// entry and the reason.
func TestAccSandboxCommand_resultPathsValidatedAtPlan(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	for _, c := range []struct{ path, why string }{
		{"results", "it is not absolute"},
		{"/results/../etc", `it contains a ".." element`},
		{"/", "it is the root directory"},
		{"//.", "it is the root directory"},
		{"/tmp/", "it is /tmp"},
	} {
		resource.UnitTest(t, resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProviderFactories(t),
			Steps: []resource.TestStep{{
				Config: m.Config(fmt.Sprintf(`
resource "prime_sandbox_command" "agent" {
  sandbox_id   = "sb-1"
  command      = "true"
  result_paths = ["/ok", %q]
}
`, c.path)),
				PlanOnly:    true,
				ExpectError: acctest.ExpectErr(fmt.Sprintf("result_paths: %q cannot be a result path: %s", c.path, c.why)),
			}},
		})
	}
	m.NoAPICalls(t)
}

// A changed result_paths updates in place: nothing runs. The next run
// removes the paths first, in the same invocation as the command.
func TestAccSandboxCommand_resultPathsUpdateInPlace(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cfg := func(paths, trigger string) string {
		return m.Config(commandSandbox + fmt.Sprintf(`
resource "prime_sandbox_command" "agent" {
  sandbox_id   = prime_sandbox.box.id
  command      = "test -e /results/old && echo stale; mkdir -p /results && touch /results/old"
  result_paths = %s
  triggers     = { run = %q }
}
`, paths, trigger))
	}
	stdout := tfjsonpath.New("stdout")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{Config: cfg(`["/results"]`, "1"),
				ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectKnownValue("prime_sandbox_command.agent", stdout, knownvalue.StringExact(""))}},
			{Config: cfg(`["/results", "/transcripts"]`, "1"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox_command.agent", plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error {
					runs := 0
					for _, e := range m.Events() {
						if e.Type == primemock.EventCommandExecuted && strings.Contains(e.Command, "touch /results/old") {
							runs++
							if !strings.HasPrefix(e.Command, prime.ClearResultPathsCommand([]string{"/results"}, "")) {
								return fmt.Errorf("the command ran as %q, without removing its result paths first", e.Command)
							}
						}
					}
					if runs != 1 {
						return fmt.Errorf("the command ran %d times, want once: a change of result_paths must not run it", runs)
					}
					return nil
				}},
			{Config: cfg(`["/results", "/transcripts"]`, "2"),
				ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectKnownValue("prime_sandbox_command.agent", stdout, knownvalue.StringExact(""))}},
			// Without result_paths the earlier run's file is still there.
			{Config: cfg(`null`, "3"),
				ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectKnownValue("prime_sandbox_command.agent", stdout, knownvalue.StringExact("stale\n"))}},
		},
	})
}
