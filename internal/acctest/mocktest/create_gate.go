package mocktest

import (
	"net/http"
	"net/http/httptest"
	"sync"

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
			close(g.Full)
		}
	}
	<-g.release
	http.Error(w, `{"detail":"runner lost"}`, http.StatusServiceUnavailable)
	return true
}

// Open lets every held create go, unprocessed, and later ones through.
func (g *CreateGate) Open() { g.once.Do(func() { close(g.release) }) }
