package prime

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"
)

// DefaultStatusBackoff is the poller's cadence: first poll ~250 ms after a
// waiter joins, then ×1.5 with ±20 % jitter up to a 5 s cap.
var DefaultStatusBackoff = Backoff{Initial: 250 * time.Millisecond, Factor: 1.5, Max: 5 * time.Second, Jitter: 0.2}

// StatusObservation is one poll's answer for one sandbox: a status, or a
// per-id error (NOT_FOUND, FORBIDDEN, MANAGED).
type StatusObservation struct {
	SandboxID string
	Status    *SandboxStatus
	Error     *SandboxStatusError
}

// StatusCheck decides, for each observation, whether the wait is over. It
// runs on the poller's goroutine and must return quickly.
type StatusCheck func(obs StatusObservation) (done bool, err error)

// StatusPoller coalesces status waits: every sandbox the process is waiting
// on is polled in the same status:batchGet request (≤100 ids each), so a
// fleet of N booting sandboxes costs one request per poll round instead of N.
// Each waiter keeps its own schedule (its first check ~250 ms after it
// joined, however long the others have waited); a round is sent when some
// waiter is due, and carries every waiter, so the others get a fresher
// answer for free.
type StatusPoller struct {
	client  *Client
	backoff Backoff

	mu      sync.Mutex
	waiters map[*statusWaiter]struct{}
	wake    chan struct{}
	running bool
	// polled is when each sandbox was last looked up (statusSandboxFloor).
	polled map[string]time.Time
}

type statusWaiter struct {
	id    string
	ctx   context.Context
	check StatusCheck
	done  chan error
	sched Schedule
	n     int       // scheduled checks so far
	due   time.Time // next scheduled check
}

// pollSlack merges waiters that are due within this window into one round:
// polling one of them 50 ms early is cheaper than a second request.
const pollSlack = 50 * time.Millisecond

// statusSandboxFloor is the least time between two lookups of one sandbox.
// The platform limits status:batchGet to 300 lookups a minute for each
// sandbox it names; rounds carry every waiter, and a fleet's waiters are
// due at different times, so without a floor one sandbox rode along in
// nearly every round (every ~50 ms: 1,200 a minute). 250 ms is at most 240
// a minute; a due waiter inside the floor waits for it (its sandbox was
// just looked up for another waiter's round, and that answer was its).
const statusSandboxFloor = 250 * time.Millisecond

// NewStatusPoller builds a poller on c with the given cadence.
func NewStatusPoller(c *Client, b Backoff) *StatusPoller {
	return &StatusPoller{client: c, backoff: b, waiters: map[*statusWaiter]struct{}{}, wake: make(chan struct{}, 1),
		polled: map[string]time.Time{}}
}

// StatusPoller returns the client's shared poller (DefaultStatusBackoff).
func (c *Client) StatusPoller() *StatusPoller {
	c.pollerOnce.Do(func() { c.poller = NewStatusPoller(c, DefaultStatusBackoff) })
	return c.poller
}

