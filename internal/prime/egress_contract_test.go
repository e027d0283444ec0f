package prime

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The 2026 egress contract: a PUT is answered 202 once the desired
// generation is persisted, with a body whose schema is not published.

// TestPutEgressPolicyBodyAndAnswers: the body carries both lists and an
// empty rules object; any 2xx is taken, the generation from the answer when
// it has one, else from exactly one GET.
func TestPutEgressPolicyBodyAndAnswers(t *testing.T) {
	full := `{"policy":{"allowlist":["a.com"],"denylist":null},"generation":4,"applied_generation":3,"applied":false}`
	for _, tc := range []struct {
		name, answer string
		status       int
		wantGen      int64
		wantGETs     int32
	}{
		{"202 with the status", full, http.StatusAccepted, 4, 0},
		{"200 with the status", full, http.StatusOK, 4, 0},
		{"202 with the generation only", `{"generation":5}`, http.StatusAccepted, 5, 0},
		{"202 without a body", "", http.StatusAccepted, 7, 1},
		{"202 with another shape", `{"accepted":true}`, http.StatusAccepted, 7, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var gets atomic.Int32
			var body map[string]json.RawMessage
			c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet {
					gets.Add(1)
					writeJSON(w, 200, EgressPolicyStatus{Policy: EgressPolicy{Allowlist: []string{"a.com"}}, Generation: 7, AppliedGeneration: 6})
					return
				}
				raw, _ := io.ReadAll(r.Body)
				_ = json.Unmarshal(raw, &body)
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.answer)
			}), nil)
			st, err := c.PutEgressPolicy(testContext(t), "sbx", EgressPolicy{Allowlist: []string{"a.com"}})
			if err != nil {
				t.Fatal(err)
			}
			if st.Generation != tc.wantGen || st.Enforces(st.Generation) || gets.Load() != tc.wantGETs {
				t.Errorf("status %+v after %d GETs; want generation %d, not applied, %d GETs", st, gets.Load(), tc.wantGen, tc.wantGETs)
			}
			if string(body["rules"]) != "{}" || string(body["allowlist"]) != `["a.com"]` || string(body["denylist"]) != "null" {
				t.Errorf("PUT body %s", body)
			}
		})
	}
}

// TestPutEgressPolicyWithoutGenerationFailsClosed: when the answer lacks
// the generation and the GET shows another policy (another writer came in
// between), the generation to wait for is unknown: an error.
func TestPutEgressPolicyWithoutGenerationFailsClosed(t *testing.T) {
	c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			writeJSON(w, 200, EgressPolicyStatus{Policy: EgressPolicy{Denylist: []string{}}, Generation: 9, AppliedGeneration: 9, Applied: true})
			return
		}
		w.WriteHeader(http.StatusAccepted)
	}), nil)
	_, err := c.PutEgressPolicy(testContext(t), "sbx", EgressPolicy{Allowlist: []string{}})
	if err == nil || !strings.Contains(err.Error(), "another writer replaced it") {
		t.Fatalf("err = %v", err)
	}
}

// TestEgressWaitRidesOut429sWithinItsDeadline: checks answered 429 with a
// Retry-After longer than what is left of the wait are not retried past
// the deadline, and do not end the wait early: it fails closed at its
// deadline, naming the last 429.
func TestEgressWaitRidesOut429sWithinItsDeadline(t *testing.T) {
	var gets atomic.Int32
	c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gets.Add(1)
		w.Header().Set("Retry-After", "3600")
		writeJSON(w, http.StatusTooManyRequests, map[string]any{"detail": "Rate limit exceeded"})
	}), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.WaitForEgressApplied(ctx, "sbx", 2, &EgressPolicyStatus{Generation: 2, AppliedGeneration: 1})
	var na *EgressNotAppliedError
	if !errors.As(err, &na) || !errors.Is(na.LastError, ErrRateLimited) || na.Paused {
		t.Fatalf("err = %v, want a not-applied error naming the 429", err)
	}
	// Not a performance bound: an honoured Retry-After would take an hour,
	// a load a hundred times the machine's would not take a minute.
	if took := time.Since(start); took > time.Minute {
		t.Errorf("the wait took %s: a Retry-After of an hour extended a 600 ms deadline", took)
	}
	if gets.Load() < 2 {
		t.Errorf("%d checks: a 429 ended the wait", gets.Load())
	}
}

// TestPerSandbox429DoesNotPauseTheFleet: a 429 on a sandbox's own route
// (its limits are per sandbox) holds only that request; one on a shared
// route pauses every caller of the throttle.
func TestPerSandbox429DoesNotPauseTheFleet(t *testing.T) {
	var limited atomic.Bool
	limited.Store(true)
	c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/a/") && limited.Load() {
			w.Header().Set("Retry-After", "3600")
			writeJSON(w, http.StatusTooManyRequests, map[string]any{"detail": "Rate limit exceeded"})
			return
		}
		writeJSON(w, 200, EgressPolicyStatus{Policy: EgressPolicy{Denylist: []string{}}, Generation: 0, AppliedGeneration: -1})
	}), func(o *Options) { o.Throttle = NewThrottle(ThrottleOptions{RequestsPerSecond: 1000}) })
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := c.GetEgressPolicy(ctx, "a"); !errors.Is(err, ErrRateLimited) {
		t.Fatalf("sandbox a: %v", err)
	}
	start := time.Now()
	if _, err := c.GetEgressPolicy(testContext(t), "b"); err != nil {
		t.Fatal(err)
	}
	// Not a performance bound: waiting behind a's Retry-After would take an
	// hour; no load on the machine takes a minute.
	if took := time.Since(start); took > time.Minute {
		t.Errorf("sandbox b waited %s behind sandbox a's per-sandbox 429", took)
	}
}

// TestSandboxScopedPaths: which paths carry per-sandbox limits.
func TestSandboxScopedPaths(t *testing.T) {
	for req, want := range map[string]bool{
		"GET /sandbox/abc":                              true,
		"GET /sandbox/abc/egress-policy":                true,
		"PUT /sandbox/abc/egress-policy":                true,
		"POST /sandbox/abc/auth":                        true,
		"DELETE /sandbox/abc":                           false, // 500 a minute per API key
		"POST /sandbox":                                 false,
		"POST /sandbox/status:batchGet":                 false,
		"POST /sandbox/background-jobs/status:batchGet": false,
	} {
		method, path, _ := strings.Cut(req, " ")
		if got := sandboxScoped(method, path); got != want {
			t.Errorf("sandboxScoped(%s) = %t", req, got)
		}
	}
}
