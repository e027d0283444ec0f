package examples_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/checkpoint"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// The eval-fleet module (examples/modules/eval-fleet) is tested twice over:
// its own terraform test files, run here against an in-process mock, and Go
// tests that drive a root configuration using it through steps terraform
// test cannot express (an apply that must fail, a sandbox deleted between
// two applies). Afterwards the mock's event log must show the protocol on
// every sandbox.

// The provider's create runs the gateway probe on every sandbox to see that the
// gateway answers: it is neither setup nor agent, and the checks skip it.

// isAgentCommand: the module tests' and the root configurations' agent
// steps all say "agent"; no setup step does.
func isAgentCommand(cmd string) bool { return strings.Contains(cmd, "agent") }

// providerCommandPrefixes start the commands the provider runs for itself
// (internal/prime: uploads, downloads and background jobs): mkdir, mv,
// tar, chmod and rm around a transfer; the job's start, existence check,
// output tails, signals and exit-code repair; the read of a sandbox's
// secrets (for masking); a result's check against its run's stamp; a
// claimed start; a checkpoint's markers. None is a setup or agent step; a background step
// is its job's process (transport "background").
var providerCommandPrefixes = []string{
	"mkdir -p -- ", "mv -f -- ", "rm -f -- ", "rm -rf -- ", "chmod ", "tar -cf ",
	"nohup setsid sh -c ", "test -e '/tmp/job_", "test -e /tmp/job_", "tail -c ", "kill -", "test -s /tmp/job_", "test -s '/tmp/job_",
	prime.SecretsProbePrefix, "test -e " + prime.RunStampDir + "/",
	"mkdir -p " + prime.RunClaimsDir + "/", "rm -rf " + prime.RunClaimsDir + "/", // a claimed start, retired claims
	"mkdir -p " + checkpoint.MarkersDir + "/", "ls -A " + checkpoint.MarkersDir + "/", "rm -f " + checkpoint.MarkersDir + "/",
}

// isStep reports whether a command event is a setup or agent step: not
// the gateway probe, not one of the provider's own commands.
func isStep(e primemock.Event) bool {
	if e.Command == acctest.GatewayProbe {
		return false
	}
	for _, p := range providerCommandPrefixes {
		if strings.HasPrefix(e.Command, p) {
			return false
		}
	}
	return true
}

