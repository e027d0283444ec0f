package prime

import (
	"context"
	"sync"
	"time"
)

// LookupsPerMinute is the platform's per-token ceiling on sandbox lookups:
// 30,000 a 60 s window, where a status:batchGet counts once for every id
// it names and a GET of one sandbox once. A fleet of thousands reaches it
// with its status reads alone (a destroy's waits read every member each
// round), and a 429 then pauses the whole process.
const LookupsPerMinute = 30000

// Window is the client-side mirror of a published "limit per span" rate
// limit counted in a sliding window: Take holds a caller until its units
// fit, so the process never draws the platform's 429 for that limit. With
// a shared ledger (Share) the processes of this machine on one token count
// together; other machines still can draw it, and the 429's Retry-After
// covers them. A token bucket cannot mirror such a limit: refilling at limit/span
// with a burst of limit admits nearly twice the limit in one span.
type Window struct {
	limit int
	span  time.Duration
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error

	mu    sync.Mutex
	taken []windowEntry // oldest first
	sum   int
	// ledger, when set, counts instead of taken and sum, with every
	// other process that shares it (Share).
	ledger WindowLedger
}

// WindowLedger keeps a Window's count where other processes add to it too
// (journal.Lookups: one file per token on this machine), so that they stay
// under a per-token limit together.
type WindowLedger interface {
	// Take counts n units at now if they fit in limit over span, else
	// reports when they will.
	Take(now time.Time, n, limit int, span time.Duration) (bool, time.Time, error)
	// Used is how many units the span up to now holds.
	Used(now time.Time, span time.Duration) (int, error)
}

type windowEntry struct {
	at time.Time
	n  int
}

// NewWindow builds a Window of limit units per span.
func NewWindow(limit int, span time.Duration) *Window {
	return &Window{limit: limit, span: span, now: time.Now, sleep: Sleep}
}

// Share makes the window count through l from now on (the first ledger
// shared stays). A ledger that fails is dropped, and the window counts this
// process's units alone again: the ledger is best effort, the 429's
// Retry-After the backstop.
func (w *Window) Share(l WindowLedger) {
	if w == nil || l == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ledger == nil {
		w.ledger = l
	}
}

// sharedLedger is the ledger in use, or nil.
func (w *Window) sharedLedger() WindowLedger {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ledger
}

// dropLedger stops counting through l after it failed.
func (w *Window) dropLedger(l WindowLedger) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ledger == l {
		w.ledger = nil
	}
}

// expire drops what left the window by now. The caller holds mu.
func (w *Window) expire(now time.Time) {
	i := 0
	for i < len(w.taken) && now.Sub(w.taken[i].at) >= w.span {
		w.sum -= w.taken[i].n
		i++
	}
	if i > 0 {
		w.taken = append(w.taken[:0], w.taken[i:]...)
	}
}

// Free is how many units fit in the window now.
func (w *Window) Free() int {
	if w == nil {
		return int(^uint(0) >> 1)
	}
	if l := w.sharedLedger(); l != nil {
		used, err := l.Used(w.now(), w.span)
		if err == nil {
			return w.limit - used
		}
		w.dropLedger(l)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.expire(w.now())
	return w.limit - w.sum
}

// Limit is the window's limit (0 for none).
func (w *Window) Limit() int {
	if w == nil {
		return 0
	}
	return w.limit
}

// Take waits until n units fit in the window and counts them; it gives up
// with ctx's cause. More than the limit at once waits for an empty window
// and is counted as the limit (it can never fit; the platform then
// decides).
func (w *Window) Take(ctx context.Context, n int) error {
	if w == nil || n <= 0 {
		return nil
	}
	n = min(n, w.limit)
	for {
		if l := w.sharedLedger(); l != nil {
			now := w.now()
			ok, until, err := l.Take(now, n, w.limit, w.span)
			switch {
			case err != nil:
				w.dropLedger(l)
				continue
			case ok:
				return nil
			}
			if err := w.sleep(ctx, until.Sub(now)); err != nil {
				return err
			}
			continue
		}
		w.mu.Lock()
		now := w.now()
		w.expire(now)
		if w.sum+n <= w.limit {
			w.taken = append(w.taken, windowEntry{at: now, n: n})
			w.sum += n
			w.mu.Unlock()
			return nil
		}
		// The earliest moment enough of the oldest units have left.
		need, until := w.sum+n-w.limit, now
		for _, e := range w.taken {
			need -= e.n
			if need <= 0 {
				until = e.at.Add(w.span)
				break
			}
		}
		w.mu.Unlock()
		if err := w.sleep(ctx, until.Sub(now)); err != nil {
			return err
		}
	}
}
