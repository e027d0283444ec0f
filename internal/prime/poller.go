package prime

import (
	"context"
	"fmt"
	"strings"
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
// fleet of N booting sandboxes costs one request per poll round instead of N
// (the engine is batchPoller, which the checkpoint waits share).
type StatusPoller struct {
	*batchPoller[string, StatusObservation]
}

type statusWaiter = batchWaiter[string, StatusObservation]

// statusSandboxFloor is the least time between two lookups of one sandbox.
// The platform limits status:batchGet to 300 lookups a minute for each
// sandbox it names; rounds carry every waiter, and a fleet's waiters are
// due at different times, so without a floor one sandbox rode along in
// nearly every round (every ~50 ms: 1,200 a minute). 250 ms is at most 240
// a minute; a due waiter inside the floor waits for it.
const statusSandboxFloor = 250 * time.Millisecond

// ridesFree reports whether extra ids fit in the last chunk of a round of
// due ids read size at a time: riding along then costs no request.
func ridesFree(due, extra, size int) bool {
	return extra <= (size-due%size)%size
}

// NewStatusPoller builds a poller on c with the given cadence.
func NewStatusPoller(c *Client, b Backoff) *StatusPoller {
	fetch := func(ctx context.Context, ids []string) (map[string]StatusObservation, error) {
		resp, err := c.BatchStatus(ctx, ids)
		if err != nil {
			return nil, err
		}
		out := make(map[string]StatusObservation, len(ids))
		for i := range resp.Statuses {
			s := resp.Statuses[i]
			out[s.SandboxID] = StatusObservation{SandboxID: s.SandboxID, Status: &s}
		}
		for i := range resp.Errors {
			e := resp.Errors[i]
			out[e.SandboxID] = StatusObservation{SandboxID: e.SandboxID, Error: &e}
		}
		return out, nil
	}
	// The client already retried; a failure now is not transient.
	failed := func(id string, err error) error {
		return fmt.Errorf("polling the status of sandbox %s: %w", id, err)
	}
	// As in the SDK: silence must not read as progress.
	missing := func(id string) error {
		return fmt.Errorf("sandbox %s: missing from the status:batchGet answer", id)
	}
	p := newBatchPoller(b, strings.Compare, chunkedRound(MaxBatchStatusIDs, fetch, failed, missing))
	p.floor = statusSandboxFloor
	// Every id a round names counts against the token's lookup ceiling: a
	// destroy of 3,000 members whose waiters all rode along in every round
	// read 28,000 of the 30,000 a minute allows (with the plan before it,
	// 429s). Waiters ride along only where they cost no request (room in
	// the due ids' last chunk) and while the ceiling has room.
	p.riders = func(due, extra int) bool {
		return ridesFree(due, extra, MaxBatchStatusIDs) && c.throttle.RoomForLookups(extra)
	}
	p.wakeOn = c.bootLatency.sooner
	return &StatusPoller{p}
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
	return p.batchPoller.Watch(ctx, id, sched, check)
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
// expected boot time (bootCohort).
const statusMinStep = 100 * time.Millisecond

// WaitForRunning waits through the shared poller until the sandbox is
// RUNNING. A terminal status fails at once with a *SandboxFailedError
// carrying the platform's error type and message; a per-id error fails too.
// PENDING with an image build and PAUSED keep waiting until ctx ends: ctx
// carries the only budget. The waits for sandboxes this client created share
// the work as a cohort (bootCohort): a few scouts learn the platform's boot
// time, the others check once at it.
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
