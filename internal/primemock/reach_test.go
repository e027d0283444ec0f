package primemock_test

import (
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

func TestReachabilityTable(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: 10 * time.Millisecond, ApplyDelay: 5 * time.Millisecond})
	type probe struct {
		host string
		want bool
	}
	for _, tc := range []struct {
		name   string
		allow  []string
		deny   []string
		probes []probe
	}{
		{"open", nil, []string{}, []probe{{"example.com", true}, {"google.com", true}, {"10.1.2.3", true}}},
		{"allow example.com", []string{"example.com"}, nil, []probe{
			{"example.com", true}, {"EXAMPLE.com.", true}, {"www.example.com", false}, {"google.com", false}, {"93.184.216.34", false},
		}},
		{"allow nothing", []string{}, nil, []probe{{"example.com", false}, {"1.1.1.1", false}}},
		{"block example.com", nil, []string{"example.com"}, []probe{
			{"example.com", false}, {"sub.example.com", true}, {"google.com", true},
		}},
		{"wildcard is not the apex", []string{"*.example.com"}, nil, []probe{
			{"example.com", false}, {"a.example.com", true}, {"a.b.example.com", true}, {"notexample.com", false},
		}},
		{"CIDR", []string{"10.0.0.0/8", "1.2.3.4"}, nil, []probe{
			{"10.1.2.3", true}, {"11.0.0.1", false}, {"1.2.3.4", true}, {"1.2.3.5", false}, {"example.com", false},
		}},
		{"block a CIDR", nil, []string{"169.254.0.0/16"}, []probe{{"169.254.169.254", false}, {"8.8.8.8", true}, {"metadata.internal", true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := h.runningVM()
			h.putPolicy(id, tc.allow, tc.deny)
			for _, p := range tc.probes {
				if got := h.reachable(id, p.host); got != p.want {
					t.Errorf("%s reachable = %v, want %v", p.host, got, p.want)
				}
			}
		})
	}
}

func TestReachabilityStates(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: 10 * time.Millisecond, ApplyDelay: 5 * time.Millisecond})
	// Create-time lists fail closed until applied, then hold.
	id := h.create(map[string]any{"network_allowlist": []string{"example.com"}})
	if h.reachable(id, "example.com") {
		t.Error("a PENDING sandbox reaches nothing")
	}
	h.waitEvent(primemock.EventSandboxRunning, id)
	h.waitEvent(primemock.EventPolicyApplied, id, 0)
	if !h.reachable(id, "example.com") || h.reachable(id, "google.com") {
		t.Error("applied create-time allowlist not enforced")
	}
	// A VM never given a policy is open.
	c := h.running(map[string]any{})
	if !h.reachable(c, "anything.example") {
		t.Error("a RUNNING VM without a policy reaches everything")
	}
	// A deleted sandbox reaches nothing; unknown ids are 404.
	h.req("DELETE", "/api/v1/sandbox/"+id, nil).must(t, 200)
	if h.reachable(id, "example.com") {
		t.Error("a TERMINATED sandbox reaches nothing")
	}
	h.req("GET", "/_mock/sandbox/nope/reachable?host=a.com", nil).must(t, 404)
	h.req("GET", "/_mock/sandbox/"+c+"/reachable", nil).must(t, 422)
	if r, found := h.srv.Reachable(c, "a.com"); !r || !found {
		t.Errorf("Reachable() = %v, %v", r, found)
	}
}
