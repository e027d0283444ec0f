package checkpoint_test

import (
	"bytes"
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

// Setup once after two lost runners, each with a cache directory of its
// own: the first is lost while the template's checkpoint uploads, the
// second while the members' restores are in flight (some accepted, some
// answered, some never sent). The third adopts the checkpoint (found by its
// marker in the template) and the restored members, and restores the rest:
// one checkpoint was made, one template and exactly the configured members
// run, and destroy leaves no sandbox and no checkpoint.
func TestAccCheckpoint_lostRunnersAdoptCheckpointAndRestores(t *testing.T) {
	cli := acctest.RequireCLI(t)
	provider := acctest.DevProvider(t)
	t.Parallel()
	const size, answered, accepted = 6, 2, 2
	o := mocktest.Fast()
	// Long enough that the first kill lands during the upload on a loaded
	// runner; the next apply waits out the rest of it.
	o.CheckpointDurableDelay = 8 * time.Second
	var m *mocktest.Mock
	gate := mocktest.NewCreateGate(&m, answered, accepted)
	gate.Match = func(body []byte) bool { return bytes.Contains(body, []byte(`"checkpoint_id"`)) }
	polled := make(chan struct{})
	var once sync.Once
	m = mocktest.NewHooked(t, o, func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		if strings.HasSuffix(r.URL.Path, "/sandbox/checkpoints:batchGet") {
			once.Do(func() { close(polled) })
		}
		return gate.Hook(w, r, body)
	})
	defer gate.Open()
	w := acctest.NewMockWork(t, m, provider(), cli, `
provider "prime" {}
`+checkpointHCL("template", "ttl_seconds = 3600")+`
resource "prime_sandbox_fleet" "eval" {
  name_prefix   = "eval"
  size          = 6
  checkpoint_id = prime_sandbox_checkpoint.setup.id
}
`)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	w.OnNewRunner()
	r := w.Launch("apply", "-auto-approve")
	if _, err := m.WaitForEvent(ctx, func(e primemock.Event) bool { return e.Type == primemock.EventCheckpointCreated }); err != nil {
		t.Fatal(err)
	}
	select {
	case <-polled: // the marker is written before the wait's first poll
	case <-ctx.Done():
		t.Fatalf("the checkpoint was never polled:\n%s", r.Output())
	}
	acctest.KillTF(r)

	w.OnNewRunner()
	r = w.Launch("apply", "-auto-approve")
	select {
	case <-gate.Full:
	case <-ctx.Done():
		t.Fatalf("the restores never reached the gate:\n%s", r.Output())
	}
	acctest.KillTF(r)
	if err := gate.RunnerLost(ctx); err != nil {
		t.Fatal(err)
	}

	w.OnNewRunner()
	out := w.Must(ctx, "apply", "-auto-approve")
	checkpoints := 0
	for _, e := range m.Events() {
		if e.Type == primemock.EventCheckpointCreated {
			checkpoints++
		}
	}
	// The window in which a loss leaks a checkpoint: from the platform
	// making it to its marker being written (the guide quotes it).
	var made, marked time.Time
	for _, e := range m.Events() {
		switch {
		case e.Type == primemock.EventCheckpointCreated && made.IsZero():
			made = e.Time
		case e.Type == primemock.EventCommandExecuted && strings.Contains(e.Command, "touch /tmp/prime-checkpoints/") && marked.IsZero():
			marked = e.Time
		}
	}
	if made.IsZero() || marked.Before(made) {
		t.Errorf("no marker written after the checkpoint was made (made %s, marked %s)", made, marked)
	}
	t.Logf("the checkpoint's marker was written %s after the platform made it", marked.Sub(made))
	if checkpoints != 1 {
		t.Errorf("%d checkpoints made, want 1: a lost apply's checkpoint was not adopted\n%s", checkpoints, out)
	}
	if st := m.Stats(); st.LiveSandboxes != size+1 || st.SandboxesCreated != size+1 {
		t.Errorf("%d live and %d created in all; want %d of each (the template and the members, the lost restores adopted)",
			st.LiveSandboxes, st.SandboxesCreated, size+1)
	}
	if plan, code := w.Exec(ctx, "plan", "-detailed-exitcode"); code != 0 {
		t.Errorf("the plan after the recovering apply is not empty (exit %d):\n%s", code, plan)
	}
	w.Must(ctx, "destroy", "-auto-approve")
	if err := m.CheckNoCheckpoints(nil); err != nil {
		t.Error(err)
	}
}
