package prime

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"
)

// batchPoller is the one engine behind the client's coalescing waits (the
// sandbox StatusPoller, the CheckpointPoller, the JobPoller): it holds the
// waiters, runs one loop while any waits, and fans each round's answers and
// failures out to them. Every object the process is waiting on is read in
// the same round (batch requests of ≤ 100 ids each), so N waiters cost one
// request per poll round instead of N. Each waiter keeps its own schedule
// (its first check Delay(0) after it joined, however long the others have
// waited); a round is sent when some waiter is due, and carries every
// waiter, so the others get a fresher answer for free. A poller on a clock
// (job polling) runs its rounds on that one schedule instead.
type batchPoller[K comparable, O any] struct {
	backoff Backoff
	// compare orders a round's keys (chunks then hold neighbours).
	compare func(a, b K) int
	// round reads every key of a round and settles each one it learns
	// about (see roundFunc).
	round roundFunc[K, O]
	// floor is the least time between two reads of one id (0: none), for
	// batch routes whose rate limit counts every id they name.
	floor time.Duration
	// riders, when set, says whether a round of due ids may also read
	// extra ids nobody is due on yet (for a per-token limit that counts
	// every id named, riding along is not free); nil: always.
	riders func(due, extra int) bool
	// clock, when set, replaces the waiters' schedules with one for the
	// rounds: round n starts clock.Delay(n) after round n-1 began (the
	// first, after the loop started), and each round is due for every
	// waiter, whenever it joined. Job polling runs on it: with per-waiter
	// schedules, jobs that join at different times are due at different
	// times, each due time sends a round, and each round carries every job,
	// so k cohorts would read every job k times an interval (the platform
	// counts each job named against its sandbox's 300 lookups a minute).
	clock Schedule
	// wakeOn, when set, returns a channel closed when what the waiters'
	// schedules know changed (a boot cohort's expected time became known
	// or dropped): the loop then asks every moving schedule again, so a
	// follower sleeping until its one check is due never needs to wake
	// on its own to re-read what is known.
	wakeOn func() <-chan struct{}

	mu      sync.Mutex
	waiters map[*batchWaiter[K, O]]struct{}
	wake    chan struct{}
	running bool
	// polled is when each id was last read (floor).
	polled map[K]time.Time
}

// roundFunc reads the keys of one round (sorted, unique) and reports what it
// learned through settle: an observation, which every waiter on the key
// checks, or an error, which ends every wait on it. A key it does not settle
// waits for the next round. settle may be called from several goroutines.
type roundFunc[K comparable, O any] func(ctx context.Context, keys []K, settle func(key K, obs O, err error))

type batchWaiter[K comparable, O any] struct {
	id    K
	ctx   context.Context
	check func(O) (done bool, err error)
	done  chan error
	sched Schedule
	n     int       // scheduled checks so far
	due   time.Time // next scheduled check
}

// movingSchedule is a waiter's schedule whose next check can move while it
// sleeps (a cohort wait's): its Delay is measured from now, whatever n, so
// the poller may ask it again at any time (see wakeOn). Its waiter is never
// read before it is due (snapshot): it knows when its event is expected, and
// an earlier answer spends a lookup to hear "not yet" (3,000 boot waits
// riding along read 18,000 ids where their own checks needed 3,600).
type movingSchedule interface {
	Schedule
	moving() bool
}

func movesItself(s Schedule) bool {
	m, ok := s.(movingSchedule)
	return ok && m.moving()
}

// pollSlack merges waiters that are due within this window into one round:
// polling one of them 50 ms early is cheaper than a second request.
const pollSlack = 50 * time.Millisecond

func newBatchPoller[K comparable, O any](b Backoff, compare func(a, b K) int, round roundFunc[K, O]) *batchPoller[K, O] {
	return &batchPoller[K, O]{backoff: b, compare: compare, round: round, waiters: map[*batchWaiter[K, O]]struct{}{},
		wake: make(chan struct{}, 1), polled: map[K]time.Time{}}
}

