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
// The cadence restarts at Backoff.Initial whenever a new waiter joins.
type StatusPoller struct {
	client  *Client
	backoff Backoff

	mu      sync.Mutex
	waiters map[*statusWaiter]struct{}
	wake    chan struct{}
	running bool
	// rounds counts status requests sent, for tests and diagnostics.
	rounds int
}

type statusWaiter struct {
	id    string
	ctx   context.Context
	check StatusCheck
	done  chan error
}

// NewStatusPoller builds a poller on c with the given cadence.
func NewStatusPoller(c *Client, b Backoff) *StatusPoller {
	return &StatusPoller{client: c, backoff: b, waiters: map[*statusWaiter]struct{}{}, wake: make(chan struct{}, 1)}
}

// StatusPoller returns the client's shared poller (DefaultStatusBackoff).
func (c *Client) StatusPoller() *StatusPoller {
	c.pollerOnce.Do(func() { c.poller = NewStatusPoller(c, DefaultStatusBackoff) })
	return c.poller
}

// Requests reports how many status requests the poller has sent.
func (p *StatusPoller) Requests() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rounds
}

// Watch blocks until check reports done or an error for sandbox id, or ctx
// ends (its cause is returned, so a deadline reads as a timeout).
func (p *StatusPoller) Watch(ctx context.Context, id string, check StatusCheck) error {
	w := &statusWaiter{id: id, ctx: ctx, check: check, done: make(chan error, 1)}
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
	attempt := 0
	next := time.Now().Add(p.backoff.Delay(0))
	timer := time.NewTimer(time.Until(next))
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
		p.mu.Unlock()

		select {
		case <-p.wake:
			// A new waiter restarts the cadence: its first answer should
			// come ~Initial after it joined, not after the fleet's current
			// long interval.
			if first := time.Now().Add(p.backoff.Delay(0)); first.Before(next) {
				next, attempt = first, 0
			}
			timer.Reset(time.Until(next))
			continue
		case <-timer.C:
		}
		if batch, logCtx := p.snapshot(); len(batch) > 0 {
			p.pollOnce(logCtx, batch)
		}
		attempt++
		next = time.Now().Add(p.backoff.Delay(attempt))
		timer.Reset(time.Until(next))
	}
}

// snapshot returns the current waiters grouped by id, and a context that
// carries a waiter's logging values without its cancellation.
func (p *StatusPoller) snapshot() (map[string][]*statusWaiter, context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	batch := make(map[string][]*statusWaiter, len(p.waiters))
	var logCtx context.Context
	for w := range p.waiters {
		batch[w.id] = append(batch[w.id], w)
		if logCtx == nil {
			logCtx = context.WithoutCancel(w.ctx)
		}
	}
	return batch, logCtx
}

func (p *StatusPoller) pollOnce(ctx context.Context, batch map[string][]*statusWaiter) {
	ids := make([]string, 0, len(batch))
	for id := range batch {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, chunk := range chunkStrings(ids, MaxBatchStatusIDs) {
		p.mu.Lock()
		p.rounds++
		p.mu.Unlock()
		resp, err := p.client.BatchStatus(ctx, chunk)
		if err != nil {
			// The client already retried; a failure now is not transient.
			for _, id := range chunk {
				p.finish(batch[id], fmt.Errorf("polling the status of sandbox %s: %w", id, err))
			}
			continue
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
// something waited for it to run.
type SandboxFailedError struct {
	SandboxID    string
	Status       string
	ErrorType    string
	ErrorMessage string
}

func (e *SandboxFailedError) Error() string {
	msg := fmt.Sprintf("sandbox %s is %s", e.SandboxID, e.Status)
	if e.ErrorType != "" {
		msg += " (" + e.ErrorType + ")"
	}
	if e.ErrorMessage != "" {
		msg += ": " + e.ErrorMessage
	}
	return msg
}

// WaitRunningOptions tune WaitForRunning.
type WaitRunningOptions struct {
	// OnProgress is called when the observed status or image-build state
	// changes (for logs); optional.
	OnProgress func(s SandboxStatus)
}

// WaitForRunning waits through the shared poller until the sandbox is
// RUNNING. A terminal status fails at once with a *SandboxFailedError
// carrying the platform's error type and message; a per-id error fails too.
// PENDING with an image build and PAUSED keep waiting until ctx ends.
func (c *Client) WaitForRunning(ctx context.Context, id string, o WaitRunningOptions) error {
	var last SandboxStatus
	return c.StatusPoller().Watch(ctx, id, func(obs StatusObservation) (bool, error) {
		if obs.Error != nil {
			return false, fmt.Errorf("sandbox %s: %s: %s", id, obs.Error.Code, obs.Error.Message)
		}
		s := *obs.Status
		if o.OnProgress != nil && (s.Status != last.Status || (s.PendingImageBuildID == nil) != (last.PendingImageBuildID == nil)) {
			o.OnProgress(s)
		}
		last = s
		switch {
		case s.Status == StatusRunning:
			return true, nil
		case IsTerminalStatus(s.Status):
			return false, &SandboxFailedError{SandboxID: id, Status: s.Status, ErrorType: deref(s.ErrorType), ErrorMessage: deref(s.ErrorMessage)}
		}
		return false, nil
	})
}

// WaitForGone waits until the sandbox is TERMINATED (or another terminal
// status) or unknown to the platform.
func (c *Client) WaitForGone(ctx context.Context, id string) error {
	return c.StatusPoller().Watch(ctx, id, func(obs StatusObservation) (bool, error) {
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
