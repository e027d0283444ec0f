package provider

import (
	"context"
	"strings"
	"testing"
	"time"
)

// Background jobs after a lost runner: the apply is SIGKILLed while the
// agents run, and the next apply runs on a new machine with the same
// working directory and state but an empty cache directory, so none of the
// local job journal. The claims the start commands left in the sandboxes
// are what it finds: every agent ran exactly once, every result is
// collected, and destroy leaves nothing.
func TestAccBackground_lostRunnerAttachesToEveryJob(t *testing.T) {
	cli := requireCLI(t)
	provider := devProvider(t)
	t.Parallel()
	m := newTestMock(t, fastMockOptions())
	const size = 6
	w := newMockWork(t, m, provider(), cli, backgroundFleetHCL(size, "4"))
	lost := w.onNewRunner()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	r := w.start("apply", "-auto-approve", "-no-color")
	waitStarts(ctx, t, m, "agent-start", size)
	killTF(r)
	if len(journalsIn(t, lost)) == 0 {
		t.Fatal("the lost runner kept no journal: the test would not show that the next apply does without one")
	}
	w.onNewRunner()
	recoverAfterKill(ctx, t, m, w, size, "agent-start")
}

// Lost after the agents finished, while a later step ran: the agents'
// results may be in no state, and no journal survives. The next apply
// collects the finished agents from their claimed jobs and attaches to the
// running reports: nothing runs twice.
func TestAccBackground_lostRunnerAfterResultsRunsNothingAgain(t *testing.T) {
	cli := requireCLI(t)
	provider := devProvider(t)
	t.Parallel()
	m := newTestMock(t, fastMockOptions())
	const size = 4
	w := newMockWork(t, m, provider(), cli, backgroundFleetHCL(size, "1")+fleetBackgroundCommandHCL("report",
		"{ for k, f in data.prime_fleet_file.result.files : k => prime_fleet_command.agent.results[k].sandbox_id }",
		[]string{"echo report-start; sleep 2; echo report-end"}, "timeout_seconds = 600"))
	w.onNewRunner()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	r := w.start("apply", "-auto-approve", "-no-color")
	waitStarts(ctx, t, m, "report-start", size)
	killTF(r)
	w.onNewRunner()
	recoverAfterKill(ctx, t, m, w, size, "agent-start", "report-start")
}

// Lost while the agents ran, and one member's sandbox is gone by the time
// the next runner applies (deleted out of band): its job went with it.
// The refresh reports the member gone, the fleet creates it again, and the
// agent runs on the new sandbox — the configuration says every member runs
// it — while every other member's job is collected, not started again.
func TestAccBackground_lostRunnerAndLostSandboxRunsOnlyThatMemberAgain(t *testing.T) {
	cli := requireCLI(t)
	provider := devProvider(t)
	t.Parallel()
	m := newTestMock(t, fastMockOptions())
	const size = 3
	w := newMockWork(t, m, provider(), cli, backgroundFleetHCL(size, "4"))
	w.onNewRunner()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	r := w.start("apply", "-auto-approve", "-no-color")
	waitStarts(ctx, t, m, "agent-start", size)
	killTF(r)
	gone := stateFleetMembers(ctx, t, w, "prime_sandbox_fleet.eval")
	if len(gone) != size {
		t.Fatalf("the fleet is not in state after the kill (%d members): the test needs it there", len(gone))
	}
	if err := m.client(t).DeleteSandbox(ctx, gone[0]); err != nil {
		t.Fatal(err)
	}

	w.onNewRunner()
	out := w.must(ctx, "apply", "-auto-approve", "-no-color")
	if !strings.Contains(out, "Fleet members are gone") {
		t.Errorf("the apply did not report the member whose sandbox is gone:\n%s", out)
	}
	if n := countStarts(m.Events(), "agent-start"); n != size+1 {
		t.Errorf("the agent started %d times; want %d: once per member, and once more on the member created again", n, size+1)
	}
	if plan, code := w.run(ctx, "plan", "-detailed-exitcode", "-no-color"); code != 0 {
		t.Errorf("the plan after the recovering apply is not empty (exit %d):\n%s", code, plan)
	}
	w.must(ctx, "destroy", "-auto-approve", "-no-color")
	if live := m.Stats().LiveSandboxes; live != 0 {
		t.Errorf("%d sandboxes live after destroy", live)
	}
}
