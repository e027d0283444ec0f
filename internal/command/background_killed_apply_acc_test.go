package command_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
	"github.com/primeintellect/terraform-provider-prime/internal/tfcli"
)

// Background jobs against the real CLI: what survives a killed or an
// interrupted Terraform can only be seen with a Terraform that can be
// killed or interrupted.

// waitStarts waits until n background jobs whose script contains text have
// started.
func waitStarts(ctx context.Context, t *testing.T, m *mocktest.Mock, text string, n int) {
	t.Helper()
	seen := 0
	_, err := m.WaitForEvent(ctx, func(e primemock.Event) bool {
		if e.Type == primemock.EventCommandStarted && e.Transport == primemock.TransportBackground && strings.Contains(e.Command, text) {
			seen++
		}
		return seen >= n
	})
	if err != nil {
		t.Fatalf("waiting for %d starts of %q (saw %d): %v", n, text, seen, err)
	}
}

// backgroundFleetHCL is a fleet whose agent is a background job of a few
// seconds that writes a result per member.
func backgroundFleetHCL(size int, sleep string) string {
	return fmt.Sprintf(`
provider "prime" {}

resource "prime_sandbox_fleet" "eval" {
  name_prefix  = "bg"
  size         = %d
  docker_image = "python:3.12-slim"
}

resource "prime_fleet_command" "agent" {
  sandbox_ids     = prime_sandbox_fleet.eval.sandbox_ids
  commands        = ["echo agent-start; sleep %s; echo \"done $PRIME_MEMBER_KEY\" > /tmp/result.txt; echo agent-end"]
  background      = true
  timeout_seconds = 600
}

data "prime_fleet_file" "result" {
  sandbox_ids = { for k, r in prime_fleet_command.agent.results : k => r.sandbox_id }
  path        = "/tmp/result.txt"
}

output "results" {
  value = { for k, f in data.prime_fleet_file.result.files : k => f.content }
}

output "stdout" {
  value = { for k, r in prime_fleet_command.agent.results : k => r.steps[0].stdout }
}
`, size, sleep)
}

