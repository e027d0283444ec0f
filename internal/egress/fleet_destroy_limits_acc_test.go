package egress_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// publishedWindow is the platform's rate-limit window.
const publishedWindow = 60 * time.Second

// The destroy of a whole evaluation of 3,000 members — the fleet and its
// policy — stays within the platform's published limits in every 60-second
// window: the members go in bulk deletes of at most 500 sandboxes (not
// 3,000 single deletes, 500 a minute per key), and each member's policy is
// read and written at most its per-sandbox limits (300 reads, 120 writes).
// The requests are counted from the mock's event log (api_request events),
// window by window; nothing here depends on how fast the machine is.
func TestAccFleetEgressPolicy_destroyOf3000StaysWithinPublishedLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("3,000 members")
	}
	acctest.FirstCLIOnly(t, "it counts the API requests of a 3,000-member destroy, which no CLI changes")
	const n = 3000
	o := mocktest.Fast()
	o.RequestEvents = true
	m := mocktest.New(t, o)
	var applied int64 // the last event of the apply steps
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy: func(*terraform.State) error {
			if live := m.Stats().LiveSandboxes; live != 0 {
				return fmt.Errorf("%d sandboxes left after the destroy", live)
			}
			var destroy []primemock.Event
			for _, e := range m.Events() {
				if e.Seq > applied && e.Type == primemock.EventAPIRequest {
					destroy = append(destroy, e)
				}
			}
			checkDestroyWindows(t, destroy, n)
			return nil
		},
		Steps: []resource.TestStep{{
			Config: m.Config(acctest.SandboxFleetHCL("eval", "limits", n) + `
resource "prime_fleet_egress_policy" "lock" {
  sandbox_ids = prime_sandbox_fleet.eval.sandbox_ids
  allow       = ["example.com"]
}
`),
			Check: func(*terraform.State) error {
				evs := m.Events()
				applied = evs[len(evs)-1].Seq
				return nil
			},
		}},
	})
}

// checkDestroyWindows checks a destroy's requests against the published
// limits, per 60-second window: per API key, single deletes (500), bulk
// deletes (50, each naming at most 500 sandboxes) and status lookups
// (30,000, a batch counting each sandbox it names); per sandbox, egress
// reads (300) and writes (120).
func checkDestroyWindows(t *testing.T, evs []primemock.Event, n int) {
	t.Helper()
	perKey := map[string][]time.Time{}
	perSandbox := map[string]map[string][]time.Time{}
	var lookups []time.Time
	for _, e := range evs {
		switch e.Route {
		case "DELETE /api/v1/sandbox":
			if e.Size > 500 {
				t.Errorf("a bulk delete named %d sandboxes, over the platform's 500", e.Size)
			}
			perKey[e.Route] = append(perKey[e.Route], e.Time)
		case "DELETE /api/v1/sandbox/{id}":
			perKey[e.Route] = append(perKey[e.Route], e.Time)
		case "GET /api/v1/sandbox/{id}/egress-policy", "PUT /api/v1/sandbox/{id}/egress-policy":
			if perSandbox[e.Route] == nil {
				perSandbox[e.Route] = map[string][]time.Time{}
			}
			perSandbox[e.Route][e.SandboxID] = append(perSandbox[e.Route][e.SandboxID], e.Time)
		case "POST /api/v1/sandbox/status:batchGet":
			for range e.Size {
				lookups = append(lookups, e.Time)
			}
		case "GET /api/v1/sandbox/{id}":
			lookups = append(lookups, e.Time)
		}
	}
	for route, limit := range map[string]int{"DELETE /api/v1/sandbox/{id}": 500, "DELETE /api/v1/sandbox": 50} {
		if got := mostInAWindow(perKey[route]); got > limit {
			t.Errorf("%s: %d requests in one minute, over the published %d per key", route, got, limit)
		}
	}
	if got := mostInAWindow(lookups); got > 30000 {
		t.Errorf("%d status lookups in one minute, over the published 30,000 per key", got)
	}
	for route, limit := range map[string]int{"GET /api/v1/sandbox/{id}/egress-policy": 300, "PUT /api/v1/sandbox/{id}/egress-policy": 120} {
		worst, at := 0, ""
		for id, times := range perSandbox[route] {
			if got := mostInAWindow(times); got > worst {
				worst, at = got, id
			}
		}
		if worst > limit {
			t.Errorf("%s: sandbox %s got %d requests in one minute, over the published %d per sandbox", route, at, worst, limit)
		}
	}
	// What the destroy is made of: one bulk delete per 500 members, and the
	// restore's read and write per member (besides the refresh's read).
	if got, want := len(perKey["DELETE /api/v1/sandbox"]), (n+499)/500; got != want {
		t.Errorf("%d bulk deletes, want %d", got, want)
	}
	if got := len(perKey["DELETE /api/v1/sandbox/{id}"]); got != 0 {
		t.Errorf("%d single deletes, want none", got)
	}
	if got := len(perSandbox["PUT /api/v1/sandbox/{id}/egress-policy"]); got != n {
		t.Errorf("restores written on %d sandboxes, want %d", got, n)
	}
	t.Logf("destroy of %d members: %d bulk deletes, %d egress writes, most egress reads of one sandbox in a minute %d, "+
		"most status lookups in a minute %d", n, len(perKey["DELETE /api/v1/sandbox"]),
		countAll(perSandbox["PUT /api/v1/sandbox/{id}/egress-policy"]),
		mostOfAny(perSandbox["GET /api/v1/sandbox/{id}/egress-policy"]), mostInAWindow(lookups))
}

// mostInAWindow is the most of times (in any order) that fall in one
// publishedWindow.
func mostInAWindow(times []time.Time) int {
	ts := slices.Clone(times)
	slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
	most, first := 0, 0
	for last := range ts {
		for ts[last].Sub(ts[first]) >= publishedWindow {
			first++
		}
		most = max(most, last-first+1)
	}
	return most
}

func mostOfAny(bySandbox map[string][]time.Time) int {
	most := 0
	for _, times := range bySandbox {
		most = max(most, mostInAWindow(times))
	}
	return most
}

func countAll(bySandbox map[string][]time.Time) int {
	total := 0
	for _, times := range bySandbox {
		total += len(times)
	}
	return total
}

// The window count itself: requests a minute apart are in different
// windows, requests within one are in the same.
func TestMostInAWindow(t *testing.T) {
	at := time.Unix(1_000_000, 0)
	ts := []time.Time{at.Add(2 * time.Minute), at, at.Add(59 * time.Second), at.Add(time.Minute), at.Add(61 * time.Second)}
	if got := mostInAWindow(ts); got != 3 {
		t.Fatalf("most in a window %d, want 3 (59 s, 60 s and 61 s)", got)
	}
	if got := mostInAWindow(nil); got != 0 {
		t.Fatalf("most of none %d", got)
	}
}
