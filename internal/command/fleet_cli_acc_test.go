package command_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/command"
)

// What only the real CLI shows: how a plan renders, how many warnings an
// apply prints, what state holds after Ctrl-C.

// fleetSetupHCL is a fleet of size whose setup prints lines lines and then
// one that names version.
func fleetSetupHCL(size, lines int, version, extra string) string {
	return fmt.Sprintf(`
provider "prime" {}

resource "prime_sandbox_fleet" "eval" {
  name_prefix  = "plan"
  size         = %d
  docker_image = "python:3.12-slim"
}

resource "prime_fleet_command" "setup" {
  sandbox_ids = prime_sandbox_fleet.eval.sandbox_ids
  commands    = ["repeat %d Collecting some-package==1.2.3 from requirements.txt line 4; echo Successfully installed %s"]
  %s
}
`, size, lines, version, extra)
}

// A changed setup of 6 members, each of which printed 100 lines, plans in
// a few lines per member: 535 lines before step_output kept only a last
// line (Terraform prints the old value of every entry that becomes
// unknown); "tail" still gives the old plan.
func TestAccFleetCommandCLI_rerunPlanStaysShort(t *testing.T) {
	cli := acctest.RequireCLI(t)
	provider := acctest.DevProvider(t)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	const size = 6
	for _, c := range []struct {
		extra    string
		maxLines int
	}{
		{"", 25 * size},
		{`step_output = "none"`, 25 * size},
		{`step_output = "tail"`, 100 * size},
	} {
		m := mocktest.New(t, mocktest.Fast())
		w := acctest.NewMockWork(t, m, provider(), cli, fleetSetupHCL(size, 100, "v1", c.extra))
		if out, code := w.Exec(ctx, "apply", "-auto-approve", "-no-color"); code != 0 {
			t.Fatalf("apply exited %d:\n%s", code, out)
		}
		w.Write(fleetSetupHCL(size, 100, "v2", c.extra))
		out, code := w.Exec(ctx, "plan", "-no-color")
		if code != 0 {
			t.Fatalf("plan exited %d:\n%s", code, out)
		}
		lines := strings.Count(out, "\n")
		t.Logf("%q: a re-run of %d members plans in %d lines", c.extra, size, lines)
		if lines > c.maxLines {
			t.Errorf("%q: the plan of a re-run of %d members has %d lines, want at most %d:\n%s", c.extra, size, lines, c.maxLines, out)
		}
		if c.extra != `step_output = "tail"` && strings.Count(out, "Collecting some-package") > 2 { // the commands' diff has 2
			t.Errorf("%q: the plan prints the members' old output:\n%s", c.extra, out)
		}
	}
}

// crashFleetHCL: member "1" of 3 exits with code, the others with 0.
func crashFleetHCL(code, extra string) string {
	return fmt.Sprintf(`
provider "prime" {}
`+acctest.SandboxFleetHCL("eval", "crash", 3)+`
resource "prime_fleet_command" "agent" {
  sandbox_ids = prime_sandbox_fleet.eval.sandbox_ids
  commands    = ["echo agent $PRIME_MEMBER_KEY; exit $CODE"]
  member_env  = { "0" = { CODE = "0" }, "1" = { CODE = %q }, "2" = { CODE = "0" } }
  %s
}
`, code, extra)
}

// failedRerun is a failed member's result planned to be replaced (the
// column width follows the longest attribute name, so it is not fixed).
var failedRerun = regexp.MustCompile(`\bfailed +\= true -> \(known after apply\)`)

