package primemock_test

import (
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// With RequestEvents, every /api/v1 request the rate limits count is an
// api_request event naming its route, its sandbox and the sandboxes a
// batch names; a request refused with 429 counts nowhere, and so is no
// event. Off (the default), there are none.
func TestRequestEvents(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: 10 * time.Millisecond})
	a := h.running(map[string]any{})
	b := h.running(map[string]any{})
	h.req("GET", "/api/v1/sandbox/"+a+"/egress-policy", nil).must(t, 200)
	if n := len(requestEvents(h.srv)); n != 0 {
		t.Fatalf("%d api_request events while RequestEvents is off", n)
	}
	h.srv.Configure(func(o *primemock.Options) {
		o.RequestEvents, o.NoRateLimits, o.RateLimitScale = true, false, 0.01
	})
	h.req("GET", "/api/v1/sandbox/"+a+"/egress-policy", nil).must(t, 200)
	h.req("POST", "/api/v1/sandbox/status:batchGet", map[string]any{"sandbox_ids": []string{a, b}}).must(t, 200)
	h.req("PUT", "/api/v1/sandbox/"+b+"/egress-policy", map[string]any{"allowlist": []string{}, "denylist": nil}).must(t, 202)
	h.req("PUT", "/api/v1/sandbox/"+b+"/egress-policy", map[string]any{"allowlist": []string{}, "denylist": nil}).must(t, 429)
	h.req("DELETE", "/api/v1/sandbox", map[string]any{"sandbox_ids": []string{a, b}}).must(t, 200)
	type ev struct {
		route, sandbox string
		size           int64
	}
	var got []ev
	for _, e := range requestEvents(h.srv) {
		got = append(got, ev{e.Route, e.SandboxID, e.Size})
	}
	want := []ev{
		{"GET /api/v1/sandbox/{id}/egress-policy", a, 0},
		{"POST /api/v1/sandbox/status:batchGet", "", 2},
		{"PUT /api/v1/sandbox/{id}/egress-policy", b, 0},
		{"DELETE /api/v1/sandbox", "", 2},
	}
	if len(got) != len(want) {
		t.Fatalf("events %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

func requestEvents(s *primemock.Server) []primemock.Event {
	var out []primemock.Event
	for _, e := range s.Events() {
		if e.Type == primemock.EventAPIRequest {
			out = append(out, e)
		}
	}
	return out
}
