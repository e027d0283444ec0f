package sandbox_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
)

// Two workspaces on one account use the same name prefix and the same
// template. Workspace A's runner is lost mid-create; workspace B then
// applies in full, and must not adopt A's leftovers (they are another
// scope's, however alike); A's next runner adopts its own, creates the
// rest, and never takes B's. Destroying B leaves A's fleet running;
// destroying A leaves nothing.
func TestAccSandboxFleet_twoWorkspacesOnePrefix(t *testing.T) {
	cli := acctest.RequireCLI(t)
	provider := acctest.DevProvider(t)
	t.Parallel()
	const size, answered, accepted = 6, 2, 2
	var m *mocktest.Mock
	gate := mocktest.NewCreateGate(&m, answered, accepted)
	m = mocktest.NewHooked(t, mocktest.Fast(), gate.Hook)
	defer gate.Open()
	hcl := fmt.Sprintf(`
provider "prime" {}

resource "prime_sandbox_fleet" "eval" {
  name_prefix  = "eval"
  size         = %d
  docker_image = "python:3.12-slim"
  labels       = ["nightly"]
}
`, size)
	a := acctest.NewMockWork(t, m, provider(), cli, hcl)
	b := acctest.NewMockWork(t, m, provider(), cli, hcl)
	a.OnNewRunner()
	b.OnNewRunner()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	r := a.Launch("apply", "-auto-approve")
	select {
	case <-gate.Full:
	case <-ctx.Done():
		t.Fatalf("the creates never reached the gate:\n%s", r.Output())
	}
	acctest.KillTF(r)
	if err := gate.RunnerLost(ctx); err != nil {
		t.Fatal(err)
	}
	leftovers := answered + accepted

	b.Must(ctx, "apply", "-auto-approve")
	if st := m.Stats(); st.LiveSandboxes != leftovers+size || st.SandboxesCreated != leftovers+size {
		t.Fatalf("workspace B adopted workspace A's leftovers: %d live, %d created; want %d and %d",
			st.LiveSandboxes, st.SandboxesCreated, leftovers+size, leftovers+size)
	}
	a.OnNewRunner()
	a.Must(ctx, "apply", "-auto-approve")
	if st := m.Stats(); st.LiveSandboxes != 2*size || st.SandboxesCreated != 2*size {
		t.Errorf("after A's recovering apply: %d live, %d created; want %d and %d (A's %d leftovers adopted)",
			st.LiveSandboxes, st.SandboxesCreated, 2*size, 2*size, leftovers)
	}
	idsA, idsB := a.FleetMembers(ctx, "prime_sandbox_fleet.eval"), b.FleetMembers(ctx, "prime_sandbox_fleet.eval")
	if len(idsA) != size || len(idsB) != size {
		t.Fatalf("A holds %d members and B %d, want %d each", len(idsA), len(idsB), size)
	}
	for _, id := range idsA {
		if slices.Contains(idsB, id) {
			t.Errorf("sandbox %s is a member of both workspaces' fleets", id)
		}
	}

	b.Must(ctx, "destroy", "-auto-approve")
	if live := m.Stats().LiveSandboxes; live != size {
		t.Errorf("destroying B left %d sandboxes live, want A's %d", live, size)
	}
	a.Must(ctx, "destroy", "-auto-approve")
	if live := m.Stats().LiveSandboxes; live != 0 {
		t.Errorf("%d sandboxes live after both destroys", live)
	}
}
