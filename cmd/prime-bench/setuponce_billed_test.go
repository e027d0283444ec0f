package main

import (
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// The template's billed time runs from its own checkpoint's DURABLE (not a
// pause checkpoint's) to its delete; a template never deleted in the apply
// is billed up to its end, and on.
func TestTemplateBilledAfterCheckpoint(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	events := []primemock.Event{
		{Type: primemock.EventCheckpointCreated, SandboxID: "tpl", CheckpointID: "ck", Time: at(0)},
		{Type: primemock.EventSandboxDeleted, SandboxID: "other", Time: at(50)},
		{Type: primemock.EventCheckpointState, CheckpointID: "ck", State: prime.CheckpointFrozen, Time: at(100)},
		{Type: primemock.EventCheckpointState, CheckpointID: "ck", State: prime.CheckpointDurable, Time: at(200)},
		{Type: primemock.EventCheckpointCreated, SandboxID: "tpl", CheckpointID: "pause", Memory: true, Time: at(210)},
		{Type: primemock.EventSandboxDeleted, SandboxID: "tpl", Time: at(230)},
	}
	if billed, ended := templateBilledAfterCheckpoint(events, at(1000)); !ended || billed != 30*time.Millisecond {
		t.Errorf("deleted: %s %t, want 30ms, ended", billed, ended)
	}
	if billed, ended := templateBilledAfterCheckpoint(events[:5], at(1000)); ended || billed != 800*time.Millisecond {
		t.Errorf("not deleted: %s %t, want 800ms to the apply's end, not ended", billed, ended)
	}
	if billed, ended := templateBilledAfterCheckpoint(events[:3], at(1000)); ended || billed != 0 {
		t.Errorf("never DURABLE: %s %t", billed, ended)
	}
}
