package mocktest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// CreateGate is a mock hook that lets the platform answer the first
// answered creates, accept the next accepted ones without their answers
// ever reaching the provider (the runner is lost while they are in
// flight), and hold every later create until the test releases them,
// unprocessed: what a runner lost in the middle of a fleet's creates
// leaves on the platform.
type CreateGate struct {
	m                  **Mock
	answered, accepted int
	// Match, when set, picks the creates the gate counts (by body); the
	// others pass.
	Match func(body []byte) bool

	mu      sync.Mutex
	seen    int
	Full    chan struct{} // closed once every accepted create was made
	release chan struct{}
	once    sync.Once
	// lost: the runner is gone and its connections are being dropped;
	// every create is refused unprocessed until Open.
	lost atomic.Bool
}

// NewCreateGate is a gate on the mock *m (set once it is started).
func NewCreateGate(m **Mock, answered, accepted int) *CreateGate {
	return &CreateGate{m: m, answered: answered, accepted: accepted, Full: make(chan struct{}), release: make(chan struct{})}
}

// Hook is the gate as a mock hook (NewHooked).
func (g *CreateGate) Hook(w http.ResponseWriter, r *http.Request, body []byte) bool {
	if r.Method != http.MethodPost || r.URL.Path != prime.APIPrefix+"/sandbox" || (g.Match != nil && !g.Match(body)) {
		return false
	}
	select {
	case <-g.release:
		if g.lost.Load() {
			// Sent by the lost runner, read only now: never made.
			http.Error(w, `{"detail":"runner lost"}`, http.StatusServiceUnavailable)
			return true
		}
		return false // later creates are the next apply's
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
			close(g.Full)
		}
	}
	<-g.release
	http.Error(w, `{"detail":"runner lost"}`, http.StatusServiceUnavailable)
	return true
}

// Open lets every held create go, unprocessed, and later ones through.
func (g *CreateGate) Open() {
	g.lost.Store(false)
	g.once.Do(func() { close(g.release) })
}

// RunnerLost is the end of the lost runner (call it once its Terraform is
// killed): every create it sent goes unprocessed, held or still in flight
// (the mock's client connections are dropped and drained first, so none
// of its requests can reach the mock after this returns), and then later
// creates, the next apply's, go through.
func (g *CreateGate) RunnerLost(ctx context.Context) error {
	g.lost.Store(true)
	g.once.Do(func() { close(g.release) })
	if err := (*g.m).DropClients(ctx); err != nil {
		return err
	}
	g.Open()
	return nil
}
