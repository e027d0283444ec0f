package examples_test

// The protocol checks of the module tests: each sandbox's event trace against the order the eval-fleet module promises, and the checks' own tests on made-up logs.

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

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
		case e.Type == primemock.EventCommandStarted && e.Command != acctest.GatewayProbe:
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

	goodChange := log(created(nil), run(acctest.GatewayProbe, 0), run("echo installing v1", 0), put(1, lock), applied(1),
		run("echo agent", 1), put(2, open), applied(2), run("echo installing v2", 2), run("echo second step", 2),
		put(3, lock), applied(3), run("echo agent pypi", 1), run("echo agent", 3), run("echo agent pypi", 3), put(4, open), applied(4))
	for _, tc := range []struct {
		name  string
		check func([]primemock.Event) error
		log   []primemock.Event
		want  string // "" passes
	}{
		{"open setup, then lock, then agent", protocol,
			log(created(nil), run(acctest.GatewayProbe, -1), run("echo setup", 0), put(1, lock), applied(1), run("echo agent", 1)), ""},
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
			log(created(lock), run(acctest.GatewayProbe, -1), applied(0), run("echo setup", 0), run("echo agent", 0)), ""},
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
