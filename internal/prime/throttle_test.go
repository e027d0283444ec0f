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

// The request rate is capped process-wide: 30 requests at 10/s with a burst
// of 10 take at least 2 s.
func TestThrottleCapsRequestRate(t *testing.T) {
	c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, sandboxJSON("x"))
	}), func(o *Options) { o.Throttle = NewThrottle(ThrottleOptions{RequestsPerSecond: 10}) })
	start := time.Now()
	var wg sync.WaitGroup
	for range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.GetSandbox(context.Background(), "x"); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if took := time.Since(start); took < 1900*time.Millisecond {
		t.Fatalf("30 requests at 10/s (burst 10) took %s, want ≥ 2 s", took)
	}
}

// No more than MaxConcurrent requests are in flight at once.
func TestThrottleCapsConcurrency(t *testing.T) {
	var inFlight, peak atomic.Int32
	c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond) // hold the request so others pile up
		inFlight.Add(-1)
		writeJSON(w, 200, sandboxJSON("x"))
	}), func(o *Options) { o.Throttle = NewThrottle(ThrottleOptions{MaxConcurrent: 3}) })
	var wg sync.WaitGroup
	for range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.GetSandbox(context.Background(), "x"); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if p := peak.Load(); p > 3 || p < 2 {
		t.Fatalf("peak in flight = %d, want ≤ 3 (and the cap reached)", p)
	}
}

func TestSharedThrottleIsPerOriginAndSettings(t *testing.T) {
	base := ThrottleOptions{RequestsPerSecond: 5, MaxConcurrent: 4}
	a := SharedThrottle("http://a", base)
	if a != SharedThrottle("http://a", base) {
		t.Fatal("same origin and settings must share one throttle")
	}
	tests := []struct {
		name   string
		origin string
		opts   ThrottleOptions
	}{
		{"origin", "http://b", base},
		{"requests per second", "http://a", ThrottleOptions{RequestsPerSecond: 6, MaxConcurrent: 4}},
		{"fractional requests per second", "http://a", ThrottleOptions{RequestsPerSecond: 5.5, MaxConcurrent: 4}},
		{"max concurrent", "http://a", ThrottleOptions{RequestsPerSecond: 5, MaxConcurrent: 5}},
		{"unlimited concurrency", "http://a", ThrottleOptions{RequestsPerSecond: 5}},
	}
	seen := map[*Throttle]string{a: "base"}
	for _, tt := range tests {
		got := SharedThrottle(tt.origin, tt.opts)
		if prev, dup := seen[got]; dup {
			t.Errorf("a different %s shares the throttle of %s", tt.name, prev)
		}
		seen[got] = tt.name
		if got != SharedThrottle(tt.origin, tt.opts) {
			t.Errorf("%s: the same origin and settings again must return the same throttle", tt.name)
		}
	}
}

func TestThrottleAcquireHonoursContext(t *testing.T) {
	th := NewThrottle(ThrottleOptions{MaxConcurrent: 1})
	release, err := th.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := th.Acquire(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire past the cap: err = %v, want the context's deadline", err)
	}
	release()
}

// A rate token due after the caller's deadline ends the wait with that
// deadline's cause, not with the limiter's own "would exceed context
// deadline" (a wait that ran out of time must read as its timeout).
func TestThrottleRateWaitPastTheDeadlineReportsItsCause(t *testing.T) {
	th := NewThrottle(ThrottleOptions{RequestsPerSecond: 1})
	if _, err := th.Acquire(context.Background()); err != nil { // the burst of one
		t.Fatal(err)
	}
	cause := errors.New("egress timeout (50ms) reached")
	ctx, cancel := context.WithTimeoutCause(context.Background(), 50*time.Millisecond, cause)
	defer cancel()
	if _, err := th.Acquire(ctx); !errors.Is(err, cause) {
		t.Fatalf("Acquire with the next token after the deadline: err = %v, want %v", err, cause)
	}
}

