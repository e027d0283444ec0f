package prime

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestEgressScheduleWithoutEstimateIsTheBackoff(t *testing.T) {
	nominal := EgressApplyBackoff
	nominal.Jitter = 0
	// An expected time too short to plan around falls back to the backoff.
	s := learnedSchedule{base: EgressApplyBackoff, expected: 100 * time.Millisecond, minStep: egressFineStep}
	for n := range 8 {
		got, want := s.Delay(n), nominal.Delay(n)
		if got < want*8/10 || got > want*12/10 {
			t.Fatalf("Delay(%d) = %s, want %s ±20 %%", n, got, want)
		}
	}
	if nominal.Delay(0) > 100*time.Millisecond || nominal.Delay(10) != time.Second {
		t.Fatal("EgressApplyBackoff must check within 100 ms and cap at 1 s")
	}
}

// With an estimate, checks cluster around the expected apply time: the
// first still within 100 ms, then from 90 % of it in small steps, and the
// total number of checks up to 150 % stays bounded.
func TestEgressScheduleClustersAroundExpected(t *testing.T) {
	for _, expected := range []time.Duration{time.Second, 10 * time.Second} {
		s := learnedSchedule{base: EgressApplyBackoff, expected: expected, minStep: egressFineStep}
		if d := s.Delay(0); d > 100*time.Millisecond {
			t.Fatalf("first check after %s, want ≤ 100 ms", d)
		}
		var at time.Duration
		checks := 0
		maxGapNearExpected := time.Duration(0)
		for n := 0; at < expected*15/10; n++ {
			d := s.Delay(n)
			if at >= expected*9/10 && at < expected*14/10 && d > maxGapNearExpected {
				maxGapNearExpected = d
			}
			at += d
			checks++
		}
		if checks > 20 {
			t.Errorf("expected %s: %d checks up to 150 %%, want ≤ 20", expected, checks)
		}
		if limit := max(egressFineStep, expected/20); maxGapNearExpected > limit {
			t.Errorf("expected %s: a gap of %s near the expected time, want ≤ %s", expected, maxGapNearExpected, limit)
		}
	}
}

// Each successful wait teaches the client one apply sample, a lower bound
// of the apply time (the last moment it was seen not yet applied).
func TestWaitForEgressAppliedRecordsApplySamples(t *testing.T) {
	var gets atomic.Int32
	c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := gets.Add(1)
		applied := n%2 == 0 // every second GET finds the policy applied
		ag := int64(0)
		if applied {
			ag = 1
		}
		writeJSON(w, 200, EgressPolicyStatus{Policy: EgressPolicy{Allowlist: []string{}}, Generation: 1, AppliedGeneration: ag, Applied: applied})
	}), nil)
	for i := 1; i <= 3; i++ {
		if _, err := c.WaitForEgressApplied(testContext(t), "sbx", 1, &EgressPolicyStatus{Generation: 1, AppliedGeneration: 0}); err != nil {
			t.Fatal(err)
		}
		c.egressLatency.mu.Lock()
		n := len(c.egressLatency.recent)
		c.egressLatency.mu.Unlock()
		if n != i {
			t.Fatalf("after %d waits: %d samples", i, n)
		}
	}
	// An answer already applied costs no request and teaches nothing.
	before := gets.Load()
	if _, err := c.WaitForEgressApplied(testContext(t), "sbx", 1, &EgressPolicyStatus{Generation: 1, AppliedGeneration: 1, Applied: true}); err != nil {
		t.Fatal(err)
	}
	if gets.Load() != before {
		t.Fatal("an applied PUT answer was polled again")
	}
}

// With a learned apply time the second check comes at 90 % of it, a delay
// the plain doubling backoff (160 ms ±20 %) never waits.
func TestWaitForEgressAppliedChecksNearTheLearnedApplyTime(t *testing.T) {
	const expected = time.Second
	var mu sync.Mutex
	var at []time.Time
	c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		at = append(at, time.Now())
		applied := len(at) >= 2
		mu.Unlock()
		ag := int64(0)
		if applied {
			ag = 1
		}
		writeJSON(w, 200, EgressPolicyStatus{Policy: EgressPolicy{Allowlist: []string{}}, Generation: 1, AppliedGeneration: ag, Applied: applied})
	}), nil)
	for range 3 {
		c.egressLatency.record(expected)
	}
	if _, err := c.WaitForEgressApplied(testContext(t), "sbx", 1, &EgressPolicyStatus{Generation: 1, AppliedGeneration: 0}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(at) != 2 {
		t.Fatalf("%d GETs, want 2", len(at))
	}
	if gap, want := at[1].Sub(at[0]), expected*9/10-EgressApplyBackoff.Initial; gap < want {
		t.Fatalf("second check %s after the first, want at least %s", gap, want)
	}
}

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
	// An answer for an older generation never counts, even if applied.
	if (EgressPolicyStatus{Generation: 2, AppliedGeneration: 1, Applied: true}).Enforces(2) {
		t.Fatal("an older applied generation was taken for the newer one")
	}
}
