package primemock_test

import (
	"testing"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// TimeOut ends a live sandbox as its lifetime deadline would: TIMEOUT,
// no longer live, and only once.
func TestTimeOutEndsALiveSandbox(t *testing.T) {
	h := newHarness(t, primemock.Options{})
	id := h.running(map[string]any{})
	if !h.srv.TimeOut(id) {
		t.Fatal("TimeOut of a running sandbox reported false")
	}
	if got := h.req("GET", "/api/v1/sandbox/"+id, nil).must(t, 200).body["status"]; got != "TIMEOUT" {
		t.Fatalf("status %v, want TIMEOUT", got)
	}
	if live := h.srv.Stats().LiveSandboxes; live != 0 {
		t.Fatalf("%d live sandboxes after the timeout, want 0", live)
	}
	if h.srv.TimeOut(id) || h.srv.TimeOut("no-such-sandbox") {
		t.Fatal("TimeOut of an ended or unknown sandbox reported true")
	}
}
