package main

import (
	"strings"
	"testing"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// TestCheckTimeline holds the demo's timeline checks to what they claim,
// on made-up event logs shaped like the mock's: the good logs pass, and
// each broken order is reported.
func TestCheckTimeline(t *testing.T) {
	lock := &prime.EgressPolicy{Allowlist: []string{"example.com"}}
	open := &prime.EgressPolicy{Denylist: []string{}}
	cmd := func(typ, command, transport string, gen int64) primemock.Event {
		return primemock.Event{Type: typ, SandboxID: "sb", Command: command, Transport: transport, AppliedGeneration: gen}
	}
	run := func(command string, gen int64) []primemock.Event {
		return []primemock.Event{cmd(primemock.EventCommandStarted, command, "connect", gen), cmd(primemock.EventCommandExecuted, command, "connect", gen)}
	}
	const job = "echo $$ > /tmp/job_0123abcd.pgid; (sh /task/agent.sh) > /tmp/job_0123abcd.stdout.log 2> /tmp/job_0123abcd.stderr.log; echo $? > /tmp/job_0123abcd.exit"
	agent := func(gen int64) []primemock.Event {
		return append(run("nohup setsid sh -c '"+job+"' < /dev/null > /dev/null 2>&1 &", gen),
			cmd(primemock.EventCommandStarted, job, primemock.TransportBackground, gen),
			cmd(primemock.EventCommandExecuted, job, primemock.TransportBackground, gen))
	}
	file := func(typ, path string) primemock.Event { return primemock.Event{Type: typ, SandboxID: "sb", Path: path} }
	created := func(p *prime.EgressPolicy) primemock.Event {
		return primemock.Event{Type: primemock.EventSandboxCreated, SandboxID: "sb", Policy: p}
	}
	put := func(gen int64, p *prime.EgressPolicy) primemock.Event {
		return primemock.Event{Type: primemock.EventPolicyPut, SandboxID: "sb", Generation: gen, Policy: p}
	}
	applied := func(gen int64) primemock.Event {
		return primemock.Event{Type: primemock.EventPolicyApplied, SandboxID: "sb", Generation: gen}
	}
	task := func(gen int64) []primemock.Event {
		return append(append([]primemock.Event{file(primemock.EventFileUploaded, "/.prime-upload-1.tar")},
			run("mkdir -p -- /task && tar -xf /.prime-upload-1.tar -C /task; s=$?; rm -f -- /.prime-upload-1.tar; exit $s", gen)...),
			run("mv -f -- /task/.prime-upload-2 /task/scenario.json", gen)...)
	}
	results := []primemock.Event{file(primemock.EventFileDownloaded, "/results/reward.json"), file(primemock.EventFileDownloaded, "/tmp/.prime-fetch-1.tar")}
	log := func(parts ...any) []primemock.Event {
		var out []primemock.Event
		for _, p := range parts {
			switch p := p.(type) {
			case primemock.Event:
				out = append(out, p)
			case []primemock.Event:
				out = append(out, p...)
			}
		}
		for i := range out {
			out[i].Seq = int64(i + 1)
		}
		return out
	}
	probe := run(gatewayProbe, -1)
	setup := run(setupCommand, -1)

	for _, tc := range []struct {
		name string
		born bool
		log  []primemock.Event
		want string // "" passes
	}{
		{"locked", false, log(created(nil), probe, task(-1), setup, put(1, lock), applied(1), agent(1), results), ""},
		{"baseline", false, log(created(nil), probe, task(-1), setup, agent(-1), results), ""},
		{"born", true, log(created(lock), probe, applied(0), task(0), agent(0), results), ""},
		{"task after the setup", false, log(created(nil), probe, setup, task(-1), put(1, lock), applied(1), agent(1), results),
			"the setup started before the task was in place"},
		{"no task", false, log(created(nil), probe, setup, put(1, lock), applied(1), agent(1), results), "the task was not uploaded"},
		{"setup under the lock", false, log(created(nil), task(-1), put(1, lock), applied(1), run(setupCommand, 1), agent(1), results),
			"a policy was written before the setup ran"},
		{"agent before the lock is enforced", false, log(created(nil), task(-1), setup, put(1, lock), agent(-1), applied(1), results),
			"the agent started before the policy (generation 1) was enforced"},
		{"an open policy", false, log(created(nil), task(-1), setup, put(1, open), applied(1), agent(1), results), "an open policy was written"},
		{"agent twice", false, log(created(nil), task(-1), setup, put(1, lock), applied(1), agent(1), agent(1), results),
			"the agent started 2 times"},
		{"result read before the agent ended", false,
			log(created(nil), task(-1), setup, put(1, lock), applied(1), file(primemock.EventFileDownloaded, "/results/reward.json"), agent(1), results[1]),
			"the result was read before the agent ended"},
		{"results never downloaded", false, log(created(nil), task(-1), setup, put(1, lock), applied(1), agent(1), results[0]),
			"the results were never downloaded"},
		{"born: a command before the lists", true, log(created(lock), task(-1), applied(0), agent(0), results),
			"ran before the born lists were enforced"},
		{"born: an open setup", true, log(created(lock), applied(0), task(0), run(setupCommand, 0), agent(0), results),
			"a setup ran on a born-restricted sandbox"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkTimeline(tc.log, []sandbox{{name: "s", id: "sb", born: tc.born}})
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("want no error, got %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("want an error containing %q, got %v", tc.want, err)
			}
		})
	}
}
