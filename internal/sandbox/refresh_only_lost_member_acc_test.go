package sandbox_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
)

// lostMemberRun is the evaluation guide's pattern in small: a fleet, an
// agent that writes each member's reward, and the prime_fleet_file data
// source reading the rewards into an output.
const lostMemberRun = `
resource "prime_sandbox_fleet" "eval" {
  name_prefix  = "lost-member"
  docker_image = "python:3.12-slim"
  members      = ["a", "b"]
}

resource "prime_fleet_command" "agent" {
  sandbox_ids = prime_sandbox_fleet.eval.sandbox_ids
  commands    = ["mkdir -p /results && echo '{\"reward\": 1}' > /results/reward.json"]
}

data "prime_fleet_file" "reward" {
  sandbox_ids   = { for k, r in prime_fleet_command.agent.results : k => r.sandbox_id }
  path          = "/results/reward.json"
  allow_missing = true
}

output "rewards" {
  value = { for k, f in data.prime_fleet_file.reward.files : k => f.exists ? jsondecode(f.content).reward : 0 }
}
`

// A member deleted out of band is drift, not an error: `terraform plan
// -refresh-only` succeeds (the fleet drops the member, with a warning),
// and the data source that reads the fleet's files reports that member's
// file as missing with one warning naming it, instead of failing the
// refresh. The next apply re-creates the member, runs its agent, and the
// reward is back.
func TestAccRefreshOnlyAfterMemberDeleted(t *testing.T) {
	cli := acctest.RequireCLI(t)
	m, env, ctx := acctest.MockCLITest(t)
	w := acctest.NewWork(t, cli, env, map[string]string{"main.tf": refreshProviders + lostMemberRun})
	w.DestroyAtEnd(ctx, m)
	if out := w.Must(ctx, "apply", "-auto-approve", "-input=false"); !strings.Contains(out, `"b" = 1`) {
		t.Fatalf("the rewards are not in the outputs:\n%s", out)
	}
	fleet := stateInstanceOf(t, filepath.Join(w.Dir, "terraform.tfstate"), "prime_sandbox_fleet", "eval")
	gone := fleet.Attributes["sandbox_ids"].(map[string]any)["b"].(string)
	if err := m.Client(t).DeleteSandbox(ctx, gone); err != nil {
		t.Fatal(err)
	}

	out, code := w.Exec(ctx, "plan", "-refresh-only", "-input=false")
	if code != 0 {
		t.Fatalf("refresh-only plan after member b was deleted exited %d, want 0:\n%s", code, out)
	}
	for _, want := range []string{"Fleet members are gone", `"b" (` + gone, "Fleet members' sandboxes are gone",
		"b = 1 -> 0"} {
		if !strings.Contains(out, want) {
			t.Errorf("the refresh-only plan lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "Fleet members' sandboxes are gone"); n != 1 {
		t.Errorf("the data source warned %d times, want once:\n%s", n, out)
	}

	// The next apply re-creates b in place and runs only its agent again.
	if out := w.Must(ctx, "apply", "-auto-approve", "-input=false"); !strings.Contains(out, `"b" = 1`) {
		t.Fatalf("after the apply the reward of b is not back:\n%s", out)
	}
	if runs := acctest.CommandRuns(m, "mkdir -p /results"); len(runs) != 3 {
		t.Errorf("the agent ran on %d sandboxes, want 3 (a, b, and b's new sandbox): %v", len(runs), runs)
	}
}