// TestAccModule_evalFleet runs the module's own tests
// (examples/modules/eval-fleet/tests/*.tftest.hcl) with `terraform test`
// against an in-process mock, using the provider built from this tree. The
// module is copied to a temporary directory first, so no state, lock or
// .terraform files land in the repository.
//
// Each test file names its fleet with its own name_prefix; the mock's event
// log is then checked per sandbox (checkFleetProtocol) and per file: allow
// mode locks after the setup and relocks in place; born_restricted members
// never have open egress and run nothing but the gateway probe before their
// born lists are enforced; a setup change re-opens egress, runs the new
// setup with the network open, locks again and only then runs the agent
// again. terraform test's clean-up must leave no sandbox running.
func TestAccModule_evalFleet(t *testing.T) {
	cli := acctest.RequireCLI(t)
	provider := acctest.DevProvider(t)
	t.Parallel()
	m := mocktest.New(t, mocktest.Fast())
	rc := provider()

	w := acctest.WorkIn(t, cli, filepath.Join(t.TempDir(), "eval-fleet"), acctest.MockEnv(rc, m))
	acctest.CopyDir(t, filepath.Join(acctest.RepoRoot(t), "examples", "modules", "eval-fleet"), w.Dir)

	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	out, err := w.Try(ctx, "test")
	if err != nil {
		t.Fatalf("terraform test in examples/modules/eval-fleet failed: %v\n%s", err, out)
	}
	t.Logf("terraform test:\n%s", out)
	if !strings.Contains(out, "0 failed") {
		t.Fatalf("terraform test did not report success:\n%s", out)
	}

	stats := m.Stats()
	if stats.SandboxesCreated == 0 {
		t.Fatal("the module tests created no sandboxes; the apply runs did not reach the mock")
	}
	if stats.LiveSandboxes != 0 {
		t.Errorf("%d sandboxes are still live after terraform test cleaned up", stats.LiveSandboxes)
	}
	events := m.Events()
	traces := fleetTraces(events)
	if err := checkFleetProtocol(traces, true); err != nil {
		t.Error(err)
	}

	byPrefix := map[string][]*sandboxTrace{}
	member := map[*sandboxTrace]string{}
	for _, tr := range traces {
		name := acctest.SandboxName(t, m, tr.id)
		prefix, key, _ := strings.Cut(name, "-")
		byPrefix[prefix] = append(byPrefix[prefix], tr)
		member[tr] = key
	}
	// As many sandboxes as members: the updates replaced none.
	// once: the template and its three members, twice (change_setup
	// replaces the template, and so every member).
	// rerun*: each suite's two members, again after its image changed;
	// rerunonce's template and members for every change of the setup, its
	// environment, the task directory and the image.
	want := map[string]int{"allow": 2, "block": 1, "born": 2, "relock": 2, "tasks": 3, "once": 8,
		"rerunpm": 4, "rerunborn": 4, "rerunonce": 15}
	for prefix, n := range want {
		if got := len(byPrefix[prefix]); got != n {
			t.Errorf("%d sandboxes named %s-*, want %d", got, prefix, n)
		}
	}
	for prefix := range byPrefix {
		if _, ok := want[prefix]; !ok {
			t.Errorf("unexpected sandboxes named %s-* (validation.tftest.hcl only plans)", prefix)
		}
	}
	for _, tr := range byPrefix["allow"] {
		// Lock, relock in place (one write, not a restore and a lock), then
		// terraform test's destroy restores open egress.
		if err := tr.wantPuts("restricted", "restricted", "open"); err != nil {
			t.Error(err)
		}
		// The relock runs the agent's three steps again, not the setup.
		if setups, agents := tr.count(); setups != 2 || agents != 6 {
			t.Errorf("sandbox %s: %d setup and %d agent steps ran, want 2 and 6 (the in-place relock runs the agent again, not the setup)", tr.id, setups, agents)
		}
	}
	for _, tr := range byPrefix["block"] {
		if err := tr.wantPuts("restricted", "open"); err != nil {
			t.Error(err)
		}
	}
	for _, tr := range byPrefix["born"] {
		if err := checkBornTrace(tr); err != nil {
			t.Error(err)
		}
		// update_born_lists: one write of the new lists, in place (with the
		// sandbox counts above, the proof that holds whatever the CLI's
		// test runner resolves).
		if err := tr.wantPuts("restricted"); err != nil {
			t.Error(err)
		}
	}
	for _, tr := range byPrefix["relock"] {
		if err := checkSetupChange(tr); err != nil {
			t.Error(err)
		}
	}
	// tasks.tftest.hcl: alpha's own task changed in the second run, the
	// shared task in the third. So every member unpacked the shared task
	// twice and ran its agent once more than its own task changed; gamma has
	// no task of its own and wrote no results.
	runs := map[string]tasksTraceWant{
		"alpha": {sharedUploads: 2, memberUploads: 2, agentStarts: 3, fetches: 3},
		"beta":  {sharedUploads: 2, memberUploads: 1, agentStarts: 2, fetches: 2},
		"gamma": {sharedUploads: 2, memberUploads: 0, agentStarts: 2, fetches: 0},
	}
	for _, tr := range byPrefix["tasks"] {
		if err := checkTasksTrace(tr, runs[member[tr]]); err != nil {
			t.Errorf("tasks-%s: %v", member[tr], err)
		}
		// Lock; the member task change re-locks nothing; the shared task
		// change restores open egress and locks again; the destroy restores.
		if err := tr.wantPuts("restricted", "open", "restricted", "open"); err != nil {
			t.Errorf("tasks-%s: %v", member[tr], err)
		}
	}
	// The first members ran their agent once; the second (restored from the
	// new setup's checkpoint) again after the lists changed.
	if err := checkSetupOnce(byPrefix["once"], member, 2, 1, []int{3, 6}); err != nil {
		t.Error(err)
	}
	templates := map[string]bool{}
	for _, tr := range byPrefix["once"] {
		if member[tr] == "template" {
			templates[tr.id] = true
		}
	}
	if err := checkOnceOrder(events, templates); err != nil {
		t.Error(err)
	}
	// terraform test's destroy deleted every checkpoint (once's, and the
	// one its template's pause took).
	if cks, err := m.Client(t).ListCheckpoints(mocktest.WaitCtx(t), prime.ListCheckpointsOptions{}); err != nil || len(cks) != 0 {
		t.Errorf("%d checkpoints left after terraform test cleaned up (%v)", len(cks), err)
	}
	// The results outlive terraform test's destroy, and alpha's are its
	// second task's.
	for k, want := range map[string]string{"alpha": `"alpha-2"`, "beta": `"beta-1"`} {
		got, err := os.ReadFile(w.Path("test-results", "tasks", k, "results", "reward.json"))
		if err != nil || !strings.Contains(string(got), want) {
			t.Errorf("results of %s on disk: %q (%v), want its task %s", k, got, err, want)
		}
	}
	if _, err := os.Stat(w.Path("test-results", "tasks", "gamma", "results")); !os.IsNotExist(err) {
		t.Errorf("gamma wrote no results, yet something was downloaded for it (%v)", err)
	}
}

