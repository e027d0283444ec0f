package sandbox_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
)

// A fleet whose runner is lost while the platform has accepted some of its
// creates (some answered, some whose answers never arrived) and not the
// others: the next apply, on a new runner with the same state and an empty
// cache directory, adopts what the lost one created and creates the rest —
// exactly the configured members, no sandbox created twice — and destroy
// leaves none. The trial left 26 for 20, and 6 after destroy.
func TestAccSandboxFleet_lostRunnerAdoptsCreatesInFlight(t *testing.T) {
	cli := acctest.RequireCLI(t)
	provider := acctest.DevProvider(t)
	t.Parallel()
	const size, answered, accepted = 12, 3, 4
	var m *mocktest.Mock
	gate := mocktest.NewCreateGate(&m, answered, accepted)
	m = mocktest.NewHooked(t, mocktest.Fast(), gate.Hook)
	defer gate.Open()
	w := acctest.NewMockWork(t, m, provider(), cli, fmt.Sprintf(`
provider "prime" {}

resource "prime_sandbox_fleet" "eval" {
  name_prefix  = "eval"
  size         = %d
  docker_image = "python:3.12-slim"
}
`, size))
	w.OnNewRunner()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	r := w.Launch("apply", "-auto-approve")
	select {
	case <-gate.Full:
	case <-ctx.Done():
		t.Fatalf("the creates never reached the gate:\n%s", r.Output())
	}
	acctest.KillTF(r)
	if err := gate.RunnerLost(ctx); err != nil {
		t.Fatal(err)
	}
	if n := m.Stats().SandboxesCreated; n != answered+accepted {
		t.Fatalf("%d sandboxes made before the loss, want %d", n, answered+accepted)
	}

	w.OnNewRunner()
	out := w.Must(ctx, "apply", "-auto-approve")
	st := m.Stats()
	if st.LiveSandboxes != size || st.SandboxesCreated != size {
		t.Errorf("after the recovering apply: %d live, %d created in all; want exactly %d of each (the lost apply's "+
			"%d adopted)\n%s", st.LiveSandboxes, st.SandboxesCreated, size, answered+accepted, out)
	}
	if ids := w.FleetMembers(ctx, "prime_sandbox_fleet.eval"); len(ids) != size {
		t.Errorf("the fleet holds %d members, want %d", len(ids), size)
	}
	if plan, code := w.Exec(ctx, "plan", "-detailed-exitcode"); code != 0 {
		t.Errorf("the plan after the recovering apply is not empty (exit %d):\n%s", code, plan)
	}
	w.Must(ctx, "destroy", "-auto-approve")
	if live := m.Stats().LiveSandboxes; live != 0 {
		t.Errorf("%d sandboxes live after destroy", live)
	}
}

// The same for one prime_sandbox whose create was accepted and whose
// answer was lost with the runner.
func TestAccSandbox_lostRunnerAdoptsCreateInFlight(t *testing.T) {
	cli := acctest.RequireCLI(t)
	provider := acctest.DevProvider(t)
	t.Parallel()
	var m *mocktest.Mock
	gate := mocktest.NewCreateGate(&m, 0, 1)
	m = mocktest.NewHooked(t, mocktest.Fast(), gate.Hook)
	defer gate.Open()
	w := acctest.NewMockWork(t, m, provider(), cli, `
provider "prime" {}

resource "prime_sandbox" "template" {
  name         = "template"
  docker_image = "python:3.12-slim"
  labels       = ["eval"]
}
`)
	w.OnNewRunner()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	r := w.Launch("apply", "-auto-approve")
	select {
	case <-gate.Full:
	case <-ctx.Done():
		t.Fatalf("the create never reached the gate:\n%s", r.Output())
	}
	acctest.KillTF(r)
	if err := gate.RunnerLost(ctx); err != nil {
		t.Fatal(err)
	}

	w.OnNewRunner()
	w.Must(ctx, "apply", "-auto-approve")
	if st := m.Stats(); st.LiveSandboxes != 1 || st.SandboxesCreated != 1 {
		t.Errorf("after the recovering apply: %d live, %d created; want 1 and 1", st.LiveSandboxes, st.SandboxesCreated)
	}
	state := w.Must(ctx, "state", "show", "prime_sandbox.template")
	if strings.Contains(state, "tfprime-") {
		t.Errorf("the provider's own labels reached the resource's labels:\n%s", state)
	}
	if plan, code := w.Exec(ctx, "plan", "-detailed-exitcode"); code != 0 {
		t.Errorf("the plan after the recovering apply is not empty (exit %d):\n%s", code, plan)
	}
	w.Must(ctx, "destroy", "-auto-approve")
	if live := m.Stats().LiveSandboxes; live != 0 {
		t.Errorf("%d sandboxes live after destroy", live)
	}
}
