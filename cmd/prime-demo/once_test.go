package main

import (
	"strings"
	"testing"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

var restored = primemock.Event{Type: primemock.EventSandboxRestored, SandboxID: "sb"}

// TestCheckRestoredLocked holds the setup-once member check to what it
// claims, on made-up logs: a restored member restricted before its agent
// passes (lists written after the restore, or taken with it); each broken
// order is reported.
func TestCheckRestoredLocked(t *testing.T) {
	probe := runCmd(gatewayProbe, -1)
	for _, tc := range []struct {
		name string
		log  []primemock.Event
		want string // "" passes
	}{
		{"locked after the restore", log(created(nil), restored, probe, put(1, lock), applied(1), task(1), agent(1)), ""},
		{"born restricted with the restore", log(created(lock), restored, applied(0), probe, task(0), agent(0)), ""},
		{"not restored", log(created(nil), probe, put(1, lock), applied(1), agent(1)), "not restored"},
		{"agent before the lock", log(created(nil), restored, put(1, lock), agent(-1), applied(1)), "does not restrict"},
		{"never enforced", log(created(nil), restored, put(1, lock), agent(1)), "never enforced"},
		{"a setup on a member", log(created(nil), restored, runCmd(setupCommand, -1), put(1, lock), applied(1), agent(1)), "setup step ran on a member"},
		{"agent twice", log(created(nil), restored, put(1, lock), applied(1), agent(1), agent(1)), "started 2 times"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := timelines(tc.log)["sb"].checkRestoredLocked()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("want no problem, got %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("want %q, got %v", tc.want, err)
			}
		})
	}
}

func TestCheckTemplatePaused(t *testing.T) {
	o := &onceOutputs{TemplateID: "tpl", CheckpointID: "ck"}
	durable := primemock.Event{Type: primemock.EventCheckpointState, CheckpointID: "ck", State: "DURABLE"}
	pause := primemock.Event{Type: primemock.EventPauseRequested, SandboxID: "tpl"}
	for _, tc := range []struct {
		name string
		log  []primemock.Event
		want string
	}{
		{"after durable", log(durable, pause), ""},
		{"before durable", log(pause, durable), "before its checkpoint was DURABLE"},
		{"never paused", log(durable), "not paused"},
		{"never durable", log(pause), "never became DURABLE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkTemplatePaused(tc.log, o)
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("want %q, got %v", tc.want, err)
			}
		})
	}
}

func TestCountSetups(t *testing.T) {
	ev := func(id string) []primemock.Event {
		e := runCmd(setupCommand, -1)
		for i := range e {
			e[i].SandboxID = id
		}
		return e
	}
	events := log(ev("tpl"), ev("row1"), ev("row2"), runCmd("sh /task/agent.sh", 1))
	if n := countSetups(events, map[string]bool{"tpl": true, "m1": true}); n != 1 {
		t.Fatalf("setups on the template and its member = %d, want 1", n)
	}
	if n := countSetups(events, map[string]bool{"row1": true, "row2": true}); n != 2 {
		t.Fatalf("setups on the rows = %d, want 2", n)
	}
}
