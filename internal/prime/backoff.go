package prime

import (
	"context"
	"math"
	"math/rand/v2"
	"time"
)

// Backoff is the one description of a growing delay used by every waiter and
// by request retries: Initial, multiplied by Factor per attempt, capped at
// Max, each delay spread by ±Jitter (a fraction, 0.2 = ±20 %).
type Backoff struct {
	Initial time.Duration
	Factor  float64
	Max     time.Duration
	Jitter  float64
}

// Delay is the wait before attempt n (0-based): Initial·Factor^n, capped, with
// jitter applied after the cap so synchronized callers spread out even once
// they have all reached it.
func (b Backoff) Delay(n int) time.Duration {
	d := float64(b.Initial)
	if b.Factor > 1 && n > 0 {
		d *= math.Pow(b.Factor, float64(n))
	}
	if b.Max > 0 && d > float64(b.Max) {
		d = float64(b.Max)
	}
	if b.Jitter > 0 {
		d *= 1 + b.Jitter*(2*rand.Float64()-1) //nolint:gosec // G404: jitter spreads retries; it needs no secrecy
	}
	if d < 0 {
		d = 0
	}
	return time.Duration(d)
}

// Sleep waits for d, returning early with the context's error when it ends.
func Sleep(ctx context.Context, d time.Duration) error {
	return sleepOrWake(ctx, d, nil)
}

// sleepOrWake is Sleep that also ends when wake closes or yields a value
// (nil: never).
func sleepOrWake(ctx context.Context, d time.Duration, wake <-chan struct{}) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
	case <-wake:
	}
	return nil
}

// waker is a Schedule whose waiter should look again before its delay ends
// when the channel closes.
type waker interface {
	Wake() <-chan struct{}
}

// Schedule gives the wait before attempt n (0-based). Backoff is one; a
// waiter with better knowledge (a cohort wait, latency_estimate.go) can
// supply another.
type Schedule interface {
	Delay(n int) time.Duration
}

// Poll calls check after each scheduled delay until it reports done or
// fails. The first check happens after s.Delay(0): callers that already hold
// a fresh answer check it themselves before polling. It returns the
// context's cause when the context ends first, so a deadline reads as a
// timeout.
//
// A schedule that can learn something while its waiter sleeps (a cohort
// wait) also implements waker: Poll then checks as soon as Wake's channel
// closes, and the check decides whether a request is due.
func Poll(ctx context.Context, s Schedule, check func(ctx context.Context) (done bool, err error)) error {
	wk, _ := s.(waker)
	for n := 0; ; n++ {
		var wake <-chan struct{}
		if wk != nil {
			wake = wk.Wake() // before Delay: a change in between closes it
		}
		if err := sleepOrWake(ctx, s.Delay(n), wake); err != nil {
			return err
		}
		done, err := check(ctx)
		if err != nil || done {
			return err
		}
	}
}
