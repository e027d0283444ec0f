package provider

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// createGate is a mock hook that lets the platform answer the first
// answered creates, accept the next accepted ones without their answers
// ever reaching the provider (the runner is lost while they are in
// flight), and hold every later create until the test releases them,
// unprocessed: what a runner lost in the middle of a fleet's creates
// leaves on the platform.
type createGate struct {
	m                  **testMock
	answered, accepted int
	// match, when set, picks the creates the gate counts (by body); the
	// others pass.
	match func(body []byte) bool

	mu      sync.Mutex
	seen    int
	full    chan struct{} // closed once every accepted create was made
	release chan struct{}
	once    sync.Once
}

func newCreateGate(m **testMock, answered, accepted int) *createGate {
	return &createGate{m: m, answered: answered, accepted: accepted, full: make(chan struct{}), release: make(chan struct{})}
}

func (g *createGate) hook(w http.ResponseWriter, r *http.Request, body []byte) bool {
	if r.Method != http.MethodPost || r.URL.Path != prime.APIPrefix+"/sandbox" || (g.match != nil && !g.match(body)) {
		return false
	}
	select {
	case <-g.release:
		return false // the runner is gone: later creates are the next apply's
	default:
	}
	g.mu.Lock()
	g.seen++
	n := g.seen
	g.mu.Unlock()
	switch {
	case n <= g.answered:
		return false
	case n <= g.answered+g.accepted:
		(*g.m).Server.ServeHTTP(httptest.NewRecorder(), r) // made, the answer lost
		if n == g.answered+g.accepted {
			close(g.full)
		}
	}
	<-g.release
	http.Error(w, `{"detail":"runner lost"}`, http.StatusServiceUnavailable)
	return true
}

// open lets every held create go, unprocessed, and later ones through.
func (g *createGate) open() { g.once.Do(func() { close(g.release) }) }

// A fleet whose runner is lost while the platform has accepted some of its
// creates (some answered, some whose answers never arrived) and not the
// others: the next apply, on a new runner with the same state and an empty
// cache directory, adopts what the lost one created and creates the rest —
// exactly the configured members, no sandbox created twice — and destroy
// leaves none. The trial left 26 for 20, and 6 after destroy.
func TestAccSandboxFleet_lostRunnerAdoptsCreatesInFlight(t *testing.T) {
	cli := requireCLI(t)
	provider := devProvider(t)
	t.Parallel()
	const size, answered, accepted = 12, 3, 4
	var m *testMock
	gate := newCreateGate(&m, answered, accepted)
	m = newHookedMock(t, fastMockOptions(), gate.hook)
	defer gate.open()
	w := newMockWork(t, m, provider(), cli, fmt.Sprintf(`
provider "prime" {}

resource "prime_sandbox_fleet" "eval" {
  name_prefix  = "eval"
  size         = %d
  docker_image = "python:3.12-slim"
}
`, size))
	w.onNewRunner()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	r := w.start("apply", "-auto-approve")
	select {
	case <-gate.full:
	case <-ctx.Done():
		t.Fatalf("the creates never reached the gate:\n%s", r.Output())
	}
	killTF(r)
	gate.open()
	if n := m.Stats().SandboxesCreated; n != answered+accepted {
		t.Fatalf("%d sandboxes made before the loss, want %d", n, answered+accepted)
	}

	w.onNewRunner()
	out := w.must(ctx, "apply", "-auto-approve")
	st := m.Stats()
	if st.LiveSandboxes != size || st.SandboxesCreated != size {
		t.Errorf("after the recovering apply: %d live, %d created in all; want exactly %d of each (the lost apply's "+
			"%d adopted)\n%s", st.LiveSandboxes, st.SandboxesCreated, size, answered+accepted, out)
	}
	if ids := stateFleetMembers(ctx, t, w, "prime_sandbox_fleet.eval"); len(ids) != size {
		t.Errorf("the fleet holds %d members, want %d", len(ids), size)
	}
	if plan, code := w.run(ctx, "plan", "-detailed-exitcode"); code != 0 {
		t.Errorf("the plan after the recovering apply is not empty (exit %d):\n%s", code, plan)
	}
	w.must(ctx, "destroy", "-auto-approve")
	if live := m.Stats().LiveSandboxes; live != 0 {
		t.Errorf("%d sandboxes live after destroy", live)
	}
}

// The same for one prime_sandbox whose create was accepted and whose
// answer was lost with the runner.
func TestAccSandbox_lostRunnerAdoptsCreateInFlight(t *testing.T) {
	cli := requireCLI(t)
	provider := devProvider(t)
	t.Parallel()
	var m *testMock
	gate := newCreateGate(&m, 0, 1)
	m = newHookedMock(t, fastMockOptions(), gate.hook)
	defer gate.open()
	w := newMockWork(t, m, provider(), cli, `
provider "prime" {}

resource "prime_sandbox" "template" {
  name         = "template"
  docker_image = "python:3.12-slim"
  labels       = ["eval"]
}
`)
	w.onNewRunner()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	r := w.start("apply", "-auto-approve")
	select {
	case <-gate.full:
	case <-ctx.Done():
		t.Fatalf("the create never reached the gate:\n%s", r.Output())
	}
	killTF(r)
	gate.open()

	w.onNewRunner()
	w.must(ctx, "apply", "-auto-approve")
	if st := m.Stats(); st.LiveSandboxes != 1 || st.SandboxesCreated != 1 {
		t.Errorf("after the recovering apply: %d live, %d created; want 1 and 1", st.LiveSandboxes, st.SandboxesCreated)
	}
	state := w.must(ctx, "state", "show", "prime_sandbox.template")
	if strings.Contains(state, "tfprime-") {
		t.Errorf("the provider's own labels reached the resource's labels:\n%s", state)
	}
	if plan, code := w.run(ctx, "plan", "-detailed-exitcode"); code != 0 {
		t.Errorf("the plan after the recovering apply is not empty (exit %d):\n%s", code, plan)
	}
	w.must(ctx, "destroy", "-auto-approve")
	if live := m.Stats().LiveSandboxes; live != 0 {
		t.Errorf("%d sandboxes live after destroy", live)
	}
}

// stateFleetMembers are the member sandbox IDs a fleet's state holds, sorted.
func stateFleetMembers(ctx context.Context, t *testing.T, w *tfWork, addr string) []string {
	t.Helper()
	state, err := w.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range state {
		if r.Address != addr {
			continue
		}
		if m, ok := r.Values["sandbox_ids"].(map[string]any); ok {
			for _, v := range m {
				ids = append(ids, fmt.Sprint(v))
			}
		}
	}
	slices.Sort(ids)
	return ids
}
