package prime

import (
	"context"
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
	a := SharedThrottle("http://a", ThrottleOptions{RequestsPerSecond: 5})
	if a != SharedThrottle("http://a", ThrottleOptions{RequestsPerSecond: 5}) {
		t.Fatal("same origin and settings must share one throttle")
	}
	if a == SharedThrottle("http://b", ThrottleOptions{RequestsPerSecond: 5}) {
		t.Fatal("different origins must not share")
	}
}

func TestThrottleAcquireHonoursContext(t *testing.T) {
	th := NewThrottle(ThrottleOptions{MaxConcurrent: 1})
	release, err := th.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := th.Acquire(ctx); err == nil {
		t.Fatal("Acquire succeeded past the cap")
	}
	th.PauseFor(time.Hour)
	ctx2, cancel2 := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel2()
	if _, err := th.Acquire(ctx2); err == nil {
		t.Fatal("Acquire ignored the pause")
	}
}
