package main

import (
	"strings"
	"testing"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// Made-up event logs shaped like the mock's, on sandbox "sb".
var (
	lock = &prime.EgressPolicy{Allowlist: []string{"example.com"}}
	open = &prime.EgressPolicy{Denylist: []string{}}
)

func cmd(typ, command, transport string, gen int64) primemock.Event {
	return primemock.Event{Type: typ, SandboxID: "sb", Command: command, Transport: transport, AppliedGeneration: gen}
}

func runCmd(command string, gen int64) []primemock.Event {
	return []primemock.Event{cmd(primemock.EventCommandStarted, command, "connect", gen), cmd(primemock.EventCommandExecuted, command, "connect", gen)}
}

const job = "echo $$ > /tmp/job_0123abcd.pgid; (sh /task/agent.sh) > /tmp/job_0123abcd.stdout.log 2> /tmp/job_0123abcd.stderr.log; echo $? > /tmp/job_0123abcd.exit"

func agent(gen int64) []primemock.Event {
	return append(runCmd("nohup setsid sh -c '"+job+"' < /dev/null > /dev/null 2>&1 &", gen),
		cmd(primemock.EventCommandStarted, job, primemock.TransportBackground, gen),
		cmd(primemock.EventCommandExecuted, job, primemock.TransportBackground, gen))
}

func file(typ, path string) primemock.Event {
	return primemock.Event{Type: typ, SandboxID: "sb", Path: path}
}

func created(p *prime.EgressPolicy) primemock.Event {
	return primemock.Event{Type: primemock.EventSandboxCreated, SandboxID: "sb", Policy: p}
}

func put(gen int64, p *prime.EgressPolicy) primemock.Event {
	return primemock.Event{Type: primemock.EventPolicyPut, SandboxID: "sb", Generation: gen, Policy: p}
}

func applied(gen int64) primemock.Event {
	return primemock.Event{Type: primemock.EventPolicyApplied, SandboxID: "sb", Generation: gen}
}

func task(gen int64) []primemock.Event {
	return append(append([]primemock.Event{file(primemock.EventFileUploaded, "/.prime-upload-1.tar")},
		runCmd("mkdir -p -- /task && tar -xf /.prime-upload-1.tar -C /task; s=$?; rm -f -- /.prime-upload-1.tar; exit $s", gen)...),
		runCmd("mv -f -- /task/.prime-upload-2 /task/scenario.json", gen)...)
}

var results = []primemock.Event{file(primemock.EventFileDownloaded, "/results/reward.json"), file(primemock.EventFileDownloaded, "/tmp/.prime-fetch-1.tar")}

// log joins events and event lists, numbering them from 1.
func log(parts ...any) []primemock.Event {
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

// TestCheckTimeline holds the demo's timeline checks to what they claim,
// on made-up event logs shaped like the mock's: the good logs pass, and
// each broken order is reported.
func TestCheckTimeline(t *testing.T) {
	probe := runCmd(gatewayProbe, -1)
	setup := runCmd(setupCommand, -1)

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
		{"setup under the lock", false, log(created(nil), task(-1), put(1, lock), applied(1), runCmd(setupCommand, 1), agent(1), results),
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
		{"born: an open setup", true, log(created(lock), applied(0), task(0), runCmd(setupCommand, 0), agent(0), results),
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

// TestCheckSecondApply holds the second apply's checks to what they claim:
// after a first apply (events 1 to first), the widened row is relocked in
// place and its agent runs again under the new lock, and nothing else.
func TestCheckSecondApply(t *testing.T) {
	probe := runCmd(gatewayProbe, -1)
	setup := runCmd(setupCommand, -1)
	first := log(created(nil), probe, task(-1), setup, put(1, lock), applied(1), agent(1), results)
	after := int64(len(first))
	wider := &prime.EgressPolicy{Allowlist: []string{"example.com", "google.com"}}
	for _, tc := range []struct {
		name, row string
		second    []any
		want      string // "" passes
	}{
		{"the widened row", widenedRow, []any{put(2, wider), applied(2), agent(2), results}, ""},
		{"another row", "open", nil, ""},
		{"not run again", widenedRow, []any{put(2, wider), applied(2)}, "the agent started 0 times, want once"},
		{"another row ran", "open", []any{agent(1), results}, "only partial-allow's allowlist changed"},
		{"setup ran", widenedRow, []any{runCmd(setupCommand, 1), put(2, wider), applied(2), agent(2), results}, "the setup ran 1 times"},
		{"reopened", widenedRow, []any{put(2, open), applied(2), put(3, wider), applied(3), agent(3), results}, "2 policy writes"},
		{"agent before the lock", widenedRow, []any{put(2, wider), agent(1), applied(2), results}, "before the new lock (generation 2) was enforced"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			events := log(append([]any{first}, tc.second...)...)
			err := checkSecondApply(events, []sandbox{{name: tc.row, id: "sb"}}, after)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("want no error, got %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("want an error containing %q, got %v", tc.want, err)
			}
		})
	}
}