// chunkedRound is the round of a batch endpoint that reads up to size ids a
// request (fetch). An id left out of the answer fails its waiters with
// missing(id): silence must not read as progress. A failed fetch (the
// client already retried) fails every waiter of the chunk with
// failed(id, err).
func chunkedRound[O any](size int, fetch func(ctx context.Context, ids []string) (map[string]O, error),
	failed func(id string, err error) error, missing func(id string) error) roundFunc[string, O] {
	return func(ctx context.Context, ids []string, settle func(string, O, error)) {
		var none O
		inChunks(ids, size, func(chunk []string) {
			answers, err := fetch(ctx, chunk)
			for _, id := range chunk {
				obs, found := answers[id]
				switch {
				case err != nil:
					settle(id, none, failed(id, err))
				case !found:
					settle(id, none, missing(id))
				default:
					settle(id, obs, nil)
				}
			}
		})
	}
}

// inChunks calls f on each run of up to n items, all at once, and returns
// when every call has: a round over 1000 waiting objects costs one round
// trip, not ten. Each chunk holds other ids, so other waiters.
func inChunks[T any](items []T, n int, f func(chunk []T)) {
	var wg sync.WaitGroup
	for _, chunk := range chunksOf(items, n) {
		wg.Go(func() { f(chunk) })
	}
	wg.Wait()
}

// chunksOf splits items into runs of up to n (none for no items).
func chunksOf[T any](items []T, n int) [][]T {
	var out [][]T
	for len(items) > n {
		out = append(out, items[:n])
		items = items[n:]
	}
	if len(items) > 0 {
		out = append(out, items)
	}
	return out
}

// Watch blocks until check reports done or an error for id, or ctx ends
// (its cause is returned, so a deadline reads as a timeout). sched is the
// waiter's schedule; nil means the poller's backoff (a poller on a clock
// ignores it). check runs on the poller's goroutine and must return quickly.
func (p *batchPoller[K, O]) Watch(ctx context.Context, id K, sched Schedule, check func(O) (bool, error)) error {
	if sched == nil {
		sched = p.backoff
	}
	w := &batchWaiter[K, O]{id: id, ctx: ctx, check: check, done: make(chan error, 1), sched: sched}
	w.due = time.Now().Add(sched.Delay(0))
	p.mu.Lock()
	p.waiters[w] = struct{}{}
	if !p.running {
		p.running = true
		go p.loop()
	}
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
	select {
	case err := <-w.done:
		return err
	case <-ctx.Done():
		p.mu.Lock()
		delete(p.waiters, w)
		p.mu.Unlock()
		return context.Cause(ctx)
	}
}

func (p *batchPoller[K, O]) loop() {
	var rounds int          // rounds so far (clock)
	var nextRound time.Time // when the clock's next round starts
	if p.clock != nil {
		nextRound = time.Now().Add(p.clock.Delay(0))
	}
	// learned is taken before a round, so what a round's answers teach
	// (they close it) is acted on after the round, not lost.
	learned := p.learned()
	for {
		if closed(learned) {
			learned = p.learned()
			p.rescheduleMoving()
		}
		// The exit decision is made under the lock Watch takes to register,
		// so a waiter never joins a loop that is about to return.
		p.mu.Lock()
		if len(p.waiters) == 0 {
			p.running = false
			p.mu.Unlock()
			return
		}
		next := nextRound
		if p.clock == nil {
			for w := range p.waiters {
				at := w.due
				if movesItself(w.sched) {
					// Read late rather than early (see snapshot): the
					// round waits pollSlack for others due by then.
					at = at.Add(pollSlack)
				}
				if next.IsZero() || at.Before(next) {
					next = at
				}
			}
		}
		p.mu.Unlock()

		// The one sleep every waiter of the client uses (Sleep, Poll).
		if p.sleep(time.Until(next), learned) {
			continue // what is known changed: reschedule first
		}
		if time.Now().Before(next) {
			continue // a new waiter: its due time may be the earliest now
		}
		begun := time.Now()
		dueBy := begun.Add(pollSlack)
		if p.clock != nil {
			// Start to start: a slow round delays the next, never overlaps it.
			rounds++
			nextRound = begun.Add(p.clock.Delay(rounds))
			dueBy = time.Time{} // every waiter
		}
		batch, due, logCtx := p.snapshot(dueBy)
		if len(due) == 0 {
			continue
		}
		p.pollOnce(logCtx, batch)
		if p.clock != nil {
			continue // the clock, not the waiters, schedules the next round
		}
		p.mu.Lock()
		now := time.Now()
		for _, w := range due {
			w.n++
			w.due = now.Add(w.sched.Delay(w.n))
		}
		p.mu.Unlock()
	}
}