// A pause holds callers even when a slot is free: the slot is released (and
// shown to be free) before the pause is tested, so only the pause can make
// Acquire wait.
func TestThrottlePauseHoldsCallersWithAFreeSlot(t *testing.T) {
	th := NewThrottle(ThrottleOptions{MaxConcurrent: 1})
	release, err := th.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	release()
	release, err = th.Acquire(context.Background()) // the slot is free
	if err != nil {
		t.Fatal(err)
	}
	release()

	th.PauseFor(time.Hour)
	ctx, cancel := context.WithTimeoutCause(context.Background(), 20*time.Millisecond, errors.New("gave up waiting"))
	defer cancel()
	if _, err := th.Acquire(ctx); err == nil || err.Error() != "gave up waiting" {
		t.Fatalf("Acquire during a pause: err = %v, want it held until its context ended", err)
	}
	// The pause never shortens: a shorter one leaves the hour in force.
	th.PauseFor(time.Millisecond)
	th.mu.Lock()
	left := time.Until(th.pauseUntil)
	th.mu.Unlock()
	if left < 59*time.Minute {
		t.Fatalf("a shorter pause shortened the one in force to %s", left)
	}
}

// Acquire's order is pause, token, slot: a caller waiting out a 429 pause
// holds neither a rate token nor a concurrency slot, so the fleet's other
// requests are not blocked behind sleepers. The pause wait is observed
// from inside, so no timing is involved.
func TestThrottleWaitsOutThePauseHoldingNothing(t *testing.T) {
	th := NewThrottle(ThrottleOptions{RequestsPerSecond: 2, MaxConcurrent: 1})
	th.PauseFor(time.Hour)
	waits := 0
	th.pauseWait = func(context.Context, time.Duration) error {
		waits++
		if held := len(th.slots); held != 0 {
			t.Errorf("waiting out the pause while holding %d concurrency slot(s)", held)
		}
		if tokens := th.limiter.Tokens(); tokens < 2 {
			t.Errorf("waiting out the pause after taking a rate token (%.2f of 2 left)", tokens)
		}
		th.mu.Lock()
		th.pauseUntil = time.Time{} // the pause is over
		th.mu.Unlock()
		return nil
	}
	release, err := th.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if waits != 1 || len(th.slots) != 1 {
		t.Fatalf("%d pause waits, %d slots held after Acquire; want 1 and 1", waits, len(th.slots))
	}
	release()
}

// Every sandbox lookup counts against the token's ceiling the way the
// platform counts it: a GET once, a status:batchGet once per id (each
// attempt, retries too), and nothing else counts.
func TestThrottleCountsSandboxLookups(t *testing.T) {
	tests := []struct {
		name string
		call func(c *Client) error
		want int
	}{
		{"get", func(c *Client) error { _, err := c.GetSandbox(context.Background(), "x"); return err }, 1},
		{"batch", func(c *Client) error {
			_, err := c.BatchStatus(context.Background(), []string{"a", "b", "c"})
			return err
		}, 3},
		{"batch over 100 ids", func(c *Client) error {
			ids := make([]string, 250)
			for i := range ids {
				ids[i] = string(rune('A'+i/26)) + string(rune('a'+i%26))
			}
			_, err := c.BatchStatusAll(context.Background(), ids)
			return err
		}, 250},
		{"egress read", func(c *Client) error { _, err := c.GetEgressPolicy(context.Background(), "x"); return err }, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th := NewThrottle(ThrottleOptions{})
			c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case APIPrefix + "/sandbox/status:batchGet":
					writeJSON(w, 200, BatchStatusResponse{Statuses: []SandboxStatus{}, Errors: []SandboxStatusError{}})
				case APIPrefix + "/sandbox/x/egress-policy":
					writeJSON(w, 200, map[string]any{"sandbox_id": "x"})
				default:
					writeJSON(w, 200, sandboxJSON("x"))
				}
			}), func(o *Options) { o.Throttle = th })
			_ = tt.call(c) // the answers may be incomplete: only the counting matters
			if got := LookupsPerMinute - th.lookups.Free(); got != tt.want {
				t.Fatalf("%d lookups counted, want %d", got, tt.want)
			}
		})
	}
}
