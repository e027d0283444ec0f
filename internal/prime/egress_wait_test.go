package prime

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock drives a cohortWait's schedule without sleeping.
type fakeClock struct{ t time.Time }

func (f *fakeClock) now() time.Time            { return f.t }
func (f *fakeClock) set(elapsed time.Duration) { f.t = time.Unix(0, 0).Add(elapsed) }

func newTestWait(est *latencyEstimate, p cohortParams) (*cohortWait, *fakeClock) {
	clk := &fakeClock{}
	clk.set(0)
	w := est.joinCohort(p, clk.now())
	w.now = clk.now
	return w, clk
}

// checkTimes runs a wait's schedule against an event at elapsed time event
// (a request sent at or after it sees it) and returns when each request was
// sent.
func checkTimes(w *cohortWait, clk *fakeClock, event time.Duration) []time.Duration {
	var at []time.Duration
	elapsed := time.Duration(0)
	for range 10000 {
		elapsed += w.Delay(len(at))
		clk.set(elapsed)
		if !w.due() {
			continue
		}
		at = append(at, elapsed)
		w.asked(elapsed, elapsed < event)
		if elapsed >= event {
			w.done(elapsed)
			return at
		}
	}
	panic("the schedule never reached the event")
}

// A wait alone knows nothing and scouts: it checks within 100 ms, then at
// most max(50 ms, 5 %) apart, so it sees the event within a step. The
// doubling backoff it replaces (80, 240, 560, 1200 ms) saw a policy applied
// after 500 ms at 1.2 s — what the three-sandbox demo showed.
func TestEgressScoutChecksFinelyWhileNothingIsKnown(t *testing.T) {
	for _, event := range []time.Duration{30 * time.Millisecond, 500 * time.Millisecond, time.Second, 10 * time.Second, 40 * time.Second} {
		est := &latencyEstimate{}
		w, clk := newTestWait(est, egressCohort)
		if !w.scout {
			t.Fatal("the first wait of a client is not a scout")
		}
		at := checkTimes(w, clk, event)
		if at[0] > 100*time.Millisecond {
			t.Errorf("event %s: first check at %s, want ≤ 100 ms", event, at[0])
		}
		seen := at[len(at)-1]
		if late, bound := seen-event, min(EgressApplyBackoff.Max, max(egressFineStep, event/20)); late > bound {
			t.Errorf("event %s: seen at %s, %s late, want ≤ %s", event, seen, late, bound)
		}
		if checks, bound := len(at), 80+int(event/EgressApplyBackoff.Max); checks > bound {
			t.Errorf("event %s: %d checks, want ≤ %d", event, checks, bound)
		}
		if _, ok := est.expected(); !ok {
			t.Errorf("event %s: the scout taught nothing", event)
		}
	}
}

// Waits that start together share the work: two scout, the others make no
// request until a scout has seen its policy applied, then check once at
// that time after their own start.
func TestEgressFollowersWaitForWhatIsKnown(t *testing.T) {
	est := &latencyEstimate{}
	s1, _ := newTestWait(est, egressCohort)
	s2, _ := newTestWait(est, egressCohort)
	f, clk := newTestWait(est, egressCohort)
	if !s1.scout || !s2.scout || f.scout {
		t.Fatalf("roles: %t %t %t, want two scouts and a follower", s1.scout, s2.scout, f.scout)
	}
	// Nothing known: the follower only hops (no request) until its safety
	// check, seconds away.
	for _, e := range []time.Duration{0, 300 * time.Millisecond, time.Second} {
		clk.set(e)
		if f.due() {
			t.Fatalf("a follower asks at %s while nothing is known", e)
		}
		if d := f.Delay(0); d > egressCohort.hop {
			t.Fatalf("a follower sleeps %s at once, want ≤ a hop (%s): it must notice what scouts learn", d, egressCohort.hop)
		}
	}
	if got := f.next(); got != egressCohort.safety.Initial {
		t.Fatalf("follower's own check at %s, want %s", got, egressCohort.safety.Initial)
	}
	// A scout sees its policy applied 1.02 s after its PUT.
	s1.asked(time.Second, true)
	s1.asked(1020*time.Millisecond, false)
	s1.done(1020 * time.Millisecond)
	clk.set(1100 * time.Millisecond)
	if got := f.next(); got != 1020*time.Millisecond {
		t.Fatalf("follower's check at %s, want the scout's 1.02 s", got)
	}
	if !f.due() {
		t.Fatal("the follower does not ask once the scout's time has passed")
	}
	// Not applied yet at its one check: small steps, then growing ones.
	f.asked(1100*time.Millisecond, true)
	if d, want := f.next()-1100*time.Millisecond, max(egressFineStep, 1020*time.Millisecond/20); d != want {
		t.Fatalf("after a miss at the expected time the next check is %s later, want %s", d, want)
	}
	f.asked(5*time.Second, true)
	if d := f.next() - 5*time.Second; d != 500*time.Millisecond {
		t.Fatalf("a late policy is checked %s apart at 5 s, want 500 ms", d)
	}
	f.asked(30*time.Second, true)
	if d := f.next() - 30*time.Second; d != EgressApplyBackoff.Max {
		t.Fatalf("a late policy is checked %s apart at 30 s, want the cap %s", d, EgressApplyBackoff.Max)
	}
}