// sleep waits d, or until a waiter joins or learned closes; it reports
// whether learned did.
func (p *batchPoller[K, O]) sleep(d time.Duration, learned <-chan struct{}) bool {
	if d <= 0 {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-p.wake:
	case <-learned:
		return true
	}
	return false
}

// learned is wakeOn's channel (nil, which never closes, without one).
func (p *batchPoller[K, O]) learned() <-chan struct{} {
	if p.wakeOn == nil {
		return nil
	}
	return p.wakeOn()
}

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// rescheduleMoving asks every moving schedule for its next check again.
func (p *batchPoller[K, O]) rescheduleMoving() {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	for w := range p.waiters {
		if movesItself(w.sched) {
			w.due = now.Add(w.sched.Delay(w.n))
		}
	}
}

// snapshot returns the waiters of every id that may be read now (past its
// floor), grouped by id, the waiters among them due by dueBy (zero: all of
// them), and a context
// that carries a waiter's logging values without its cancellation. A due
// waiter whose id is inside its floor is due again when the floor ends (its
// id was just read for another waiter's round, and that answer was its).
// The ids returned count as read now.
func (p *batchPoller[K, O]) snapshot(dueBy time.Time) (map[K][]*batchWaiter[K, O], []*batchWaiter[K, O], context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	batch := make(map[K][]*batchWaiter[K, O], len(p.waiters))
	var due []*batchWaiter[K, O]
	var logCtx context.Context
	for w := range p.waiters {
		isDue := dueBy.IsZero() || !w.due.After(dueBy)
		switch {
		case movesItself(w.sched):
			// A cohort wait is read once due: never early, in pollSlack
			// or riding along (its event is expected then, and a boot
			// checked 10 ms early is a lookup spent to hear "not yet"),
			// nor held back by the floor (its schedule paces it: under a
			// hundred checks in a first minute). Its round goes pollSlack
			// after it is due (loop), with every cohort wait due by then.
			if w.due.After(now) {
				continue
			}
		case p.floor > 0 && now.Before(p.polled[w.id].Add(p.floor)):
			if isDue {
				w.due = p.polled[w.id].Add(p.floor)
			}
			continue
		}
		batch[w.id] = append(batch[w.id], w)
		if isDue {
			due = append(due, w)
		}
		if logCtx == nil {
			logCtx = context.WithoutCancel(w.ctx)
		}
	}
	if len(due) == 0 {
		return nil, nil, nil // nobody is due: no round, and nothing is read
	}
	if p.riders != nil {
		dueIDs := make(map[K]bool, len(due))
		for _, w := range due {
			dueIDs[w.id] = true
		}
		if n := len(batch) - len(dueIDs); n > 0 && !p.riders(len(dueIDs), n) {
			for id := range batch {
				if !dueIDs[id] {
					delete(batch, id)
				}
			}
		}
	}
	if p.floor > 0 {
		for id := range batch {
			p.polled[id] = now
		}
		for id, at := range p.polled {
			if now.Sub(at) > time.Minute {
				delete(p.polled, id) // forget ids nobody waits for
			}
		}
	}
	return batch, due, logCtx
}

// pollOnce runs one round over batch and settles its waiters.
func (p *batchPoller[K, O]) pollOnce(ctx context.Context, batch map[K][]*batchWaiter[K, O]) {
	keys := slices.SortedFunc(maps.Keys(batch), p.compare)
	p.round(ctx, keys, func(key K, obs O, err error) {
		if err != nil {
			p.finish(batch[key], err)
			return
		}
		for _, w := range batch[key] {
			done, err := w.check(obs)
			if done || err != nil {
				p.finish([]*batchWaiter[K, O]{w}, err)
			}
		}
	})
}

func (p *batchPoller[K, O]) finish(ws []*batchWaiter[K, O], err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, w := range ws {
		if _, ok := p.waiters[w]; !ok {
			continue
		}
		delete(p.waiters, w)
		w.done <- err
	}
}