// After a member failed, the plan shows that member (and only it) planned
// to run again — it showed only "(12 unchanged attributes hidden)" when a
// failed member was left out of results; with on_member_failure =
// "record" the apply succeeds with one warning naming it.
func TestAccFleetCommandCLI_failedMembersShownInPlan(t *testing.T) {
	cli := acctest.RequireCLI(t)
	provider := acctest.DevProvider(t)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	shownAlone := func(plan string) {
		t.Helper()
		if !strings.Contains(plan, `~ "1" = {`) || !failedRerun.MatchString(plan) ||
			strings.Contains(plan, `~ "0" = {`) || strings.Contains(plan, `~ "2" = {`) {
			t.Errorf("the plan must show member 1, and only it, planned to run again:\n%s", plan)
		}
	}

	m := mocktest.New(t, mocktest.Fast())
	w := acctest.NewMockWork(t, m, provider(), cli, crashFleetHCL("0", ""))
	if out, code := w.Exec(ctx, "apply", "-auto-approve", "-no-color"); code != 0 {
		t.Fatalf("apply exited %d:\n%s", code, out)
	}
	w.Write(crashFleetHCL("3", ""))
	if out, code := w.Exec(ctx, "apply", "-auto-approve", "-no-color"); code != 1 || !strings.Contains(out, "Error: Fleet command failed") {
		t.Fatalf("the update with a failed member must fail (exit %d):\n%s", code, out)
	}
	plan, code := w.Exec(ctx, "plan", "-detailed-exitcode", "-no-color")
	if code != 2 {
		t.Fatalf("plan exited %d:\n%s", code, plan)
	}
	shownAlone(plan)

	m = mocktest.New(t, mocktest.Fast())
	w = acctest.NewMockWork(t, m, provider(), cli, crashFleetHCL("3", `on_member_failure = "record"`))
	out, code := w.Exec(ctx, "apply", "-auto-approve", "-no-color")
	if code != 0 {
		t.Fatalf("with record the apply must succeed (exit %d):\n%s", code, out)
	}
	n := strings.Count(out, "Warning: ") - strings.Count(out, "Warning: Provider development overrides are in effect")
	if n != 1 || !strings.Contains(out, "Warning: Fleet command failed on 1 member") ||
		!strings.Contains(out, `Member "1": sandbox`) {
		t.Errorf("want exactly one warning (besides dev_overrides'), naming member 1; got %d:\n%s", n, out)
	}
	plan, code = w.Exec(ctx, "plan", "-detailed-exitcode", "-no-color")
	if code != 2 {
		t.Fatalf("plan exited %d:\n%s", code, plan)
	}
	shownAlone(plan)
}

// Ctrl-C while a background fleet runs: the running jobs' IDs are in state
// (running_jobs), the progress file in output_dir says which members run,
// and the next apply collects them and clears running_jobs.
func TestAccFleetCommandCLI_interruptedJobsInState(t *testing.T) {
	cli := acctest.RequireCLI(t)
	provider := acctest.DevProvider(t)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	m := mocktest.New(t, mocktest.Fast())
	logs := t.TempDir()
	w := acctest.NewMockWork(t, m, provider(), cli, fmt.Sprintf(`
provider "prime" {}
`+acctest.SandboxFleetHCL("eval", "ctrlc", 2)+`
resource "prime_fleet_command" "agent" {
  sandbox_ids     = prime_sandbox_fleet.eval.sandbox_ids
  commands        = ["echo ctrlc-start; sleep 3; echo ctrlc-end"]
  background      = true
  timeout_seconds = 600
  output_dir      = %q
}
`, logs))
	r := w.Launch("apply", "-auto-approve", "-no-color")
	waitStarts(ctx, t, m, "ctrlc-start", 2)
	acctest.InterruptTF(ctx, t, r)
	state, code := w.Exec(ctx, "state", "show", "-no-color", "prime_fleet_command.agent")
	if code != 0 || !strings.Contains(state, "running_jobs") || strings.Count(state, "job_id") != 2 {
		t.Fatalf("after Ctrl-C both members' jobs must be in state (exit %d):\n%s\n\napply output:\n%s", code, state, r.Output())
	}
	var progress command.ProgressFile
	if b, err := os.ReadFile(filepath.Join(logs, command.ProgressFileName)); err != nil || json.Unmarshal(b, &progress) != nil ||
		progress.Counts[command.ProgressLeft] != 2 || progress.Members["0"].JobID == "" {
		t.Fatalf("the progress file after Ctrl-C: %+v (%v)", progress, err)
	}
	if out, code := w.Exec(ctx, "apply", "-auto-approve", "-no-color"); code != 0 {
		t.Fatalf("the apply collecting the jobs exited %d:\n%s", code, out)
	}
	if n := acctest.CountStarts(m.Events(), "ctrlc-start"); n != 2 {
		t.Errorf("the jobs started %d times for 2 members; collecting must not run them again", n)
	}
	state, _ = w.Exec(ctx, "state", "show", "-no-color", "prime_fleet_command.agent")
	if strings.Contains(state, "job_id") || !strings.Contains(state, `"ctrlc-end"`) {
		t.Errorf("after collecting, running_jobs must be gone and the results in:\n%s", state)
	}
	if b, err := os.ReadFile(filepath.Join(logs, command.ProgressFileName)); err != nil || json.Unmarshal(b, &progress) != nil ||
		progress.Counts[command.ProgressSucceeded] != 2 || !progress.Finished {
		t.Errorf("the progress file after collecting: %+v (%v)", progress, err)
	}
	if out, code := w.Exec(ctx, "plan", "-detailed-exitcode", "-no-color"); code != 0 {
		t.Errorf("the plan after collecting is not empty (exit %d):\n%s", code, out)
	}
}
