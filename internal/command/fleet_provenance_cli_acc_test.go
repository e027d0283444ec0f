package command_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
)

// stampedFleetHCL is a fleet whose agent, a background job of a few
// seconds, clears /results and writes its reward there; the reward is read
// checked against each member's run, and each run's record kept in outDir.
func stampedFleetHCL(size int, outDir string) string {
	return fmt.Sprintf(`
provider "prime" {}

resource "prime_sandbox_fleet" "eval" {
  name_prefix  = "stamp"
  size         = %d
  docker_image = "python:3.12-slim"
}

resource "prime_fleet_command" "agent" {
  sandbox_ids     = prime_sandbox_fleet.eval.sandbox_ids
  commands        = ["echo agent-start; sleep 3; mkdir -p /results && echo \"{\\\"member\\\": \\\"$PRIME_MEMBER_KEY\\\"}\" > /results/reward.json"]
  background      = true
  timeout_seconds = 600
  result_paths    = ["/results"]
  output_dir      = %q
}

data "prime_fleet_file" "reward" {
  sandbox_ids = { for k, r in prime_fleet_command.agent.results : k => r.sandbox_id }
  path        = "/results/reward.json"
  run_ids     = { for k, r in prime_fleet_command.agent.results : k => r.run_id }
}

output "runs" {
  value = { for k, r in prime_fleet_command.agent.results : k => {
    run_id = r.run_id, started_at = r.started_at, egress_generation = r.egress_generation,
    reward_run = data.prime_fleet_file.reward.files[k].run_id, stale = data.prime_fleet_file.reward.files[k].stale
  } }
}
`, size, outDir)
}

// A run outlives the apply that began it: killed (SIGKILL, the job journal
// holds the jobs) or interrupted (Ctrl-C, state holds them), the next apply
// collects each member's job and records the same run its job stamped as
// it started — so the reward read against it is its own, never stale —
// with the start and egress read then; each member's agent started once.
func TestAccFleetCommandCLI_runSurvivesAKilledOrInterruptedApply(t *testing.T) {
	for _, stop := range []string{"kill", "interrupt"} {
		t.Run(stop, func(t *testing.T) {
			m, env, ctx := acctest.MockCLITest(t)
			const size = 3
			out := t.TempDir()
			w := acctest.NewWork(t, acctest.RequireCLI(t), env, nil)
			w.Put("main.tf", acctest.CLIProviders+stampedFleetHCL(size, out))
			w.DestroyAtEnd(ctx, m)

			r := w.Launch("apply", "-auto-approve", "-no-color")
			waitStarts(ctx, t, m, "agent-start", size)
			if stop == "kill" {
				acctest.KillTF(r)
			} else {
				acctest.InterruptTF(ctx, t, r)
			}
			w.Must(ctx, "apply", "-auto-approve", "-no-color")
			if n := acctest.CountStarts(m.Events(), "agent-start"); n != size {
				t.Errorf("the agent started %d times for %d members; each must run once", n, size)
			}
			var runs map[string]struct {
				RunID            string `json:"run_id"`
				StartedAt        string `json:"started_at"`
				EgressGeneration *int64 `json:"egress_generation"`
				RewardRun        string `json:"reward_run"`
				Stale            bool   `json:"stale"`
			}
			if err := json.Unmarshal([]byte(w.OutputJSON(ctx, "runs")), &runs); err != nil {
				t.Fatal(err)
			}
			for k := range size {
				key := fmt.Sprint(k)
				r := runs[key]
				if r.RunID == "" || r.RewardRun != r.RunID || r.Stale || r.StartedAt == "" || r.EgressGeneration == nil {
					t.Errorf("member %s: %+v; want its reward read as its run's, with the run's start and egress", key, r)
				}
				data, err := os.ReadFile(filepath.Join(out, key, "run.json"))
				var rec struct {
					RunID string `json:"run_id"`
				}
				if err != nil || json.Unmarshal(data, &rec) != nil || rec.RunID != r.RunID {
					t.Errorf("member %s's run.json %s (%v): want run %s", key, data, err, r.RunID)
				}
			}
			if out, code := w.Exec(ctx, "plan", "-detailed-exitcode", "-no-color"); code != 0 {
				t.Errorf("the plan after the collecting apply is not empty (exit %d):\n%s", code, out)
			}
		})
	}
}
