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

// A fleet's later waits notice the apply soon after it happens: the first
// policies teach the client the data plane's pace.
func TestWaitForEgressAppliedLearnsTheApplyTime(t *testing.T) {
	const applyAfter = 600 * time.Millisecond
	var mu sync.Mutex
	putAt := time.Time{}
	var gets atomic.Int32
	c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gets.Add(1)
		mu.Lock()
		applied := time.Since(putAt) >= applyAfter
		mu.Unlock()
		ag := int64(0)
		if applied {
			ag = 1
		}
		writeJSON(w, 200, EgressPolicyStatus{Policy: EgressPolicy{Allowlist: []string{}}, Generation: 1, AppliedGeneration: ag, Applied: applied})
	}), nil)
	var lateness []time.Duration
	for range 6 {
		mu.Lock()
		putAt = time.Now()
		mu.Unlock()
		if _, err := c.WaitForEgressApplied(context.Background(), "sbx", 1, &EgressPolicyStatus{Generation: 1, AppliedGeneration: 0}); err != nil {
			t.Fatal(err)
		}
		lateness = append(lateness, time.Since(putAt)-applyAfter)
	}
	// The plain doubling backoff sees a 600 ms apply at ~1.2 s; once learnt,
	// it is seen within a fine step or two (generous bound for busy CI).
	for _, late := range lateness[4:] {
		if late > 250*time.Millisecond {
			t.Fatalf("applied seen %v late after learning (all: %v)", late, lateness)
		}
	}
	t.Logf("lateness per wait: %v; %d GETs", lateness, gets.Load())
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
