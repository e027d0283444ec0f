package prime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Throttle paces every REST request of a process towards one API: a token
// bucket (requests per second), a cap on requests in flight, and a shared
// pause that one 429's Retry-After imposes on every caller, so a fleet backs
// off together instead of each goroutine learning about the limit separately.
type Throttle struct {
	limiter *rate.Limiter
	slots   chan struct{}
	// lookups mirrors the token's sandbox-lookup ceiling (always on: it
	// is the platform's, not a setting).
	lookups *Window

	mu         sync.Mutex
	pauseUntil time.Time

	// pauseWait waits out a pause (Sleep; tests observe what a caller
	// holds while it waits).
	pauseWait func(ctx context.Context, d time.Duration) error
}

// ThrottleOptions configure a Throttle; zero means unlimited.
type ThrottleOptions struct {
	RequestsPerSecond float64
	MaxConcurrent     int
	// Account names the token (Account, never the key): the
	// lookup ceiling is the token's, so instances with different tokens
	// never share a Throttle.
	Account string
}

// NewThrottle builds a Throttle. The burst equals one second of requests so
// an apply starting 50 creates at once is not serialised needlessly.
func NewThrottle(o ThrottleOptions) *Throttle {
	t := &Throttle{lookups: NewWindow(LookupsPerMinute, time.Minute)}
	if o.RequestsPerSecond > 0 {
		burst := int(o.RequestsPerSecond)
		if burst < 1 {
			burst = 1
		}
		t.limiter = rate.NewLimiter(rate.Limit(o.RequestsPerSecond), burst)
	}
	if o.MaxConcurrent > 0 {
		t.slots = make(chan struct{}, o.MaxConcurrent)
	}
	return t
}

// Account names a token at an API origin by a digest, so that what is
// kept per token (a Throttle, the lookup ledger's file) never holds the
// key.
func Account(baseURL, apiKey string) string {
	sum := sha256.Sum256([]byte(baseURL + "\x00" + apiKey))
	return hex.EncodeToString(sum[:16])
}

var (
	sharedThrottlesMu sync.Mutex
	sharedThrottles   = map[string]*Throttle{}
)

// SharedThrottle returns the process-wide Throttle for an API origin and
// settings: provider instances (aliases) talking to the same API share it.
func SharedThrottle(baseURL string, o ThrottleOptions) *Throttle {
	key := fmt.Sprintf("%s|%g|%d|%s", baseURL, o.RequestsPerSecond, o.MaxConcurrent, o.Account)
	sharedThrottlesMu.Lock()
	defer sharedThrottlesMu.Unlock()
	if t, ok := sharedThrottles[key]; ok {
		return t
	}
	t := NewThrottle(o)
	sharedThrottles[key] = t
	return t
}

// Acquire waits for the shared pause, a rate token and a slot, in that order,
// and returns the function that frees the slot. It gives up as soon as ctx
// ends.
func (t *Throttle) Acquire(ctx context.Context) (release func(), err error) {
	if t == nil {
		return func() {}, nil
	}
	for {
		t.mu.Lock()
		wait := time.Until(t.pauseUntil)
		t.mu.Unlock()
		if wait <= 0 {
			break
		}
		sleep := t.pauseWait
		if sleep == nil {
			sleep = Sleep
		}
		if err := sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
	if t.limiter != nil {
		if err := t.limiter.Wait(ctx); err != nil {
			// Wait refuses at once when the next token comes after ctx's
			// deadline. The request cannot go before that deadline, so the
			// caller's outcome is the deadline: report it, with its cause
			// (e.g. "egress timeout (60s) reached"), when it comes.
			if _, ok := ctx.Deadline(); !ok && ctx.Err() == nil {
				return nil, err // not a deadline (nothing else is expected)
			}
			<-ctx.Done()
			return nil, context.Cause(ctx)
		}
	}
	if t.slots == nil {
		return func() {}, nil
	}
	select {
	case t.slots <- struct{}{}:
		return func() { <-t.slots }, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// TakeLookups waits until n more sandbox lookups fit in the token's
// ceiling and counts them (see LookupsPerMinute).
func (t *Throttle) TakeLookups(ctx context.Context, n int) error {
	if t == nil {
		return nil
	}
	return t.lookups.Take(ctx, n)
}

// ShareLookups counts the token's lookups through l, with every other
// process on this machine that uses the same token (see Window.Share).
func (t *Throttle) ShareLookups(l WindowLedger) {
	if t != nil {
		t.lookups.Share(l)
	}
}

// RoomForLookups reports whether n more lookups leave at least half the
// ceiling free: reads that are a convenience (a poll round's riders, not
// yet due) are made only then, so the ceiling is kept for reads someone
// waits on.
func (t *Throttle) RoomForLookups(n int) bool {
	if t == nil || t.lookups == nil {
		return true
	}
	return t.lookups.Free()-n >= t.lookups.Limit()/2
}

// PauseFor holds every caller for d from now (never shortening a longer
// pause already in force).
func (t *Throttle) PauseFor(d time.Duration) {
	if t == nil || d <= 0 {
		return
	}
	until := time.Now().Add(d)
	t.mu.Lock()
	if until.After(t.pauseUntil) {
		t.pauseUntil = until
	}
	t.mu.Unlock()
}