// Watch blocks until check reports done or an error for sandbox id, or ctx
// ends (its cause is returned, so a deadline reads as a timeout). sched is
// the waiter's schedule; nil means the poller's backoff.
func (p *StatusPoller) Watch(ctx context.Context, id string, sched Schedule, check StatusCheck) error {
	if sched == nil {
		sched = p.backoff
	}
	w := &statusWaiter{id: id, ctx: ctx, check: check, done: make(chan error, 1), sched: sched}
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

func (p *StatusPoller) loop() {
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

// snapshot returns the waiters of every sandbox that may be looked up now
// (past its statusSandboxFloor), grouped by id, the waiters among them due
// by dueBy, and a context that carries a waiter's logging values without
// its cancellation. A due waiter whose sandbox is inside its floor is due
// again when the floor ends. The sandboxes returned count as looked up now.
func (p *StatusPoller) snapshot(dueBy time.Time) (map[string][]*statusWaiter, []*statusWaiter, context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	batch := make(map[string][]*statusWaiter, len(p.waiters))
	var due []*statusWaiter
	var logCtx context.Context
	for w := range p.waiters {
		if free := p.polled[w.id].Add(statusSandboxFloor); now.Before(free) {
			if !w.due.After(dueBy) {
				w.due = free
			}
			continue
		}
		batch[w.id] = append(batch[w.id], w)
		if !w.due.After(dueBy) {
			due = append(due, w)
		}
		if logCtx == nil {
			logCtx = context.WithoutCancel(w.ctx)
		}
	}
	if len(due) == 0 {
		return nil, nil, nil // nobody is due: no round, and nothing is looked up
	}
	for id := range batch {
		p.polled[id] = now
	}
	for id, at := range p.polled {
		if now.Sub(at) > time.Minute {
			delete(p.polled, id) // forget sandboxes nobody waits for
		}
	}
	return batch, due, logCtx
}

func (p *StatusPoller) pollOnce(ctx context.Context, batch map[string][]*statusWaiter) {
	ids := make([]string, 0, len(batch))
	for id := range batch {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	// Chunks go out together: a round over 1000 waiting sandboxes costs one
	// round trip, not ten. Each chunk holds other ids, so other waiters.
	var wg sync.WaitGroup
	for _, chunk := range chunkStrings(ids, MaxBatchStatusIDs) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.pollChunk(ctx, batch, chunk)
		}()
	}
	wg.Wait()
}

func (p *StatusPoller) pollChunk(ctx context.Context, batch map[string][]*statusWaiter, chunk []string) {
	resp, err := p.client.BatchStatus(ctx, chunk)
	if err != nil {
		// The client already retried; a failure now is not transient.
		for _, id := range chunk {
			p.finish(batch[id], fmt.Errorf("polling the status of sandbox %s: %w", id, err))
		}
		return
	}
	seen := make(map[string]bool, len(chunk))
	for i := range resp.Statuses {
		s := resp.Statuses[i]
		seen[s.SandboxID] = true
		p.deliver(batch[s.SandboxID], StatusObservation{SandboxID: s.SandboxID, Status: &s})
	}
	for i := range resp.Errors {
		e := resp.Errors[i]
		seen[e.SandboxID] = true
		p.deliver(batch[e.SandboxID], StatusObservation{SandboxID: e.SandboxID, Error: &e})
	}
	// An id the server left out becomes an error for its waiters, as in
	// the SDK: silence must not read as progress.
	for _, id := range chunk {
		if !seen[id] {
			p.finish(batch[id], fmt.Errorf("sandbox %s: missing from the status:batchGet answer", id))
		}
	}
}

func (p *StatusPoller) deliver(ws []*statusWaiter, obs StatusObservation) {
	for _, w := range ws {
		done, err := w.check(obs)
		if done || err != nil {
			p.finish([]*statusWaiter{w}, err)
		}
	}
}

func (p *StatusPoller) finish(ws []*statusWaiter, err error) {
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

// SandboxFailedError reports a sandbox that reached a terminal status while
// something waited for it to run, or that a command found not running.
type SandboxFailedError struct {
	SandboxID    string
	Status       string
	ErrorType    string
	ErrorMessage string
	// ControlPlaneStatus is the control plane's own status when a command
	// failed (from GET /sandbox/{id}/error-context; empty when that could
	// not be read). It differs from Status when the gateway reported the
	// sandbox gone (GatewayNotFound): Status then reads TERMINATED, while
	// the control plane may still say RUNNING — right after boot, because
	// the gateway has not registered the sandbox yet.
	ControlPlaneStatus string
	// GatewayNotFound: the gateway said the sandbox is not on its runtime
	// node (REST 502 sandbox_not_found, Connect not_found).
	GatewayNotFound bool
}

func (e *SandboxFailedError) Error() string {
	msg := fmt.Sprintf("sandbox %s is %s", e.SandboxID, e.Status)
	if e.ErrorType != "" {
		msg += " (" + e.ErrorType + ")"
	}
	if e.ErrorMessage != "" {
		msg += ": " + e.ErrorMessage
	}
	if e.GatewayNotFound && e.ControlPlaneStatus != "" && e.ControlPlaneStatus != e.Status {
		msg += " (the control plane reports " + e.ControlPlaneStatus + ")"
	}
	return msg
}

// WaitRunningOptions tune WaitForRunning.
type WaitRunningOptions struct {
	// OnProgress is called when the observed status or image-build state
	// changes (for logs); optional.
	OnProgress func(s SandboxStatus)
}

// statusMinStep is the shortest interval between checks around the
// expected boot time (see learnedSchedule).
const statusMinStep = 100 * time.Millisecond

// WaitForRunning waits through the shared poller until the sandbox is
// RUNNING. A terminal status fails at once with a *SandboxFailedError
// carrying the platform's error type and message; a per-id error fails too.
// PENDING with an image build and PAUSED keep waiting until ctx ends: ctx
// carries the only budget. Boot times of waits without an image build teach
// the client the platform's usual pace, so later waits check close to it.
// WaitForReady is the same wait with budgets and the gateway probe.
func (c *Client) WaitForRunning(ctx context.Context, id string, o WaitRunningOptions) error {
	_, err := c.waitBoot(ctx, id, bootOptions{onProgress: o.OnProgress})
	return err
}

// WaitForGone waits until the sandbox is TERMINATED (or another terminal
// status) or unknown to the platform.
func (c *Client) WaitForGone(ctx context.Context, id string) error {
	return c.StatusPoller().Watch(ctx, id, nil, func(obs StatusObservation) (bool, error) {
		if obs.Error != nil {
			if obs.Error.Code == BatchCodeNotFound {
				return true, nil
			}
			return false, fmt.Errorf("sandbox %s: %s: %s", id, obs.Error.Code, obs.Error.Message)
		}
		return IsTerminalStatus(obs.Status.Status), nil
	})
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
