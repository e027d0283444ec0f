package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// The eval-fleet module (examples/modules/eval-fleet) is tested twice over:
// its own terraform test files, run here against an in-process mock, and Go
// tests that drive a root configuration using it through steps terraform
// test cannot express (an apply that must fail, a sandbox deleted between
// two applies). Afterwards the mock's event log must show the protocol on
// every sandbox.

// The provider's create runs gatewayProbe on every sandbox to see that the
// gateway answers: it is neither setup nor agent, and the checks skip it.

// isAgentCommand: the module tests' and the root configurations' agent
// steps all say "agent"; no setup step does.
func isAgentCommand(cmd string) bool { return strings.Contains(cmd, "agent") }

// providerCommandPrefixes start the commands the provider runs for itself
// (internal/prime: uploads, downloads and background jobs): mkdir, mv,
// tar, chmod and rm around a transfer; the job's start, existence check,
// output tails, signals and exit-code repair; the read of a sandbox's
// secrets (for masking). None is a setup or agent step; a background step
// is its job's process (transport "background").
var providerCommandPrefixes = []string{
	"mkdir -p -- ", "mv -f -- ", "rm -f -- ", "rm -rf -- ", "chmod ", "tar -cf ",
	"nohup setsid sh -c ", "test -e '/tmp/job_", "test -e /tmp/job_", "tail -c ", "kill -", "test -s /tmp/job_", "test -s '/tmp/job_",
	prime.SecretsProbePrefix,
}

