package sandbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// lostRun is the configuration whose state gets lost: five sandboxes of a
// run, one born restricted, one on arm64, all with a write-only secret
// the platform cannot report.
const lostRun = refreshProviders + `
resource "prime_sandbox" "run" {
  count              = 5
  name               = "lost-${count.index}"
  docker_image       = "python:3.12-slim"
  labels             = ["lost-run-42", "eval"]
  cpu_cores          = 2
  arch               = count.index == 1 ? "arm64" : null
  environment_vars   = { TASK = "task-${count.index}" }
  secrets_wo         = { HF_TOKEN = "hf-wo-secret-value" }
  secrets_wo_version = 1

  dynamic "egress" {
    for_each = count.index == 0 ? [1] : []
    content {
      allow = ["pypi.org"]
    }
  }
}
`

// adoptQuery finds the lost run.
const adoptQuery = `
list "prime_sandbox" "lost" {
  provider         = prime
  include_resource = true
  config {
    labels = ["lost-run-42"]
  }
}
`

// day2 is what the adopting workspace adds afterwards: a live fleet, a probe
// of it, a one-off command with a write-only value, and two sweeps of
// another label (the first a dry run).
const day2 = `
resource "prime_sandbox_fleet" "probe" {
  name_prefix  = "probe"
  docker_image = "python:3.12-slim"
  labels       = ["probe-fleet"]
  size         = 2
}

action "prime_fleet_exec" "probe" {
  config {
    sandbox_ids = prime_sandbox_fleet.probe.sandbox_ids
    commands    = ["echo probing", "echo still here >&2"]
  }
}

action "prime_sandbox_exec" "whoami" {
  config {
    sandbox_id = prime_sandbox.lost_0.id
    command    = "echo token is $TOKEN"
    env_wo     = { TOKEN = "exec-wo-secret" }
  }
}

action "prime_sandbox_sweep" "dry" {
  config {
    labels = ["sweep-me"]
  }
}

action "prime_sandbox_sweep" "real" {
  config {
    labels     = ["sweep-me"]
    older_than = "1ms"
    dry_run    = false
  }
}
`