// The Done-when of background jobs: a 20-member fleet's agent runs as
// background jobs, Terraform is SIGKILLed mid-run (with its provider) and
// applied again: every member's agent ran exactly once (one start per
// member in the mock's event log) and every result is collected.
func TestAccBackground_killedApplyAttachesToEveryJob(t *testing.T) {
	cli := acctest.RequireCLI(t)
	provider := acctest.DevProvider(t)
	t.Parallel()
	m := mocktest.New(t, mocktest.Fast())
	const size = 20
	w := acctest.NewMockWork(t, m, provider(), cli, backgroundFleetHCL(size, "4"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	r := w.Launch("apply", "-auto-approve", "-no-color")
	waitStarts(ctx, t, m, "agent-start", size)
	acctest.KillTF(r)
	live := m.Stats().LiveSandboxes
	if live != size {
		t.Fatalf("%d sandboxes live after the kill, want %d", live, size)
	}

	recoverAfterKill(ctx, t, m, w, size, "agent-start")
}

// recoverAfterKill applies again after a killed apply of a fleet of size
// and checks what the kill must not have cost: every job whose script
// holds one of texts started exactly once per member, one sandbox was made
// per member, every member's result is collected, the next plan is empty
// and destroy leaves nothing running.
func recoverAfterKill(ctx context.Context, t *testing.T, m *mocktest.Mock, w *acctest.Work, size int, texts ...string) {
	t.Helper()
	out, code := w.Exec(ctx, "apply", "-auto-approve", "-no-color")
	if code != 0 {
		t.Fatalf("the apply after the kill exited %d:\n%s", code, out)
	}
	for _, text := range texts {
		if n := acctest.CountStarts(m.Events(), text); n != size {
			t.Errorf("%q started %d times for %d members; each must run exactly once", text, n, size)
		}
	}
	if n := m.Stats().SandboxesCreated; n != size {
		t.Errorf("%d sandboxes created for %d members", n, size)
	}
	results, code := w.Exec(ctx, "output", "-json", "results")
	if code != 0 {
		t.Fatalf("output: %s", results)
	}
	var got map[string]string
	if err := json.Unmarshal([]byte(results), &got); err != nil {
		t.Fatalf("output results: %v\n%s", err, results)
	}
	for i := range size {
		if v := got[fmt.Sprint(i)]; v != fmt.Sprintf("done %d\n", i) {
			t.Errorf("member %d's result is %q", i, v)
		}
	}
	if out, code := w.Exec(ctx, "plan", "-detailed-exitcode", "-no-color"); code != 0 {
		t.Errorf("the plan after the recovering apply is not empty (exit %d):\n%s", code, out)
	}
	if out, code := w.Exec(ctx, "destroy", "-auto-approve", "-no-color"); code != 0 {
		t.Errorf("destroy exited %d:\n%s", code, out)
	}
	if live := m.Stats().LiveSandboxes; live != 0 {
		t.Errorf("%d sandboxes live after destroy", live)
	}
}

// Killed after the agent finished: Create had returned every result, but
// Terraform stores state on its own schedule (OpenTofu's local backend and
// every remote backend at most every 20 s), so the state may hold neither
// the fleet nor the results. The next apply adopts the same sandboxes and
// takes the recorded results: no sandbox is created twice, no agent runs
// twice, and nothing is left untracked. The kill comes while a later step
// runs (a kill while Terraform writes its state file can corrupt it, which
// is Terraform's to survive, not the provider's).
func TestAccBackground_killedAfterResultsRunsNothingAgain(t *testing.T) {
	cli := acctest.RequireCLI(t)
	provider := acctest.DevProvider(t)
	t.Parallel()
	m := mocktest.New(t, mocktest.Fast())
	const size = 8
	w := acctest.NewMockWork(t, m, provider(), cli, backgroundFleetHCL(size, "1")+acctest.FleetBackgroundCommandHCL("report", "{ for k, f in data.prime_fleet_file.result.files : k => prime_fleet_command.agent.results[k].sandbox_id }", []string{"echo report-start; sleep 2; echo report-end"}, "timeout_seconds = 600"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	r := w.Launch("apply", "-auto-approve", "-no-color")
	waitStarts(ctx, t, m, "report-start", size)
	acctest.KillTF(r)
	recoverAfterKill(ctx, t, m, w, size, "agent-start", "report-start")
}

// Ctrl-C mid-run: Terraform stops, the job goes on and is in state; the
// next plan shows an update that collects it, the next apply collects it
// without running the command again; a second interrupted run whose job is
// then destroyed has its job stopped.
func TestAccBackground_interruptedApplyCollectsLater(t *testing.T) {
	cli := acctest.RequireCLI(t)
	provider := acctest.DevProvider(t)
	t.Parallel()
	m := mocktest.New(t, mocktest.Fast())
	hcl := func(cmd string) string {
		return fmt.Sprintf(`
provider "prime" {}
`+acctest.SandboxHCL("box", "interrupted")+`
resource "prime_sandbox_command" "agent" {
  sandbox_id      = prime_sandbox.box.id
  command         = %q
  background      = true
  timeout_seconds = 600
}

output "exit_code" { value = prime_sandbox_command.agent.exit_code }
output "stdout" { value = prime_sandbox_command.agent.stdout }
`, cmd)
	}
	w := acctest.NewMockWork(t, m, provider(), cli, hcl("echo one-start; sleep 3; echo one-end"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	r := w.Launch("apply", "-auto-approve", "-no-color")
	waitStarts(ctx, t, m, "one-start", 1)
	acctest.InterruptTF(ctx, t, r)
	state, code := w.Exec(ctx, "state", "show", "-no-color", "prime_sandbox_command.agent")
	if code != 0 || !strings.Contains(state, `job_status`) || !strings.Contains(state, `"running"`) {
		t.Fatalf("after Ctrl-C the job must be in state as running (exit %d):\n%s\n\napply output:\n%s", code, state, r.Output())
	}
	plan, code := w.Exec(ctx, "plan", "-detailed-exitcode", "-no-color")
	if code != 2 || !strings.Contains(plan, "update in-place") {
		t.Fatalf("the plan after Ctrl-C must be an update that collects the job (exit %d):\n%s", code, plan)
	}
	out, code := w.Exec(ctx, "apply", "-auto-approve", "-no-color")
	if code != 0 {
		t.Fatalf("the apply collecting the job exited %d:\n%s", code, out)
	}
	if n := acctest.CountStarts(m.Events(), "one-start"); n != 1 {
		t.Errorf("the command started %d times; collecting must not run it again", n)
	}
	if got, _ := w.Exec(ctx, "output", "-raw", "stdout"); got != "one-start\none-end\n" {
		t.Errorf("collected stdout %q", got)
	}
	if out, code := w.Exec(ctx, "plan", "-detailed-exitcode", "-no-color"); code != 0 {
		t.Errorf("the plan after collecting is not empty (exit %d):\n%s", code, out)
	}

	// A new run (the command changed), interrupted, then destroyed: its
	// job is stopped, not left running.
	w.Write(hcl("echo two-start; sleep 1000000; echo two-end"))
	r = w.Launch("apply", "-auto-approve", "-no-color")
	waitStarts(ctx, t, m, "two-start", 1)
	acctest.InterruptTF(ctx, t, r)
	if out, code := w.Exec(ctx, "destroy", "-auto-approve", "-no-color"); code != 0 {
		t.Fatalf("destroy exited %d:\n%s", code, out)
	}
	signalled := false
	for _, e := range m.Events() {
		if e.Type == primemock.EventCommandSignalled && strings.Contains(e.Command, "two-start") {
			signalled = true
		}
	}
	if !signalled {
		t.Error("destroying a running background command did not stop its job")
	}
	if live := m.Stats().LiveSandboxes; live != 0 {
		t.Errorf("%d sandboxes live after destroy", live)
	}
}

// killProvider kills the provider plugin processes of a running Terraform
// (a provider crash), leaving Terraform itself alive.
func killProvider(r *tfcli.Running) int {
	killed := 0
	for _, p := range tfcli.Descendants(r.Cmd.Process.Pid) {
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
		if err == nil && strings.Contains(string(cmdline), "terraform-provider-prime") {
			if proc, err := os.FindProcess(p); err == nil && proc.Kill() == nil {
				killed++
			}
		}
	}
	return killed
}

const singleJobHCL = `
provider "prime" {}

resource "prime_sandbox" "box" {
  name         = %q
  docker_image = "python:3.12-slim"
}

resource "prime_sandbox_command" "agent" {
  sandbox_id      = prime_sandbox.box.id
  command         = %q
  background      = true
  timeout_seconds = 600
}
`

// A provider that crashes mid-run (Terraform itself survives and fails the
// apply) leaves the job running; the next apply attaches to it through the
// job journal and collects it.
func TestAccBackground_providerCrashAttaches(t *testing.T) {
	cli := acctest.RequireCLI(t)
	provider := acctest.DevProvider(t)
	t.Parallel()
	m := mocktest.New(t, mocktest.Fast())
	w := acctest.NewMockWork(t, m, provider(), cli, fmt.Sprintf(singleJobHCL, "crash", "echo crash-start; sleep 3; echo crash-end"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	r := w.Launch("apply", "-auto-approve", "-no-color")
	waitStarts(ctx, t, m, "crash-start", 1)
	if n := killProvider(r); n == 0 {
		t.Fatal("no provider process to kill")
	}
	if res := r.Wait(); res.OK() {
		t.Fatalf("the apply whose provider crashed succeeded:\n%s", r.Output())
	}
	out, code := w.Exec(ctx, "apply", "-auto-approve", "-no-color")
	if code != 0 {
		t.Fatalf("the apply after the crash exited %d:\n%s", code, out)
	}
	if n := acctest.CountStarts(m.Events(), "crash-start"); n != 1 {
		t.Errorf("the command started %d times; the apply after a crash must attach, not run it again", n)
	}
	if got := w.StateAttr(ctx, "prime_sandbox_command.agent", "stdout"); got != "crash-start\ncrash-end\n" {
		t.Errorf("collected stdout %q", got)
	}
	if out, code := w.Exec(ctx, "destroy", "-auto-approve", "-no-color"); code != 0 {
		t.Errorf("destroy exited %d:\n%s", code, out)
	}
}

// A recorded job is run again only when it is proven gone: here its
// files vanished from a sandbox that still exists (its /tmp was cleared);
// and when its sandbox is replaced.
func TestAccBackground_provenGoneRunsAgain(t *testing.T) {
	cli := acctest.RequireCLI(t)
	provider := acctest.DevProvider(t)
	t.Parallel()
	m := mocktest.New(t, mocktest.Fast())
	w := acctest.NewMockWork(t, m, provider(), cli, fmt.Sprintf(singleJobHCL, "gone", "echo gone-start; sleep 1000000"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	r := w.Launch("apply", "-auto-approve", "-no-color")
	waitStarts(ctx, t, m, "gone-start", 1)
	acctest.InterruptTF(ctx, t, r)
	job := w.StateAttr(ctx, "prime_sandbox_command.agent", "job_id")
	sb := w.StateAttr(ctx, "prime_sandbox.box", "id")
	if job == "" || sb == "" {
		t.Fatalf("no job (%q) or sandbox (%q) in state after Ctrl-C:\n%s", job, sb, r.Output())
	}
	// The sandbox "restarts": the job dies and /tmp is cleared.
	pgid, _ := m.ReadFile(sb, "/tmp/job_"+job+".pgid")
	wipe := fmt.Sprintf("kill -KILL -- -%s; rm -f /tmp/job_%[2]s.pgid /tmp/job_%[2]s.stdout.log /tmp/job_%[2]s.stderr.log /tmp/job_%[2]s.exit",
		strings.TrimSpace(string(pgid)), job)
	if res, err := m.Client(t).Exec(ctx, sb, prime.ExecRequest{Command: wipe}); err != nil || res.ExitCode != 0 {
		t.Fatalf("clearing the job: %v %+v", err, res)
	}
	w.Write(fmt.Sprintf(singleJobHCL, "gone", "echo gone-start; sleep 1000000"))
	r = w.Launch("apply", "-auto-approve", "-no-color")
	waitStarts(ctx, t, m, "gone-start", 2)
	acctest.InterruptTF(ctx, t, r)
	if !strings.Contains(r.Output(), "proven gone") {
		t.Errorf("the apply did not say the job was proven gone:\n%s", r.Output())
	}
	// The sandbox is replaced: the command runs again on the new one.
	w.Write(fmt.Sprintf(singleJobHCL, "gone-replaced", "echo gone-start; sleep 1000000"))
	r = w.Launch("apply", "-auto-approve", "-no-color")
	waitStarts(ctx, t, m, "gone-start", 3)
	acctest.InterruptTF(ctx, t, r)
	if n := acctest.CountStarts(m.Events(), "gone-start"); n != 3 {
		t.Errorf("the command started %d times, want 3 (first run, files gone, sandbox replaced)", n)
	}
	if out, code := w.Exec(ctx, "destroy", "-auto-approve", "-no-color"); code != 0 {
		t.Errorf("destroy exited %d:\n%s", code, out)
	}
	if live := m.Stats().LiveSandboxes; live != 0 {
		t.Errorf("%d sandboxes live after destroy", live)
	}
}
