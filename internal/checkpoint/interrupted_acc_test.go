package checkpoint_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// retiringCheckpointHCL is a template the checkpoint retires once DURABLE.
const retiringCheckpointHCL = `
provider "prime" {}

resource "prime_sandbox" "template" {
  name                    = "template"
  docker_image            = "python:3.12-slim"
  retire_after_checkpoint = true
}

resource "prime_sandbox_checkpoint" "setup" {
  sandbox_id   = prime_sandbox.template.id
  source_after = "delete"
}
`

// checkpointsMade lists the checkpoints the mock made (not the pauses').
func checkpointsMade(m *mocktest.Mock) []string {
	var made []string
	for _, e := range m.Events() {
		if e.Type == primemock.EventCheckpointCreated {
			made = append(made, e.CheckpointID)
		}
	}
	return made
}

// Ctrl-C while the checkpoint uploads: one error, on the checkpoint's
// address, says that nothing is tainted and that the next apply adopts the
// checkpoint (no untaint advice). The next apply takes that checkpoint
// over from the create journal and waits out its upload (the mock made one
// checkpoint, not two); the plan after it is empty and destroy leaves
// nothing. (The checkpoint was recorded tainted:
// the next apply deleted it, once uploaded, and waited for a new one.)
func TestAccCheckpoint_interruptedWaitIsAdoptedNotTainted(t *testing.T) {
	cli := acctest.RequireCLI(t)
	provider := acctest.DevProvider(t)
	t.Parallel()
	o := mocktest.Fast()
	// The upload lasts until the test ends it, so the Ctrl-C lands during
	// it however loaded the machine is.
	o.CheckpointDurableDelay = time.Hour
	m := mocktest.New(t, o)
	w := acctest.NewMockWork(t, m, provider(), cli, `
provider "prime" {}
`+checkpointHCL("template", ""))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	r := w.Launch("apply", "-auto-approve", "-no-color")
	if _, err := m.WaitForEvent(ctx, func(e primemock.Event) bool { return e.Type == primemock.EventCheckpointCreated }); err != nil {
		t.Fatal(err)
	}
	acctest.InterruptTF(ctx, t, r)
	out := r.Output()
	for _, want := range []string{"Checkpoint wait interrupted", "with prime_sandbox_checkpoint.setup", "nothing is tainted",
		"the next apply of this configuration adopts it"} {
		if !strings.Contains(out, want) {
			t.Errorf("the interrupted apply's output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "untaint") || strings.Count(out, "Checkpoint wait interrupted") != 1 {
		t.Errorf("one error, and no untaint advice, when nothing is tainted:\n%s", out)
	}
	if addrs := strings.Fields(w.Must(ctx, "state", "list")); len(addrs) != 1 || addrs[0] != "prime_sandbox.template" {
		t.Fatalf("after Ctrl-C the state must hold the template alone: %v", addrs)
	}

	m.FinishCheckpointUploads(0) // the next apply waits out the rest of it
	w.Must(ctx, "apply", "-auto-approve", "-no-color")
	if made := checkpointsMade(m); len(made) != 1 {
		t.Errorf("the mock made %d checkpoints (%v), want 1: the interrupted apply's was not adopted", len(made), made)
	}
	if plan, code := w.Exec(ctx, "plan", "-detailed-exitcode", "-no-color"); code != 0 {
		t.Errorf("the plan after the recovering apply is not empty (exit %d):\n%s", code, plan)
	}
	w.Must(ctx, "destroy", "-auto-approve", "-no-color")
	if err := m.CheckNoCheckpoints(nil); err != nil {
		t.Fatal(err)
	}
}

// SIGKILL while the checkpoint of a retiring template uploads: the next
// apply adopts the checkpoint, deletes the template once it is DURABLE,
// and keeps the template retired; the plan after it is empty, and destroy
// leaves nothing.
func TestAccCheckpoint_killedRetiringApplyConverges(t *testing.T) {
	cli := acctest.RequireCLI(t)
	provider := acctest.DevProvider(t)
	t.Parallel()
	o := mocktest.Fast()
	o.CheckpointDurableDelay = time.Hour // until the test ends the upload
	// The wait's first poll follows the journal's record of the
	// checkpoint's ID: the kill lands on a create that waits for DURABLE.
	polled := make(chan struct{})
	var once sync.Once
	m := mocktest.NewHooked(t, o, func(_ http.ResponseWriter, r *http.Request, _ []byte) bool {
		if strings.HasSuffix(r.URL.Path, "/sandbox/checkpoints:batchGet") {
			once.Do(func() { close(polled) })
		}
		return false
	})
	w := acctest.NewMockWork(t, m, provider(), cli, retiringCheckpointHCL)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	r := w.Launch("apply", "-auto-approve", "-no-color")
	select {
	case <-polled:
	case <-ctx.Done():
		t.Fatalf("the checkpoint was never polled:\n%s", r.Output())
	}
	acctest.KillTF(r)
	m.FinishCheckpointUploads(0)
	w.Must(ctx, "apply", "-auto-approve", "-no-color")
	if made := checkpointsMade(m); len(made) != 1 {
		t.Errorf("the mock made %d checkpoints (%v), want 1", len(made), made)
	}
	if st := m.Status(t, w.StateAttr(ctx, "prime_sandbox.template", "id")); st != "TERMINATED" {
		t.Errorf("the template is %s, want it deleted once its checkpoint is DURABLE", st)
	}
	if plan, code := w.Exec(ctx, "plan", "-detailed-exitcode", "-no-color"); code != 0 {
		t.Errorf("the plan after the recovering apply is not empty (exit %d):\n%s", code, plan)
	}
	w.Must(ctx, "destroy", "-auto-approve", "-no-color")
	if err := m.CheckNoCheckpoints(nil); err != nil {
		t.Fatal(err)
	}
	// Apply and destroy again: a fresh template, retired again.
	w.Must(ctx, "apply", "-auto-approve", "-no-color")
	if plan, code := w.Exec(ctx, "plan", "-detailed-exitcode", "-no-color"); code != 0 {
		t.Errorf("the plan after applying again is not empty (exit %d):\n%s", code, plan)
	}
	w.Must(ctx, "destroy", "-auto-approve", "-no-color")
	if err := m.CheckNoCheckpoints(nil); err != nil {
		t.Fatal(err)
	}
}