// The scenario, on Terraform 1.14+ (run on 1.15): five labelled
// sandboxes lose their state; `terraform query` finds them by label and
// generates configuration whose plan imports the five and changes nothing
// else, write-only secrets included; apply adopts them and the next plan is
// empty. A sweep of another label deletes exactly that label's sandboxes,
// and its dry run deletes none. `apply -invoke` of prime_fleet_exec runs on
// every member of a live fleet, shows each member's output as progress and
// changes no state; prime_sandbox_exec shows its output with the
// write-only value scrubbed.
func TestAccLostState_queryImportSweepInvoke(t *testing.T) {
	cli := acctest.RequireCLIAtLeast(t, acctest.Query)
	m, env, ctx := acctest.MockCLITest(t)
	workspace := func(files map[string]string) *acctest.Work { return acctest.NewWork(t, cli, env, files) }
	c := m.Client(t)

	// The run, and its state lost.
	lost := workspace(map[string]string{"main.tf": lostRun})
	lost.Must(ctx, "apply", "-auto-approve", "-input=false")
	if n := acctest.LiveLabelled(ctx, t, c, "lost-run-42"); n != 5 {
		t.Fatalf("%d sandboxes of the run live, want 5", n)
	}
	// Not a leftover of this run, and what the sweeps are for.
	for i, labels := range [][]string{{"sweep-me"}, {"sweep-me", "eval"}, {"sweep-me"}, {"keep-me"}} {
		if _, err := c.CreateSandbox(ctx, prime.CreateSandboxRequest{Name: fmt.Sprintf("left-%d", i), DockerImage: "img", Labels: labels}); err != nil {
			t.Fatal(err)
		}
	}

	// Adopt: query, generated configuration, an import-only plan.
	adopt := workspace(map[string]string{"main.tf": refreshProviders, "adopt.tfquery.hcl": adoptQuery})
	t.Cleanup(func() {
		if out, code := adopt.Exec(ctx, "destroy", "-auto-approve", "-input=false"); code != 0 {
			t.Errorf("destroy exited %d:\n%s", code, out)
		}
		_, _ = c.BulkDeleteSandboxes(context.Background(), prime.BulkDeleteRequest{Labels: []string{"keep-me"}})
		if live := m.Stats().LiveSandboxes; live != 0 {
			t.Errorf("%d sandboxes live after destroy", live)
		}
	})
	queried := adopt.Must(ctx, "query", "-generate-config-out=generated.tf")
	for i := range 5 {
		if !strings.Contains(queried, fmt.Sprintf("lost-%d (", i)) {
			t.Errorf("terraform query does not list lost-%d:\n%s", i, queried)
		}
	}
	generated := adopt.Read("generated.tf")
	// What the platform cannot report is left out (or null), never made up.
	if strings.Contains(generated, "hf-wo-secret-value") || strings.Contains(generated, "guaranteed") ||
		regexp.MustCompile(`secrets_wo_version\s*=\s*[0-9]`).MatchString(generated) ||
		regexp.MustCompile(`(?m)^\s*vm\s*=`).MatchString(generated) {
		t.Errorf("the generated configuration claims what the platform cannot report:\n%s", generated)
	}
	if n := strings.Count(generated, `resource "prime_sandbox"`); n != 5 {
		t.Fatalf("the generated configuration has %d prime_sandbox blocks, want 5:\n%s", n, generated)
	}
	if !regexp.MustCompile(`(?s)egress\s*\{[^}]*pypi\.org`).MatchString(generated) {
		t.Errorf("the born-restricted sandbox's egress block is not in the generated configuration:\n%s", generated)
	}
	adopt.Must(ctx, "plan", "-input=false", "-out=adopt.tfplan")
	checkImportOnlyPlan(t, adopt.Must(ctx, "show", "-json", "adopt.tfplan"), 5)
	adopt.Must(ctx, "apply", "-input=false", "adopt.tfplan")
	if out, code := adopt.Exec(ctx, "plan", "-input=false", "-detailed-exitcode"); code != 0 {
		t.Fatalf("the plan after adopting exited %d, want 0 (no changes):\n%s", code, out)
	}
	refreshOnlyUnchanged(ctx, t, adopt, "after adopting")

	// Sweeps: the dry run lists, the real one deletes that label only.
	if err := os.WriteFile(filepath.Join(adopt.Dir, "day2.tf"), []byte(day2), 0o600); err != nil {
		t.Fatal(err)
	}
	dry := adopt.Must(ctx, "apply", "-auto-approve", "-input=false", "-invoke=action.prime_sandbox_sweep.dry")
	if n := strings.Count(dry, "would delete left-"); n != 3 {
		t.Errorf("the dry run listed %d sandboxes, want the 3 sweep-me ones:\n%s", n, dry)
	}
	if n := acctest.LiveLabelled(ctx, t, c, "sweep-me"); n != 3 {
		t.Fatalf("after the dry run %d sweep-me sandboxes live, want 3", n)
	}
	swept := adopt.Must(ctx, "apply", "-auto-approve", "-input=false", "-invoke=action.prime_sandbox_sweep.real")
	if n := strings.Count(swept, "deleted left-"); n != 3 {
		t.Errorf("the sweep reported %d deletions, want 3:\n%s", n, swept)
	}
	if sweep, run, keep := acctest.LiveLabelled(ctx, t, c, "sweep-me"), acctest.LiveLabelled(ctx, t, c, "lost-run-42"), acctest.LiveLabelled(ctx, t, c, "keep-me"); sweep != 0 || run != 5 || keep != 1 {
		t.Fatalf("after the sweep: %d sweep-me, %d lost-run-42, %d keep-me live; want 0, 5, 1", sweep, run, keep)
	}

	// The fleet, then its probe: output of every member, no state change.
	adopt.Must(ctx, "apply", "-auto-approve", "-input=false")
	before := adopt.Read("terraform.tfstate")
	probed := adopt.Must(ctx, "apply", "-auto-approve", "-input=false", "-invoke=action.prime_fleet_exec.probe")
	for _, key := range []string{"0", "1"} {
		for _, want := range []string{"[" + key + "] probing", "[" + key + " stderr] still here", "[" + key + "] step 2 of 2 exited with code 0"} {
			if !strings.Contains(probed, want) {
				t.Errorf("the probe's output lacks %q:\n%s", want, probed)
			}
		}
	}
	if runs := acctest.CommandRuns(m, "echo probing"); len(runs) != 2 {
		t.Errorf("the probe ran on %d members, want both: %v", len(runs), runs)
	}
	if after := adopt.Read("terraform.tfstate"); after != before {
		t.Errorf("apply -invoke changed the state")
	}
	whoami := adopt.Must(ctx, "apply", "-auto-approve", "-input=false", "-invoke=action.prime_sandbox_exec.whoami")
	if !strings.Contains(whoami, "token is ***") || strings.Contains(whoami, "exec-wo-secret") {
		t.Errorf("prime_sandbox_exec's output does not show the write-only value scrubbed:\n%s", whoami)
	}
	if out, code := adopt.Exec(ctx, "plan", "-input=false", "-detailed-exitcode"); code != 0 {
		t.Fatalf("the plan after the actions exited %d, want 0:\n%s", code, out)
	}
}