// tasksTraceWant is what tasks.tftest.hcl leaves in one member's events.
type tasksTraceWant struct {
	sharedUploads, memberUploads, agentStarts, fetches int
}

// checkTasksTrace follows tasks.tftest.hcl on one member: the shared task
// unpacked want.sharedUploads times, each time before a setup run started (the setup ran
// after every upload of it); its own task, want.memberUploads times, each
// time before an agent run started; the agent started want.agentStarts
// times, never without the shared task or (with a task of its own) its own;
// every reward read and results download after an agent run ended, the
// last read after the last run, and want.fetches downloads.
func checkTasksTrace(tr *sandboxTrace, want tasksTraceWant) error {
	const reward = "/results/reward.json"
	sharedTasks, memberTasks, agentStarts, fetches := 0, 0, 0, 0
	// An upload not yet followed by the run it is for.
	sharedPending, memberPending := false, false
	agentEnded := false
	lastRead, lastAgentEnd := -1, -1
	for i, e := range tr.events {
		unpacked := e.Type == primemock.EventCommandExecuted && e.ExitCode == 0 && strings.Contains(e.Command, "tar -xf ")
		switch {
		case unpacked && strings.Contains(e.Command, " -C /task;"):
			sharedTasks++
			sharedPending = true
		case unpacked && strings.Contains(e.Command, " -C /task/member;"):
			memberTasks++
			memberPending = true
		case e.Type == primemock.EventCommandStarted && isStep(e) && !isAgentCommand(e.Command):
			if sharedTasks == 0 {
				return fmt.Errorf("the setup started before the shared task was in place")
			}
			sharedPending = false
		case e.Type == primemock.EventCommandStarted && e.Transport == primemock.TransportBackground && isAgentCommand(e.Command):
			agentStarts++
			if sharedTasks == 0 || want.memberUploads > 0 && memberTasks == 0 {
				return fmt.Errorf("agent run %d started before its task was in place (%d shared, %d own uploads)", agentStarts, sharedTasks, memberTasks)
			}
			memberPending = false
		case e.Type == primemock.EventCommandExecuted && e.Transport == primemock.TransportBackground && isAgentCommand(e.Command):
			agentEnded, lastAgentEnd = true, i
		case (e.Type == primemock.EventFileDownloaded || e.Type == primemock.EventFileRead) && e.Path == reward:
			if !agentEnded {
				return fmt.Errorf("the reward was read before any agent run ended")
			}
			lastRead = i
		case e.Type == primemock.EventFileDownloaded && strings.HasPrefix(e.Path, "/tmp/.prime-fetch-"):
			fetches++
			if !agentEnded {
				return fmt.Errorf("the results were downloaded before any agent run ended")
			}
		}
	}
	switch {
	case sharedTasks != want.sharedUploads:
		return fmt.Errorf("the shared task was unpacked %d times, want %d", sharedTasks, want.sharedUploads)
	case sharedPending:
		return fmt.Errorf("the setup did not run after the shared task's last upload")
	case memberTasks != want.memberUploads:
		return fmt.Errorf("its own task was unpacked %d times, want %d", memberTasks, want.memberUploads)
	case memberPending:
		return fmt.Errorf("the agent did not run after its own task's last upload")
	case agentStarts != want.agentStarts:
		return fmt.Errorf("the agent started %d times, want %d", agentStarts, want.agentStarts)
	case fetches != want.fetches:
		return fmt.Errorf("the results were downloaded %d times, want %d (once per agent run that wrote them)", fetches, want.fetches)
	case want.fetches > 0 && lastRead < lastAgentEnd:
		return fmt.Errorf("the reward was not read after the last agent run ended")
	}
	return nil
}