// Once something is known, one wait in sixteen scouts from half the expected
// time, so a platform that became faster pulls the estimate down; a
// follower that saw its policy at its one check teaches nothing (it would
// only confirm the estimate).
func TestEgressEstimateFollowsAFasterPlatform(t *testing.T) {
	est := &latencyEstimate{}
	for range 5 {
		est.recordUpper(time.Second)
	}
	scouts := 0
	for range 160 {
		w, clk := newTestWait(est, egressCohort)
		if w.scout {
			scouts++
		}
		checkTimes(w, clk, 200*time.Millisecond)
	}
	if scouts < 5 || scouts > 12 {
		t.Fatalf("%d scouts in 160 waits, want about one in %d", scouts, egressCohort.every)
	}
	e, _ := est.expected()
	if e > 300*time.Millisecond {
		t.Fatalf("estimate %s after 160 policies applied within 200 ms, want it to come down", e)
	}
	// And a slower platform pushes it up through the followers that missed.
	for range 16 {
		w, clk := newTestWait(est, egressCohort)
		checkTimes(w, clk, 2*time.Second)
	}
	if e, _ := est.expected(); e < 2*time.Second {
		t.Fatalf("estimate %s after 16 policies applied at 2 s, want ≥ 2 s", e)
	}
}

// A follower with an estimate makes one request when the platform is as
// fast as before.
func TestEgressFollowerChecksOnceAtTheExpectedTime(t *testing.T) {
	est := &latencyEstimate{}
	est.recordUpper(time.Second)
	est.joined, est.lastScout = 1, 1
	w, clk := newTestWait(est, egressCohort)
	if w.scout {
		t.Fatal("the second wait after a scout scouts")
	}
	if at := checkTimes(w, clk, 990*time.Millisecond); len(at) != 1 || at[0] != time.Second {
		t.Fatalf("checks at %v, want one at 1 s", at)
	}
	if est.scouts != 0 || len(est.upper) != 1 {
		t.Fatalf("after the wait: %d scouts, %d samples; want 0 and 1", est.scouts, len(est.upper))
	}
}

// A burst of policy waits against a platform that applies every policy at
// the same moment: the scouts find it, every other wait asks exactly once.
func TestWaitForEgressAppliedBurstCostsOneRequestPerFollower(t *testing.T) {
	saved := egressCohort
	egressCohort.safety = Backoff{Initial: time.Hour, Factor: 1, Max: time.Hour} // no follower asks on its own
	t.Cleanup(func() { egressCohort = saved })

	const waits = 30
	appliedAt := time.Now().Add(800 * time.Millisecond)
	var mu sync.Mutex
	gets := map[string]int{}
	c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := strings.Split(strings.TrimPrefix(r.URL.Path, "/api/v1/sandbox/"), "/")[0]
		mu.Lock()
		gets[id]++
		mu.Unlock()
		applied := !time.Now().Before(appliedAt)
		ag := int64(0)
		if applied {
			ag = 1
		}
		writeJSON(w, 200, EgressPolicyStatus{Policy: EgressPolicy{Allowlist: []string{}}, Generation: 1, AppliedGeneration: ag, Applied: applied})
	}), nil)
	ids := make([]string, waits)
	errs := make(chan error, waits)
	for i := range ids {
		ids[i] = fmt.Sprintf("sbx%02d", i)
		go func() {
			_, err := c.WaitForEgressApplied(testContext(t), ids[i], 1, &EgressPolicyStatus{Generation: 1, AppliedGeneration: 0})
			errs <- err
		}()
		// Start the waits one after the other, so a later wait never started
		// before an earlier one (the scouts are the first two).
		for {
			c.egressLatency.mu.Lock()
			joined := c.egressLatency.joined
			c.egressLatency.mu.Unlock()
			if joined == i+1 {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	for range waits {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	total := 0
	for i, id := range ids {
		total += gets[id]
		if i >= egressCohort.scouts && gets[id] != 1 {
			t.Errorf("follower %s asked %d times, want once", id, gets[id])
		}
	}
	if gets[ids[0]] < 2 {
		t.Errorf("the first scout asked %d times: it did not scout", gets[ids[0]])
	}
	t.Logf("%d waits, %d requests", waits, total)
}

// An answer already applied costs no request.
func TestWaitForEgressAppliedTakesAnAppliedAnswer(t *testing.T) {
	var gets atomic.Int32
	c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gets.Add(1)
		writeJSON(w, 200, EgressPolicyStatus{Policy: EgressPolicy{Allowlist: []string{}}, Generation: 1, AppliedGeneration: 1, Applied: true})
	}), nil)
	if _, err := c.WaitForEgressApplied(testContext(t), "sbx", 1, &EgressPolicyStatus{Generation: 1, AppliedGeneration: 1, Applied: true}); err != nil {
		t.Fatal(err)
	}
	if gets.Load() != 0 {
		t.Fatal("an applied PUT answer was polled again")
	}
	c.egressLatency.mu.Lock()
	defer c.egressLatency.mu.Unlock()
	if c.egressLatency.joined != 0 {
		t.Fatal("an applied PUT answer joined the cohort")
	}
}