// checkImportOnlyPlan fails unless the plan (show -json) imports n
// resources and changes nothing: every change a no-op import.
func checkImportOnlyPlan(t *testing.T, planJSON string, n int) {
	t.Helper()
	var plan struct {
		ResourceChanges []struct {
			Address string `json:"address"`
			Change  struct {
				Actions   []string        `json:"actions"`
				Importing json.RawMessage `json:"importing"`
			} `json:"change"`
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal([]byte(planJSON), &plan); err != nil {
		t.Fatalf("plan JSON: %v", err)
	}
	imports := 0
	for _, rc := range plan.ResourceChanges {
		if len(rc.Change.Actions) != 1 || rc.Change.Actions[0] != "no-op" {
			t.Errorf("%s plans %v, want only an import (no-op)", rc.Address, rc.Change.Actions)
		}
		if len(rc.Change.Importing) > 0 && string(rc.Change.Importing) != "null" {
			imports++
		}
	}
	if imports != n || len(plan.ResourceChanges) != n {
		t.Errorf("the plan imports %d of %d changes, want %d imports and nothing else", imports, len(plan.ResourceChanges), n)
	}
}

// A fleet whose state was lost is found by its label, and the generated
// prime_sandbox_fleet block imports every member with no other change,
// egress block and write-only secrets included; the next plan is empty.
func TestAccLostState_fleetQueryImport(t *testing.T) {
	cli := acctest.RequireCLIAtLeast(t, acctest.Query)
	m, env, ctx := acctest.MockCLITest(t)
	lost := acctest.NewWork(t, cli, env, map[string]string{"main.tf": refreshProviders + `
resource "prime_sandbox_fleet" "run" {
  name_prefix        = "eval"
  docker_image       = "python:3.12-slim"
  labels             = ["eval-run-7"]
  members            = ["task-a", "task-b", "task-c"]
  secrets_wo         = { HF_TOKEN = "hf-wo-secret-value" }
  secrets_wo_version = 2
  egress {
    allow = ["pypi.org"]
  }
}
`})
	lost.Must(ctx, "apply", "-auto-approve", "-input=false")
	adopt := acctest.NewWork(t, cli, env, map[string]string{"main.tf": refreshProviders, "adopt.tfquery.hcl": `
list "prime_sandbox_fleet" "runs" {
  provider         = prime
  include_resource = true
  config {
    label_prefix = "eval-run-"
  }
}
`})
	adopt.DestroyAtEnd(ctx, m)
	if out := adopt.Must(ctx, "query", "-generate-config-out=generated.tf"); !strings.Contains(out, "eval-run-7 (3 members)") {
		t.Fatalf("terraform query does not list the fleet:\n%s", out)
	}
	generated := adopt.Read("generated.tf")
	if strings.Contains(generated, "hf-wo-secret-value") || strings.Contains(generated, "guaranteed") {
		t.Errorf("the generated configuration claims what the platform cannot report:\n%s", generated)
	}
	adopt.Must(ctx, "plan", "-input=false", "-out=adopt.tfplan")
	checkImportOnlyPlan(t, adopt.Must(ctx, "show", "-json", "adopt.tfplan"), 1)
	adopt.Must(ctx, "apply", "-input=false", "adopt.tfplan")
	if out, code := adopt.Exec(ctx, "plan", "-input=false", "-detailed-exitcode"); code != 0 {
		t.Fatalf("the plan after adopting the fleet exited %d, want 0:\n%s\n\ngenerated:\n%s", code, out, generated)
	}
	refreshOnlyUnchanged(ctx, t, adopt, "after adopting the fleet")
}

// refreshOnlyUnchanged runs the drift check CI runs, `terraform plan
// -refresh-only -detailed-exitcode`, a few times (each a refresh, which
// must change nothing), and fails unless every one exits 0.
func refreshOnlyUnchanged(ctx context.Context, t *testing.T, w *acctest.Work, when string) {
	t.Helper()
	for i := range 3 {
		if out, code := w.Exec(ctx, "plan", "-refresh-only", "-detailed-exitcode", "-input=false"); code != 0 {
			t.Fatalf("refresh-only plan %d %s exited %d, want 0:\n%s", i+1, when, code, out)
		}
	}
}
