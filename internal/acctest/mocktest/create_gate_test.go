package mocktest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// A create the lost runner sent that the mock reads only after the loss
// is refused unprocessed, not made for nobody; once RunnerLost returns,
// creates (the next apply's) go through.
func TestCreateGateRefusesTheLostRunnersLateCreates(t *testing.T) {
	var m *Mock
	g := NewCreateGate(&m, 0, 0)
	m = NewHooked(t, Fast(), g.Hook)
	create := func() *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, prime.APIPrefix+"/sandbox", strings.NewReader(`{}`))
		if !g.Hook(w, r, nil) {
			w.Code = 0 // passed through to the mock
		}
		return w
	}
	g.lost.Store(true) // RunnerLost's first step: the loss
	g.once.Do(func() { close(g.release) })
	if w := create(); w.Code != http.StatusServiceUnavailable {
		t.Fatalf("a create read while the runner is being lost: %d, want 503", w.Code)
	}
	if err := g.RunnerLost(context.Background()); err != nil {
		t.Fatal(err)
	}
	if w := create(); w.Code != 0 {
		t.Fatalf("a create after RunnerLost: answered %d by the gate, want it passed to the mock", w.Code)
	}
	if n := m.Stats().SandboxesCreated; n != 0 {
		t.Fatalf("%d sandboxes made by the gate itself", n)
	}
}
