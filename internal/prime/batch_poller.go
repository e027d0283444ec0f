package prime

import (
	"context"
	"sort"
	"sync"
	"time"
)

// batchPoller is the one engine behind the client's coalescing waits (the
// sandbox StatusPoller, the CheckpointPoller): every object the process is
// waiting on is read in the same batch request (≤ chunk ids each), so N
// waiters cost one request per poll round instead of N. Each waiter keeps
// its own schedule (its first check Delay(0) after it joined, however long
// the others have waited); a round is sent when some waiter is due, and
// carries every waiter, so the others get a fresher answer for free.
type batchPoller[O any] struct {
	backoff Backoff
	chunk   int
	// fetch reads one chunk of unique ids. An id left out of the answer
	// fails its waiters with missing(id): silence must not read as
	// progress. A failed fetch (the client already retried) fails every
	// waiter of the chunk with failed(id, err).
	fetch   func(ctx context.Context, ids []string) (map[string]O, error)
	failed  func(id string, err error) error
	missing func(id string) error

	mu      sync.Mutex
	waiters map[*batchWaiter[O]]struct{}
	wake    chan struct{}
	running bool
}

type batchWaiter[O any] struct {
	id    string
	ctx   context.Context
	check func(O) (done bool, err error)
	done  chan error
	sched Schedule
	n     int       // scheduled checks so far
	due   time.Time // next scheduled check
}

// pollSlack merges waiters that are due within this window into one round:
// polling one of them 50 ms early is cheaper than a second request.
const pollSlack = 50 * time.Millisecond

func newBatchPoller[O any](b Backoff, chunk int) *batchPoller[O] {
	return &batchPoller[O]{backoff: b, chunk: chunk, waiters: map[*batchWaiter[O]]struct{}{}, wake: make(chan struct{}, 1)}
}

// Watch blocks until check reports done or an error for id, or ctx ends
// (its cause is returned, so a deadline reads as a timeout). sched is the
// waiter's schedule; nil means the poller's backoff. check runs on the
// poller's goroutine and must return quickly.
func (p *batchPoller[O]) Watch(ctx context.Context, id string, sched Schedule, check func(O) (bool, error)) error {
	if sched == nil {
		sched = p.backoff
	}
	w := &batchWaiter[O]{id: id, ctx: ctx, check: check, done: make(chan error, 1), sched: sched}
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

func (p *batchPoller[O]) loop() {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		// The exit decision is made under the lock Watch takes to register,
		// so a waiter never joins a loop that is about to return.
		p.mu.Lock()
		if len(p.waiters) == 0 {
			p.running = false
			p.mu.Unlock()
			return
		}
		var next time.Time
		for w := range p.waiters {
			if next.IsZero() || w.due.Before(next) {
				next = w.due
			}
		}
		p.mu.Unlock()

		timer.Reset(time.Until(next))
		select {
		case <-p.wake: // a new waiter: its due time may be the earliest now
			continue
		case <-timer.C:
		}
		batch, due, logCtx := p.snapshot(time.Now().Add(pollSlack))
		if len(due) == 0 {
			continue
		}
		p.pollOnce(logCtx, batch)
		p.mu.Lock()
		now := time.Now()
		for _, w := range due {
			w.n++
			w.due = now.Add(w.sched.Delay(w.n))
		}
		p.mu.Unlock()
	}
}

// snapshot returns every waiter grouped by id, the waiters due by dueBy, and
// a context that carries a waiter's logging values without its cancellation.
func (p *batchPoller[O]) snapshot(dueBy time.Time) (map[string][]*batchWaiter[O], []*batchWaiter[O], context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	batch := make(map[string][]*batchWaiter[O], len(p.waiters))
	var due []*batchWaiter[O]
	var logCtx context.Context
	for w := range p.waiters {
		batch[w.id] = append(batch[w.id], w)
		if !w.due.After(dueBy) {
			due = append(due, w)
		}
		if logCtx == nil {
			logCtx = context.WithoutCancel(w.ctx)
		}
	}
	return batch, due, logCtx
}

func (p *batchPoller[O]) pollOnce(ctx context.Context, batch map[string][]*batchWaiter[O]) {
	ids := make([]string, 0, len(batch))
	for id := range batch {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	// Chunks go out together: a round over 1000 waiting objects costs one
	// round trip, not ten. Each chunk holds other ids, so other waiters.
	var wg sync.WaitGroup
	for _, chunk := range chunkStrings(ids, p.chunk) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.pollChunk(ctx, batch, chunk)
		}()
	}
	wg.Wait()
}

func (p *batchPoller[O]) pollChunk(ctx context.Context, batch map[string][]*batchWaiter[O], chunk []string) {
	answers, err := p.fetch(ctx, chunk)
	if err != nil {
		for _, id := range chunk {
			p.finish(batch[id], p.failed(id, err))
		}
		return
	}
	for _, id := range chunk {
		obs, found := answers[id]
		if !found {
			p.finish(batch[id], p.missing(id))
			continue
		}
		for _, w := range batch[id] {
			done, err := w.check(obs)
			if done || err != nil {
				p.finish([]*batchWaiter[O]{w}, err)
			}
		}
	}
}

func (p *batchPoller[O]) finish(ws []*batchWaiter[O], err error) {
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