// A wait that ends without seeing its policy (fail-closed) leaves the
// cohort: its scout slot is free and it teaches nothing.
func TestWaitForEgressAppliedFailsClosed(t *testing.T) {
	c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, EgressPolicyStatus{Policy: EgressPolicy{Allowlist: []string{}}, Generation: 1, AppliedGeneration: -1})
	}), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	st, err := c.WaitForEgressApplied(ctx, "sbx", 1, nil)
	var na *EgressNotAppliedError
	if !errors.As(err, &na) || na.Want != 1 || na.Last.AppliedGeneration != -1 || st == nil {
		t.Fatalf("err = %v, want an EgressNotAppliedError", err)
	}
	c.egressLatency.mu.Lock()
	scouts, samples := c.egressLatency.scouts, len(c.egressLatency.upper)
	c.egressLatency.mu.Unlock()
	if scouts != 0 || samples != 0 {
		t.Fatalf("after a failed wait: %d scouts, %d samples; want 0 and 0", scouts, samples)
	}
	// An answer for an older generation never counts, even if applied.
	if (EgressPolicyStatus{Generation: 2, AppliedGeneration: 1, Applied: true}).Enforces(2) {
		t.Fatal("an older applied generation was taken for the newer one")
	}
}

// A follower that is waiting when a scout first learns the apply time asks
// at once, not at its next hop: a fleet's policies all start before
// anything is known, and a hop of lag per follower showed as ~25 ms more
// applied → seen at N=200 than at N=1000. Hops and safety checks are an
// hour here, so only the wake can make the follower ask.
func TestCohortFollowerWakesWhenTheEstimateIsLearned(t *testing.T) {
	slow := egressCohort
	slow.hop, slow.safety = time.Hour, Backoff{Initial: time.Hour, Factor: 1, Max: time.Hour}
	est := &latencyEstimate{}
	start := time.Now()
	scout := est.joinCohort(slow, start)
	_ = est.joinCohort(slow, start)
	follower := est.joinCohort(slow, start)
	if !scout.scout || follower.scout {
		t.Fatal("roles: want the first wait a scout and the third a follower")
	}
	asked := make(chan time.Duration, 1)
	sleeping := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_ = Poll(ctx, delaySignal{follower, sleeping}, func(context.Context) (bool, error) {
			if !follower.due() {
				return false, nil
			}
			asked <- follower.elapsed()
			return true, nil
		})
	}()
	<-sleeping // the follower has its hour-long delay: it sleeps
	scout.asked(10*time.Millisecond, false)
	scout.done(10 * time.Millisecond) // the apply takes 10 ms: the follower is due at once
	select {
	case <-asked:
	case <-time.After(time.Minute):
		t.Fatal("the follower did not ask once the scout's time was known (it slept its hop)")
	}
	// A later, larger bound does not wake anyone: no follower is due earlier.
	ch := est.sooner()
	est.mu.Lock()
	est.recordUpper(time.Second)
	est.mu.Unlock()
	select {
	case <-ch:
		t.Fatal("a larger upper bound woke the followers")
	default:
	}
}

// delaySignal is a cohort wait that reports its first Delay, so a test
// knows its waiter is about to sleep.
type delaySignal struct {
	*cohortWait
	first chan struct{}
}

func (d delaySignal) Delay(n int) time.Duration {
	v := d.cohortWait.Delay(n)
	if n == 0 {
		close(d.first)
	}
	return v
}