// isStep reports whether a command event is a setup or agent step: not
// the gateway probe, not one of the provider's own commands.
func isStep(e primemock.Event) bool {
	if e.Command == gatewayProbe {
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
	cli := requireCLI(t)
	provider := devProvider(t)
	t.Parallel()
	m := newTestMock(t, fastMockOptions())
	rc := provider()

	work := filepath.Join(t.TempDir(), "eval-fleet")
	copyDir(t, filepath.Join(repoRoot(t), "examples", "modules", "eval-fleet"), work)

	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	env := tfEnv(rc, "PRIME_API_BASE_URL="+m.URL, "PRIME_API_KEY="+fastMockOptions().APIKey)
	out, err := runTF(ctx, t, cli, work, env, "test", "-no-color")
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
		name := sandboxName(t, m, tr.id)
		prefix, key, _ := strings.Cut(name, "-")
		byPrefix[prefix] = append(byPrefix[prefix], tr)
		member[tr] = key
	}
	// As many sandboxes as members: the updates replaced none.
	// once: the template and its three members, twice (change_setup
	// replaces the template, and so every member).
	want := map[string]int{"allow": 2, "block": 1, "born": 2, "relock": 2, "tasks": 3, "once": 8}
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
	if err := checkSetupOnce(byPrefix["once"], member, 2, 1, 3); err != nil {
		t.Error(err)
	}
	// terraform test's destroy deleted every checkpoint (once's, and the
	// one its template's pause took).
	if cks, err := m.client(t).ListCheckpoints(waitCtx(t), prime.ListCheckpointsOptions{}); err != nil || len(cks) != 0 {
		t.Errorf("%d checkpoints left after terraform test cleaned up (%v)", len(cks), err)
	}
	// The results outlive terraform test's destroy, and alpha's are its
	// second task's.
	for k, want := range map[string]string{"alpha": `"alpha-2"`, "beta": `"beta-1"`} {
		got, err := os.ReadFile(filepath.Join(work, "test-results", "tasks", k, "reward.json"))
		if err != nil || !strings.Contains(string(got), want) {
			t.Errorf("results of %s on disk: %q (%v), want its task %s", k, got, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(work, "test-results", "tasks", "gamma")); !os.IsNotExist(err) {
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

// sandboxName reads a sandbox's name from the mock (deleted sandboxes stay
// readable until a reset).
func sandboxName(t *testing.T, m *testMock, id string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sb, err := m.client(t).GetSandbox(ctx, id)
	if err != nil {
		t.Fatalf("reading sandbox %s: %v", id, err)
	}
	return sb.Name
}

// sandboxTrace is one sandbox's part of the mock's event log.
type sandboxTrace struct {
	id string
	// born is the create-time policy; nil for a sandbox born open.
	born *prime.EgressPolicy
	// puts are the accepted policy writes by generation (generation 0 is
	// the create-time policy, or open).
	puts   map[int64]prime.EgressPolicy
	events []primemock.Event
}

// fleetTraces splits the event log by sandbox, in creation order.
func fleetTraces(events []primemock.Event) []*sandboxTrace {
	byID := map[string]*sandboxTrace{}
	var order []*sandboxTrace
	for _, e := range events {
		if e.SandboxID == "" {
			continue
		}
		tr := byID[e.SandboxID]
		if tr == nil {
			tr = &sandboxTrace{id: e.SandboxID, puts: map[int64]prime.EgressPolicy{}}
			byID[e.SandboxID] = tr
			order = append(order, tr)
		}
		switch e.Type {
		case primemock.EventSandboxCreated:
			tr.born = e.Policy
		case primemock.EventPolicyPut:
			if e.Policy != nil {
				tr.puts[e.Generation] = *e.Policy
			}
		}
		tr.events = append(tr.events, e)
	}
	return order
}

// policyAt is the policy of a generation: 0 is what the sandbox was born
// with (open without create-time lists); -1 (nothing enforced yet) is nil.
func (tr *sandboxTrace) policyAt(gen int64) *prime.EgressPolicy {
	switch {
	case gen < 0:
		return nil
	case gen == 0:
		if tr.born != nil {
			return tr.born
		}
		open := prime.OpenEgressPolicy()
		return &open
	}
	p, ok := tr.puts[gen]
	if !ok {
		return nil
	}
	return &p
}

func restrictsEgress(p *prime.EgressPolicy) bool { return p != nil && !p.IsOpen() }

// count returns how many setup and agent steps finished on the sandbox.
func (tr *sandboxTrace) count() (setups, agents int) {
	for _, e := range tr.events {
		if e.Type != primemock.EventCommandExecuted || !isStep(e) {
			continue
		}
		if isAgentCommand(e.Command) {
			agents++
		} else {
			setups++
		}
	}
	return setups, agents
}

// wantPuts checks the kinds of the sandbox's policy writes, in order.
func (tr *sandboxTrace) wantPuts(kinds ...string) error {
	var got []string
	for _, e := range tr.events {
		if e.Type == primemock.EventPolicyPut {
			kind := "open"
			if restrictsEgress(e.Policy) {
				kind = "restricted"
			}
			got = append(got, kind)
		}
	}
	if !slices.Equal(got, kinds) {
		return fmt.Errorf("sandbox %s: policy writes %v, want %v", tr.id, got, kinds)
	}
	return nil
}

// checkFleetProtocol checks, per sandbox, every setup and agent step (not
// the gateway probe, not the provider's own commands: isStep) at the moment
// it started:
//
//   - a setup step on a sandbox born open runs with an open policy both
//     enforced and desired (no lock written yet, none pending), or on an
//     untouched VM (nothing written or applied yet);
//   - a setup step on a born-restricted sandbox runs with its lists
//     enforced;
//   - an agent step runs with a restriction enforced, and the latest write
//     is the one enforced.
//
// With allApplied, every restricted write must also have been enforced. It
// fails when no setup or no agent step was seen at all, so that it cannot
// pass on a log without the commands it is about.
func checkFleetProtocol(traces []*sandboxTrace, allApplied bool) error {
	var problems []string
	setups, agents := 0, 0
	for _, tr := range traces {
		desired := int64(0)
		applied := map[int64]bool{}
		for _, e := range tr.events {
			switch e.Type {
			case primemock.EventPolicyPut:
				desired = e.Generation
			case primemock.EventPolicyApplied:
				applied[e.Generation] = true
			case primemock.EventCommandStarted:
				if !isStep(e) {
					continue
				}
				enforced := tr.policyAt(e.AppliedGeneration)
				switch {
				case isAgentCommand(e.Command):
					agents++
					if !restrictsEgress(enforced) || e.AppliedGeneration != desired {
						problems = append(problems, fmt.Sprintf("sandbox %s: agent step %q started with generation %d enforced (%s), %d desired",
							tr.id, e.Command, e.AppliedGeneration, describeEvPolicy(enforced), desired))
					}
				case tr.born != nil:
					setups++
					if !restrictsEgress(enforced) {
						problems = append(problems, fmt.Sprintf("sandbox %s: setup step %q started before its born lists were enforced (generation %d)",
							tr.id, e.Command, e.AppliedGeneration))
					}
				default:
					setups++
					// An untouched VM (nothing written, nothing applied: the
					// SDK fixture's applied_generation -1) is open.
					untouched := e.AppliedGeneration < 0 && desired == 0
					if (enforced == nil && !untouched) || restrictsEgress(enforced) || restrictsEgress(tr.policyAt(desired)) {
						problems = append(problems, fmt.Sprintf("sandbox %s: setup step %q started with generation %d enforced (%s) and %d desired (%s); want open egress",
							tr.id, e.Command, e.AppliedGeneration, describeEvPolicy(enforced), desired, describeEvPolicy(tr.policyAt(desired))))
					}
				}
			}
		}
		if allApplied {
			for gen, p := range tr.puts {
				if restrictsEgress(&p) && !applied[gen] {
					problems = append(problems, fmt.Sprintf("sandbox %s: policy generation %d was written but never enforced", tr.id, gen))
				}
			}
		}
	}
	if setups == 0 || agents == 0 {
		problems = append(problems, fmt.Sprintf("%d setup and %d agent steps in the event log; the checks need both", setups, agents))
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return fmt.Errorf("protocol violated:\n%s", strings.Join(problems, "\n"))
	}
	return nil
}

func describeEvPolicy(p *prime.EgressPolicy) string {
	if p == nil {
		return "none"
	}
	b, _ := json.Marshal(p)
	return string(b)
}

// checkBornTrace: the sandbox was created with restricted lists, never got an
// open policy, and ran nothing but the gateway probe before its born lists
// (generation 0) were enforced.
func checkBornTrace(tr *sandboxTrace) error {
	if !restrictsEgress(tr.born) {
		return fmt.Errorf("sandbox %s: not born restricted (create-time policy %s)", tr.id, describeEvPolicy(tr.born))
	}
	for gen, p := range tr.puts {
		if !restrictsEgress(&p) {
			return fmt.Errorf("sandbox %s: born restricted, yet got an open policy (generation %d)", tr.id, gen)
		}
	}
	enforced := false
	commands := 0
	for _, e := range tr.events {
		switch {
		case e.Type == primemock.EventPolicyApplied && e.Generation == 0:
			enforced = true
		case e.Type == primemock.EventCommandStarted && e.Command != gatewayProbe:
			commands++
			if !enforced {
				return fmt.Errorf("sandbox %s: %q started before the born lists were enforced", tr.id, e.Command)
			}
		}
	}
	if commands == 0 {
		return fmt.Errorf("sandbox %s: no setup or agent command ran", tr.id)
	}
	return nil
}

// checkSetupChange follows setup_change.tftest.hcl on one sandbox: setup v1
// (open) → lock enforced → agent → open egress restored and enforced →
// setup v2 (open) → lock enforced again → agent again, in that order, and
// terraform test's destroy restores open egress at the end.
func checkSetupChange(tr *sandboxTrace) error {
	if err := tr.wantPuts("restricted", "open", "restricted", "open"); err != nil {
		return err
	}
	// The writes' generations, in order: lock, restore, lock again, and the
	// destroy's restore.
	var gens []int64
	for _, e := range tr.events {
		if e.Type == primemock.EventPolicyPut {
			gens = append(gens, e.Generation)
		}
	}
	gen := map[string]int64{"lock1": gens[0], "reopen": gens[1], "lock2": gens[2]}
	// The milestones, as they must appear.
	steps := []struct {
		name  string
		match func(e primemock.Event) bool
	}{
		{"setup v1", func(e primemock.Event) bool {
			return e.Type == primemock.EventCommandExecuted && strings.HasPrefix(e.Command, "echo installing v1")
		}},
		{"lock enforced", func(e primemock.Event) bool {
			return e.Type == primemock.EventPolicyApplied && e.Generation == gen["lock1"]
		}},
		{"agent", func(e primemock.Event) bool {
			return e.Type == primemock.EventCommandStarted && isAgentCommand(e.Command)
		}},
		{"open egress restored and enforced", func(e primemock.Event) bool {
			return e.Type == primemock.EventPolicyApplied && e.Generation == gen["reopen"]
		}},
		{"setup v2", func(e primemock.Event) bool {
			return e.Type == primemock.EventCommandStarted && strings.HasPrefix(e.Command, "echo installing v2")
		}},
		{"setup v2 step 2", func(e primemock.Event) bool {
			return e.Type == primemock.EventCommandExecuted && e.Command == "echo second step"
		}},
		{"lock enforced again", func(e primemock.Event) bool {
			return e.Type == primemock.EventPolicyApplied && e.Generation == gen["lock2"]
		}},
		{"agent again", func(e primemock.Event) bool {
			return e.Type == primemock.EventCommandStarted && isAgentCommand(e.Command)
		}},
	}
	next := 0
	for _, e := range tr.events {
		if next < len(steps) && steps[next].match(e) {
			next++
		}
	}
	if next < len(steps) {
		return fmt.Errorf("sandbox %s: the setup change did not run in order: found %d milestones, then no %q (write generations %v)",
			tr.id, next, steps[next].name, gen)
	}
	if setups, agents := tr.count(); setups != 3 || agents != 4 {
		return fmt.Errorf("sandbox %s: %d setup and %d agent steps ran, want 3 (v1, then v2's two) and 4 (two steps, twice)", tr.id, setups, agents)
	}
	return nil
}

// evalFleetRootHCL uses the module the way its README does, with the agent
// in the module. policy_timeout is short for the fail-closed test.
const evalFleetRootHCL = `
terraform {
  required_providers {
    prime = {
      source  = "primeintellect/prime"
      version = ">= 0.1.0"
    }
  }
}

provider "prime" {}

variable "members" {
  type    = set(string)
  default = ["one", "two"]
}

module "fleet" {
  source = "./modules/eval-fleet"

  name_prefix    = "root"
  members        = var.members
  image          = "python:3.12-slim"
  setup_commands = ["echo setup && probe pypi.org"]
  allow          = ["example.com"]
  routes         = ["https://intercept.example.net/v1"]
  policy_timeout = "2s"
  task_dir       = "${path.module}/task"
  member_tasks   = { for k in var.members : k => { content = "task ${k}" } }
  agent = {
    commands = [
      "echo agent && mkdir -p /results && cat /task/member > /results/task.txt && echo '{\"reward\": 1}' > /results/reward.json && probe example.com",
      "echo agent pypi && probe pypi.org",
    ]
    allowed_exit_codes = [0, 7]
  }
  results_path      = "/results"
  results_local_dir = "${abspath(path.root)}/results"
  reward_file       = "/results/reward.json"
}

output "sandbox_ids" {
  value = module.fleet.sandbox_ids
}

output "ready_sandbox_ids" {
  value = module.fleet.ready_sandbox_ids
}

output "agent_exit_codes" {
  value = module.fleet.agent_exit_codes
}

output "rewards" {
  value = module.fleet.rewards
}

output "results_local_paths" {
  value = module.fleet.results_local_paths
}
`

// rootWorkspace lays out a root module using eval-fleet in a temporary
// directory, installs the module (`terraform get`: the provider comes from
// dev_overrides) and destroys everything at the end, checking that no
// sandbox is left running.
//
// It also starts the test's mock with o and runs the test in parallel; ctx
// bounds the test's own terraform runs.
func rootWorkspace(t *testing.T, o primemock.Options) (m *testMock, run func(ctx context.Context, args ...string) (string, error), ctx context.Context) {
	t.Helper()
	cli := requireCLI(t)
	provider := devProvider(t)
	t.Parallel()
	m = newTestMock(t, o)
	rc := provider()
	work := t.TempDir()
	copyDir(t, filepath.Join(repoRoot(t), "examples", "modules", "eval-fleet"), filepath.Join(work, "modules", "eval-fleet"))
	if err := os.WriteFile(filepath.Join(work, "main.tf"), []byte(evalFleetRootHCL), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(work, "task"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "task", "prompt.txt"), []byte("the shared task\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := tfEnv(rc, "PRIME_API_BASE_URL="+m.URL, "PRIME_API_KEY="+fastMockOptions().APIKey)
	run = func(ctx context.Context, args ...string) (string, error) {
		t.Helper()
		// Flags go before the arguments: -no-color right after the command,
		// which `state` and `untaint` do not take.
		if args[0] != "state" && args[0] != "untaint" {
			args = append([]string{args[0], "-no-color"}, args[1:]...)
		}
		return runTF(ctx, t, cli, work, env, args...)
	}
	getCtx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if out, err := run(getCtx, "get"); err != nil {
		t.Fatalf("terraform get: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if out, err := run(ctx, "destroy", "-auto-approve", "-input=false"); err != nil {
			t.Errorf("terraform destroy: %v\n%s", err, out)
		}
		if live := m.Stats().LiveSandboxes; live != 0 {
			t.Errorf("%d sandboxes are still live after destroy", live)
		}
	})
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	return m, run, ctx
}

// outputMap reads a map(string) output of the root module.
func outputMap(ctx context.Context, t *testing.T, run func(context.Context, ...string) (string, error), name string) map[string]string {
	t.Helper()
	out, err := run(ctx, "output", "-json", name)
	if err != nil {
		t.Fatalf("terraform output %s: %v\n%s", name, err, out)
	}
	var v map[string]string
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("terraform output %s: %v\n%s", name, err, out)
	}
	return v
}

// fleetStateIDs reads module.fleet.prime_sandbox_fleet.this's sandbox_ids
// from the state.
func fleetStateIDs(ctx context.Context, t *testing.T, run func(context.Context, ...string) (string, error)) map[string]string {
	t.Helper()
	out, err := run(ctx, "show", "-json")
	if err != nil {
		t.Fatalf("terraform show: %v\n%s", err, out)
	}
	var state struct {
		Values struct {
			RootModule struct {
				ChildModules []struct {
					Resources []struct {
						Address string `json:"address"`
						Values  struct {
							SandboxIDs map[string]string `json:"sandbox_ids"`
						} `json:"values"`
					} `json:"resources"`
				} `json:"child_modules"`
			} `json:"root_module"`
		} `json:"values"`
	}
	if err := json.Unmarshal([]byte(out), &state); err != nil {
		t.Fatalf("state JSON: %v\n%s", err, out)
	}
	for _, mod := range state.Values.RootModule.ChildModules {
		for _, r := range mod.Resources {
			if r.Address == "module.fleet.prime_sandbox_fleet.this" {
				return r.Values.SandboxIDs
			}
		}
	}
	t.Fatalf("no module.fleet.prime_sandbox_fleet.this in state:\n%s", out)
	return nil
}

// stateAddrs lists the resource addresses in state.
func stateAddrs(ctx context.Context, t *testing.T, run func(context.Context, ...string) (string, error)) []string {
	t.Helper()
	out, err := run(ctx, "state", "list")
	if err != nil {
		t.Fatalf("terraform state list: %v\n%s", err, out)
	}
	return strings.Fields(out)
}

// TestAccModule_evalFleetFailsClosed applies the module, with its agent,
// against a data plane that never enforces a policy: the apply must fail
// closed, and no agent step may ever run.
func TestAccModule_evalFleetFailsClosed(t *testing.T) {
	o := fastMockOptions()
	o.NeverApply = true
	m, run, ctx := rootWorkspace(t, o)

	out, err := run(ctx, "apply", "-auto-approve", "-input=false")
	if err == nil {
		t.Fatalf("the apply succeeded although no policy was ever enforced:\n%s", out)
	}
	if !strings.Contains(out, "Egress policy not enforced") {
		t.Fatalf("the apply failed, but not by failing closed:\n%s", out)
	}
	setups := 0
	for _, e := range m.Events() {
		if e.Type != primemock.EventCommandExecuted || !isStep(e) {
			continue
		}
		if isAgentCommand(e.Command) {
			t.Errorf("the agent ran in sandbox %s although its policy was never enforced", e.SandboxID)
		}
		setups++
	}
	if setups != 2 {
		t.Errorf("%d setup steps ran, want 2 (one per member)", setups)
	}
	for _, addr := range stateAddrs(ctx, t, run) {
		if strings.Contains(addr, "prime_fleet_egress_policy") || strings.Contains(addr, "agent") {
			t.Errorf("%s is in state after the policy failed closed", addr)
		}
	}
}

// TestAccModule_evalFleetMemberFails: a member that fails while booting
// (its key contains the mock's prime-mock-oom) fails the apply at the
// fleet, naming it; nothing runs on the healthy member, which stays in
// state. After `terraform untaint` (what the error says to do), an apply
// with the failed key replaced keeps the healthy member and runs the whole
// protocol on both.
func TestAccModule_evalFleetMemberFails(t *testing.T) {
	m, run, ctx := rootWorkspace(t, fastMockOptions())

	out, err := run(ctx, "apply", "-auto-approve", "-input=false", `-var=members=["ok","prime-mock-oom"]`)
	if err == nil {
		t.Fatalf("the apply succeeded although a member failed:\n%s", out)
	}
	for _, want := range []string{"Fleet members failed", `Member "prime-mock-oom"`, "OOM_KILLED", "module.fleet.prime_sandbox_fleet.this"} {
		if !strings.Contains(out, want) {
			t.Fatalf("the apply failed, but its error does not say %q:\n%s", want, out)
		}
	}
	for _, e := range m.Events() {
		if e.Type == primemock.EventCommandStarted && e.Command != gatewayProbe {
			t.Errorf("%q ran in sandbox %s although the fleet failed", e.Command, e.SandboxID)
		}
	}
	addrs := stateAddrs(ctx, t, run)
	if !slices.Equal(addrs, []string{"module.fleet.prime_sandbox_fleet.this"}) {
		t.Fatalf("state after the failed apply: %v; want only the fleet", addrs)
	}
	if st := m.Stats(); st.LiveSandboxes != 1 || st.SandboxesCreated != 2 {
		t.Fatalf("live %d of %d created; want the healthy member live and the failed one deleted", st.LiveSandboxes, st.SandboxesCreated)
	}
	// A failed apply records no outputs: read the fleet's own state.
	first := fleetStateIDs(ctx, t, run)
	if len(first) != 1 || first["ok"] == "" {
		t.Fatalf("the fleet's sandbox_ids after the failed apply: %v; want the healthy member alone", first)
	}

	if out, err := run(ctx, "untaint", "module.fleet.prime_sandbox_fleet.this"); err != nil {
		t.Fatalf("terraform untaint: %v\n%s", err, out)
	}
	if out, err := run(ctx, "apply", "-auto-approve", "-input=false", `-var=members=["ok","b"]`); err != nil {
		t.Fatalf("the apply after the failure: %v\n%s", err, out)
	}
	ids := outputMap(ctx, t, run, "ready_sandbox_ids")
	if len(ids) != 2 || ids["ok"] != first["ok"] || ids["b"] == "" {
		t.Fatalf("ready_sandbox_ids %v; want the healthy member %s kept and b new", ids, first["ok"])
	}
	if st := m.Stats(); st.SandboxesCreated != 3 {
		t.Errorf("%d sandboxes created; want 3 (the failed one, the healthy one kept, b)", st.SandboxesCreated)
	}
	if err := checkFleetProtocol(fleetTraces(m.Events()), true); err != nil {
		t.Error(err)
	}
}

// TestAccModule_evalFleet20 is #13's protocol check at fleet scale: 20
// members through the eval-fleet module with setup, policy and agent.
// Every setup step must run with egress open and every agent step under its
// member's enforced lock (the mock's events, checkFleetProtocol); the
// second plan must be empty, and the destroy (rootWorkspace's clean-up)
// must leave nothing running.
func TestAccModule_evalFleet20(t *testing.T) {
	m, run, ctx := rootWorkspace(t, fastMockOptions())

	keys := make([]string, 20)
	for i := range keys {
		keys[i] = fmt.Sprintf("%q", fmt.Sprintf("m%02d", i))
	}
	members := "-var=members=[" + strings.Join(keys, ",") + "]"
	if out, err := run(ctx, "apply", "-auto-approve", "-input=false", members); err != nil {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	if ids := outputMap(ctx, t, run, "ready_sandbox_ids"); len(ids) != 20 {
		t.Fatalf("%d ready members, want 20: %v", len(ids), ids)
	}
	traces := fleetTraces(m.Events())
	if len(traces) != 20 {
		t.Fatalf("events of %d sandboxes, want 20", len(traces))
	}
	if err := checkFleetProtocol(traces, true); err != nil {
		t.Fatal(err)
	}
	// Every member's reward back, and its results (its own task) on disk.
	var rewards map[string]*float64
	if err := json.Unmarshal([]byte(outputJSON(ctx, t, run, "rewards")), &rewards); err != nil || len(rewards) != 20 {
		t.Fatalf("rewards %v (%v); want 20", rewards, err)
	}
	paths := outputMap(ctx, t, run, "results_local_paths")
	for k, r := range rewards {
		if r == nil || *r != 1 {
			t.Errorf("reward of %s: %v, want 1", k, r)
		}
		got, err := os.ReadFile(filepath.Join(paths[k], "task.txt"))
		if err != nil || string(got) != "task "+k {
			t.Errorf("results of %s on disk: %q (%v), want its own task", k, got, err)
		}
	}
	if out, err := run(ctx, "plan", "-detailed-exitcode", "-input=false", members); err != nil {
		t.Fatalf("the second plan is not empty (%v):\n%s", err, out)
	}
}

// TestAccModule_evalFleetMemberDeletedOutOfBand deletes one member's
// sandbox behind Terraform's back. The plan must update the fleet, the
// setup, the policy and the agent in place (no replacement); the apply
// creates the member again and runs setup (open), lock and agent on it
// alone, leaving the other member untouched. Removing the key afterwards
// deletes just that member.
func TestAccModule_evalFleetMemberDeletedOutOfBand(t *testing.T) {
	m, run, ctx := rootWorkspace(t, fastMockOptions())

	if out, err := run(ctx, "apply", "-auto-approve", "-input=false"); err != nil {
		t.Fatalf("first apply: %v\n%s", err, out)
	}
	before := outputMap(ctx, t, run, "sandbox_ids")
	if len(before) != 2 {
		t.Fatalf("sandbox_ids %v; want two members", before)
	}
	if err := m.client(t).DeleteSandbox(ctx, before["two"]); err != nil {
		t.Fatalf("deleting member two out of band: %v", err)
	}
	mark := int64(len(m.Events()))

	if out, err := run(ctx, "plan", "-input=false", "-out=tfplan"); err != nil {
		t.Fatalf("plan after the deletion: %v\n%s", err, out)
	}
	show, err := run(ctx, "show", "-json", "tfplan")
	if err != nil {
		t.Fatalf("terraform show: %v\n%s", err, show)
	}
	var plan struct {
		ResourceChanges []struct {
			Address string `json:"address"`
			Change  struct {
				Actions []string `json:"actions"`
			} `json:"change"`
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal([]byte(show), &plan); err != nil {
		t.Fatalf("plan JSON: %v\n%s", err, show)
	}
	actions := map[string]string{}
	for _, rc := range plan.ResourceChanges {
		actions[rc.Address] = strings.Join(rc.Change.Actions, ",")
	}
	for _, addr := range []string{
		"module.fleet.prime_sandbox_fleet.this", "module.fleet.prime_fleet_command.setup[0]",
		"module.fleet.prime_fleet_egress_policy.this[0]", "module.fleet.prime_fleet_command.agent[0]",
		"module.fleet.prime_fleet_file.task[0]", "module.fleet.prime_fleet_file.member_task[0]", "module.fleet.prime_fleet_artifact.results[0]",
	} {
		if actions[addr] != "update" {
			t.Errorf("plan after the deletion: %s %q, want update (in place); all: %v", addr, actions[addr], actions)
		}
	}
	if out, err := run(ctx, "apply", "-auto-approve", "-input=false", "tfplan"); err != nil {
		t.Fatalf("apply after the deletion: %v\n%s", err, out)
	}
	after := outputMap(ctx, t, run, "ready_sandbox_ids")
	if after["one"] != before["one"] || after["two"] == "" || after["two"] == before["two"] {
		t.Fatalf("ready_sandbox_ids %v after the re-create (before: %v); want one kept and two new", after, before)
	}

	// Since the deletion: nothing on member one; the whole protocol on the
	// new member two.
	var since []primemock.Event
	for _, e := range m.Events() {
		if e.Seq > mark {
			since = append(since, e)
		}
	}
	for _, e := range since {
		// Reads of its reward are refreshes; an upload, a command or a
		// download of its results would be work done again.
		touched := e.Type == primemock.EventPolicyPut || e.Type == primemock.EventCommandStarted || e.Type == primemock.EventFileUploaded ||
			e.Type == primemock.EventFileDownloaded && e.Path != "/results/reward.json"
		if e.SandboxID == before["one"] && touched {
			t.Errorf("member one was touched after member two was deleted: %s %q %s (generation %d)", e.Type, e.Command, e.Path, e.Generation)
		}
	}
	var newTwo *sandboxTrace
	for _, tr := range fleetTraces(since) {
		if tr.id == after["two"] {
			newTwo = tr
		}
	}
	if newTwo == nil {
		t.Fatalf("no events for the new member two (%s)", after["two"])
	}
	if err := checkFleetProtocol([]*sandboxTrace{newTwo}, true); err != nil {
		t.Error(err)
	}
	if setups, agents := newTwo.count(); setups != 1 || agents != 2 {
		t.Errorf("on the new member two %d setup and %d agent steps ran, want 1 and 2", setups, agents)
	}
	if codes := outputJSON(ctx, t, run, "agent_exit_codes"); codes != `{"one":[0,7],"two":[0,7]}` {
		t.Errorf("agent_exit_codes %s; want example.com reachable and pypi.org not, on both members", codes)
	}

	// Removing the key deletes just that member.
	if out, err := run(ctx, "apply", "-auto-approve", "-input=false", `-var=members=["one"]`); err != nil {
		t.Fatalf("apply without member two: %v\n%s", err, out)
	}
	if ids := outputMap(ctx, t, run, "ready_sandbox_ids"); len(ids) != 1 || ids["one"] != before["one"] {
		t.Errorf("ready_sandbox_ids %v after removing two; want one alone, kept", ids)
	}
	if live := m.Stats().LiveSandboxes; live != 1 {
		t.Errorf("%d sandboxes live after removing member two, want 1", live)
	}
}

// outputJSON is an output of the root module as compact JSON.
func outputJSON(ctx context.Context, t *testing.T, run func(context.Context, ...string) (string, error), name string) string {
	t.Helper()
	out, err := run(ctx, "output", "-json", name)
	if err != nil {
		t.Fatalf("terraform output %s: %v\n%s", name, err, out)
	}
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("terraform output %s: %v\n%s", name, err, out)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TestFleetProtocolChecks holds the event checks above to what they claim,
// on made-up event logs: each violation is reported, and the good logs
// pass. No CLI needed.
func TestFleetProtocolChecks(t *testing.T) {
	lock := &prime.EgressPolicy{Allowlist: []string{"example.com"}}
	open := &prime.EgressPolicy{Denylist: []string{}}
	// ev is one event; log numbers them in order.
	ev := func(typ string, gen int64, cmd string, p *prime.EgressPolicy) primemock.Event {
		e := primemock.Event{Type: typ, SandboxID: "sb", Generation: gen, Command: cmd, Policy: p}
		if typ == primemock.EventCommandStarted || typ == primemock.EventCommandExecuted {
			e.Generation, e.AppliedGeneration = 0, gen
		}
		return e
	}
	created := func(p *prime.EgressPolicy) primemock.Event { return ev(primemock.EventSandboxCreated, 0, "", p) }
	put := func(gen int64, p *prime.EgressPolicy) primemock.Event {
		return ev(primemock.EventPolicyPut, gen, "", p)
	}
	applied := func(gen int64) primemock.Event { return ev(primemock.EventPolicyApplied, gen, "", nil) }
	run := func(cmd string, gen int64) []primemock.Event {
		return []primemock.Event{ev(primemock.EventCommandStarted, gen, cmd, nil), ev(primemock.EventCommandExecuted, gen, cmd, nil)}
	}
	log := func(parts ...any) []primemock.Event {
		var seq int64
		var out []primemock.Event
		for _, p := range parts {
			switch p := p.(type) {
			case primemock.Event:
				seq++
				p.Seq = seq
				out = append(out, p)
			case []primemock.Event:
				for _, e := range p {
					seq++
					e.Seq = seq
					out = append(out, e)
				}
			}
		}
		return out
	}
	// bg is a background job's process, as the mock reports it.
	bg := func(cmd string, gen int64) []primemock.Event {
		e := run(cmd, gen)
		for i := range e {
			e[i].Transport = primemock.TransportBackground
		}
		return e
	}
	unpack := func(dir string) []primemock.Event {
		return run("mkdir -p -- "+dir+" && tar -xf /.prime-upload-1.tar -C "+dir+"; s=$?; rm -f -- /.prime-upload-1.tar; exit $s", 0)
	}
	const reward, fetch = "/results/reward.json", "/tmp/.prime-fetch-1.tar"
	read := func(path string) primemock.Event {
		return primemock.Event{Type: primemock.EventFileDownloaded, SandboxID: "sb", Path: path}
	}
	oneRun := tasksTraceWant{sharedUploads: 1, memberUploads: 1, agentStarts: 1, fetches: 1}
	twoRuns := tasksTraceWant{sharedUploads: 1, memberUploads: 2, agentStarts: 2, fetches: 2}
	tasks := func(want tasksTraceWant) func([]primemock.Event) error {
		return func(events []primemock.Event) error { return checkTasksTrace(fleetTraces(events)[0], want) }
	}
	goodTasks := func(changed bool) []primemock.Event {
		parts := []any{created(nil), unpack("/task"), unpack("/task/member"), run("echo setup", 0), put(1, lock), applied(1),
			bg("echo agent", 1), read(reward), read(fetch)}
		if changed {
			parts = append(parts, read(reward), unpack("/task/member"), bg("echo agent", 1), read(reward), read(fetch))
		}
		return log(parts...)
	}
	protocol := func(events []primemock.Event) error { return checkFleetProtocol(fleetTraces(events), true) }
	born := func(events []primemock.Event) error { return checkBornTrace(fleetTraces(events)[0]) }
	change := func(events []primemock.Event) error { return checkSetupChange(fleetTraces(events)[0]) }

	goodChange := log(created(nil), run(gatewayProbe, 0), run("echo installing v1", 0), put(1, lock), applied(1),
		run("echo agent", 1), put(2, open), applied(2), run("echo installing v2", 2), run("echo second step", 2),
		put(3, lock), applied(3), run("echo agent pypi", 1), run("echo agent", 3), run("echo agent pypi", 3), put(4, open), applied(4))
	for _, tc := range []struct {
		name  string
		check func([]primemock.Event) error
		log   []primemock.Event
		want  string // "" passes
	}{
		{"open setup, then lock, then agent", protocol,
			log(created(nil), run(gatewayProbe, -1), run("echo setup", 0), put(1, lock), applied(1), run("echo agent", 1)), ""},
		{"setup under the lock", protocol,
			log(created(nil), put(1, lock), applied(1), run("echo setup", 1), run("echo agent", 1)), "setup step \"echo setup\" started with generation 1 enforced"},
		{"setup while a lock is pending", protocol,
			log(created(nil), put(1, lock), run("echo setup", 0), applied(1), run("echo agent", 1)), "and 1 desired"},
		{"agent before the lock is enforced", protocol,
			log(created(nil), run("echo setup", 0), put(1, lock), run("echo agent", 0), applied(1)), "agent step \"echo agent\" started with generation 0 enforced"},
		{"lock never enforced", protocol,
			log(created(nil), run("echo setup", 0), put(1, lock), run("echo agent", 0)), "generation 1 was written but never enforced"},
		{"no commands at all", protocol, log(created(nil), put(1, lock), applied(1)), "0 setup and 0 agent steps"},
		{"born: lists enforced first", born,
			log(created(lock), run(gatewayProbe, -1), applied(0), run("echo setup", 0), run("echo agent", 0)), ""},
		{"born: setup before the lists", born,
			log(created(lock), run("echo setup", -1), applied(0)), "started before the born lists were enforced"},
		{"born: reopened", born,
			log(created(lock), applied(0), run("echo setup", 0), put(1, open)), "got an open policy"},
		{"born: born open", born, log(created(nil), applied(0), run("echo setup", 0)), "not born restricted"},
		{"setup change in order", change, goodChange, ""},
		{"setup change without reopening", change,
			log(created(nil), run("echo installing v1", 0), put(1, lock), applied(1), run("echo agent", 1),
				put(2, lock), applied(2), run("echo installing v2", 2), put(3, lock), applied(3), run("echo agent", 3), put(4, open)),
			"policy writes [restricted restricted restricted open]"},
		{"setup v2 before the restore is enforced", change,
			log(created(nil), run("echo installing v1", 0), put(1, lock), applied(1), run("echo agent", 1), put(2, open),
				run("echo installing v2", 1), applied(2), run("echo second step", 2), put(3, lock), applied(3), run("echo agent", 3), put(4, open)),
			"then no \"setup v2\""},
		{"agent not run again", change,
			log(created(nil), run("echo installing v1", 0), put(1, lock), applied(1), run("echo agent", 1), put(2, open), applied(2),
				run("echo installing v2", 2), run("echo second step", 2), put(3, lock), applied(3), put(4, open)),
			"then no \"agent again\""},
		// The provider's own commands around a background agent are no
		// steps: the tails read under the lock are no setup.
		{"background agent with its plumbing", protocol,
			log(created(nil), run("mkdir -p -- /task && tar -xf /.prime-upload-1.tar -C /task; s=$?; exit $s", 0), run("echo setup", 0),
				put(1, lock), applied(1), run("nohup setsid sh -c 'echo agent' &", 1), bg("echo agent", 1),
				run("tail -c 65537 -- /tmp/job_0123abcd.stdout.log", 1), run("tar -cf /tmp/.prime-fetch-1.tar -C /results .", 1)), ""},
		{"tasks: one run", tasks(oneRun), goodTasks(false), ""},
		{"tasks: a changed task runs again", tasks(twoRuns), goodTasks(true), ""},
		{"tasks: shared task after the setup", tasks(oneRun),
			log(created(nil), run("echo setup", 0), unpack("/task"), unpack("/task/member"), put(1, lock), applied(1), bg("echo agent", 1),
				read(reward), read(fetch)),
			"the setup started before the shared task was in place"},
		{"tasks: agent again before its new task", tasks(twoRuns),
			log(created(nil), unpack("/task"), unpack("/task/member"), run("echo setup", 0), put(1, lock), applied(1), bg("echo agent", 1),
				read(reward), read(fetch), bg("echo agent", 1), unpack("/task/member"), read(reward), read(fetch)),
			"the agent did not run after its own task's last upload"},
		{"tasks: the shared task changed, the setup not run again", tasks(tasksTraceWant{sharedUploads: 2, agentStarts: 2, fetches: 2}),
			log(created(nil), unpack("/task"), run("echo setup", 0), put(1, lock), applied(1), bg("echo agent", 1), read(reward), read(fetch),
				unpack("/task"), bg("echo agent", 1), read(reward), read(fetch)),
			"the setup did not run after the shared task's last upload"},
		{"tasks: the agent before its own task", tasks(oneRun),
			log(created(nil), unpack("/task"), run("echo setup", 0), put(1, lock), applied(1), bg("echo agent", 1), unpack("/task/member"),
				read(reward), read(fetch)),
			"agent run 1 started before its task was in place"},
		{"tasks: a member without a task run again", tasks(tasksTraceWant{sharedUploads: 1, agentStarts: 1}),
			log(created(nil), unpack("/task"), run("echo setup", 0), put(1, lock), applied(1), bg("echo agent", 1), bg("echo agent", 1)),
			"the agent started 2 times, want 1"},
		{"tasks: results before the agent ended", tasks(oneRun),
			log(created(nil), unpack("/task"), unpack("/task/member"), run("echo setup", 0), put(1, lock), applied(1), read(fetch),
				bg("echo agent", 1), read(reward)),
			"the results were downloaded before any agent run ended"},
		{"tasks: the new reward never read", tasks(twoRuns),
			log(created(nil), unpack("/task"), unpack("/task/member"), run("echo setup", 0), put(1, lock), applied(1), bg("echo agent", 1),
				read(reward), read(fetch), unpack("/task/member"), bg("echo agent", 1), read(fetch)),
			"the reward was not read after the last agent run ended"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.check(tc.log)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("want no error, got %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("want an error containing %q, got %v", tc.want, err)
			}
		})
	}
}
