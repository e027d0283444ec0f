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

// SIGKILL while the checkpoint uploads (a lost CI runner, the OOM killer):
// Terraform records a resource only when its Create returns, so the
// checkpoint is in no state. The next apply of the same configuration
// adopts it from the checkpoint journal and waits for it to be DURABLE
// instead of requesting a second one: the mock made exactly one
// checkpoint, it is the one in state, the next plan is empty, and destroy
// leaves none (an untracked checkpoint would outlive its sandbox, billed).
func TestAccCheckpoint_killedApplyAdoptsIt(t *testing.T) {
	cli := acctest.RequireCLI(t)
	provider := acctest.DevProvider(t)
	t.Parallel()
	o := mocktest.Fast()
	// The upload lasts until the test ends it, so the kill lands during it
	// however loaded the machine is; the next apply waits for its end.
	o.CheckpointDurableDelay = time.Hour
	// The wait's first poll follows the provider's journal write of the
	// checkpoint's ID: killing after it kills a create that waits for
	// DURABLE (a kill during the request itself leaves nothing to adopt).
	polled := make(chan struct{})
	var once sync.Once
	m := mocktest.NewHooked(t, o, func(_ http.ResponseWriter, r *http.Request, _ []byte) bool {
		if strings.HasSuffix(r.URL.Path, "/sandbox/checkpoints:batchGet") {
			once.Do(func() { close(polled) })
		}
		return false
	})
	w := acctest.NewMockWork(t, m, provider(), cli, `
provider "prime" {}
`+checkpointHCL("template", "ttl_seconds = 3600"))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	r := w.Launch("apply", "-auto-approve", "-no-color")
	created, err := m.WaitForEvent(ctx, func(e primemock.Event) bool { return e.Type == primemock.EventCheckpointCreated })
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-polled:
	case <-ctx.Done():
		t.Fatalf("the checkpoint was never polled:\n%s", r.Output())
	}
	acctest.KillTF(r)
	m.FinishCheckpointUploads(0)

	out := w.Must(ctx, "apply", "-auto-approve", "-no-color")
	var made []string
	for _, e := range m.Events() {
		if e.Type == primemock.EventCheckpointCreated {
			made = append(made, e.CheckpointID)
		}
	}
	if len(made) != 1 {
		t.Errorf("the mock made %d checkpoints (%v), want 1: the killed apply's was not adopted\n%s", len(made), made, out)
	}
	state := w.Must(ctx, "state", "show", "-no-color", "prime_sandbox_checkpoint.setup")
	if !strings.Contains(state, `"`+created.CheckpointID+`"`) || !strings.Contains(state, `"DURABLE"`) {
		t.Errorf("state must hold the killed apply's checkpoint %s, DURABLE:\n%s", created.CheckpointID, state)
	}
	if plan, code := w.Exec(ctx, "plan", "-detailed-exitcode", "-no-color"); code != 0 {
		t.Errorf("the plan after the recovering apply is not empty (exit %d):\n%s", code, plan)
	}
	w.Must(ctx, "destroy", "-auto-approve", "-no-color")
	if err := m.CheckNoCheckpoints(nil); err != nil {
		t.Fatal(err)
	}
}
