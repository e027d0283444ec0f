package command_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// Background jobs after a lost runner: the apply is SIGKILLed while the
// agents run, and the next apply runs on a new machine with the same
// working directory and state but an empty cache directory, so none of the
// local job journal. The claims the start commands left in the sandboxes
// are what it finds: every agent ran exactly once, every result is
// collected, and destroy leaves nothing.
func TestAccBackground_lostRunnerAttachesToEveryJob(t *testing.T) {
	cli := acctest.RequireCLI(t)
	provider := acctest.DevProvider(t)
	t.Parallel()
	m := mocktest.New(t, mocktest.Fast())
	const size = 6
	w := acctest.NewMockWork(t, m, provider(), cli, backgroundFleetHCL(size, "4"))
	lost := w.OnNewRunner()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	r := w.Launch("apply", "-auto-approve", "-no-color")
	waitStarts(ctx, t, m, "agent-start", size)
	acctest.KillTF(r)
	if len(acctest.JournalsIn(t, lost)) == 0 {
		t.Fatal("the lost runner kept no journal: the test would not show that the next apply does without one")
	}
	w.OnNewRunner()
	recoverAfterKill(ctx, t, m, w, size, "agent-start")
}

// Lost after the agents finished, while a later step ran: the agents'
// results may be in no state, and no journal survives. The next apply
// collects the finished agents from their claimed jobs and attaches to the
// running reports: nothing runs twice.
func TestAccBackground_lostRunnerAfterResultsRunsNothingAgain(t *testing.T) {
	cli := acctest.RequireCLI(t)
	provider := acctest.DevProvider(t)
	t.Parallel()
	m := mocktest.New(t, mocktest.Fast())
	const size = 4
	w := acctest.NewMockWork(t, m, provider(), cli, backgroundFleetHCL(size, "1")+acctest.FleetBackgroundCommandHCL("report",
		"{ for k, f in data.prime_fleet_file.result.files : k => prime_fleet_command.agent.results[k].sandbox_id }",
		[]string{"echo report-start; sleep 2; echo report-end"}, "timeout_seconds = 600"))
	w.OnNewRunner()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	r := w.Launch("apply", "-auto-approve", "-no-color")
	waitStarts(ctx, t, m, "report-start", size)
	acctest.KillTF(r)
	w.OnNewRunner()
	recoverAfterKill(ctx, t, m, w, size, "agent-start", "report-start")
}

// Lost while the agents ran, and one member's sandbox is gone by the time
// the next runner applies (deleted out of band): its job went with it.
// The refresh reports the member gone, the fleet creates it again, and the
// agent runs on the new sandbox — the configuration says every member runs
// it — while every other member's job is collected, not started again.
func TestAccBackground_lostRunnerAndLostSandboxRunsOnlyThatMemberAgain(t *testing.T) {
	cli := acctest.RequireCLI(t)
	provider := acctest.DevProvider(t)
	t.Parallel()
	m := mocktest.New(t, mocktest.Fast())
	const size = 3
	w := acctest.NewMockWork(t, m, provider(), cli, backgroundFleetHCL(size, "4"))
	w.OnNewRunner()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	r := w.Launch("apply", "-auto-approve", "-no-color")
	waitStarts(ctx, t, m, "agent-start", size)
	acctest.KillTF(r)
	// Terraform has the fleet in state by now; OpenTofu may not have
	// written it yet when the kill comes, and then the next apply adopts
	// the members from the platform instead of refreshing them from state.
	// Either way the deleted member's agent must run once more, and only it.
	members := w.FleetMembers(ctx, "prime_sandbox_fleet.eval")
	inState := len(members) == size
	if !inState {
		live, err := m.Client(t).ListSandboxes(ctx, prime.ListSandboxesOptions{})
		if err != nil || len(live) != size {
			t.Fatalf("%d members in state and %d sandboxes live (%v) after the kill; want the %d members live", len(members), len(live), err, size)
		}
		t.Logf("the fleet was not in state at the kill (%d members there): the next apply adopts it", len(members))
		members = []string{live[0].ID}
	}
	if err := m.Client(t).DeleteSandbox(ctx, members[0]); err != nil {
		t.Fatal(err)
	}

	w.OnNewRunner()
	out := w.Must(ctx, "apply", "-auto-approve", "-no-color")
	if inState && !strings.Contains(out, "Fleet members are gone") {
		t.Errorf("the apply did not report the member whose sandbox is gone:\n%s", out)
	}
	if n := acctest.CountStarts(m.Events(), "agent-start"); n != size+1 {
		t.Errorf("the agent started %d times; want %d: once per member, and once more on the member created again", n, size+1)
	}
	if plan, code := w.Exec(ctx, "plan", "-detailed-exitcode", "-no-color"); code != 0 {
		t.Errorf("the plan after the recovering apply is not empty (exit %d):\n%s", code, plan)
	}
	w.Must(ctx, "destroy", "-auto-approve", "-no-color")
	if live := m.Stats().LiveSandboxes; live != 0 {
		t.Errorf("%d sandboxes live after destroy", live)
	}
}
