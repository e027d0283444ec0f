package prime

// Waiting until a new sandbox is usable, as prime-sandboxes 0.2.39's
// wait_for_creation does: poll the lifecycle status until RUNNING (an
// automatic VM image build runs on a budget of its own), then, because the
// platform's RUNNING can briefly lead the gateway's registration of the
// sandbox, run `echo` through the gateway until it answers once.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"connectrpc.com/connect"
)

// WaitPhase names what a wait was doing.
type WaitPhase string

const (
	// PhaseBoot: waiting for RUNNING.
	PhaseBoot WaitPhase = "boot"
	// PhaseImageBuild: PENDING while the platform builds the VM image of a
	// first-use image (pendingImageBuildId set).
	PhaseImageBuild WaitPhase = "image build"
	// PhaseGateway: RUNNING, waiting for the gateway to run a command.
	PhaseGateway WaitPhase = "gateway"
)

const (
	// DefaultReadyTimeout is WaitReadyOptions.Timeout's default. The SDK's
	// default wait_for_creation allows 115 s to reach RUNNING and a fresh
	// 115 s for the gateway; this one budget for both is their sum.
	DefaultReadyTimeout = 230 * time.Second
	// DefaultImageBuildTimeout is the SDK's budget for a VM image build.
	DefaultImageBuildTimeout = 3000 * time.Second
	// DefaultImageBuildPoll is how often the SDK checks on an image build.
	DefaultImageBuildPoll = 10 * time.Second

	// gatewayProbeCommand and gatewayProbeTimeout are the SDK's
	// reachability probe.
	gatewayProbeCommand = "echo 'sandbox ready'"
	gatewayProbeTimeout = 10 * time.Second
)

// gatewayProbeBackoff paces the probes. The first retry comes quickly: the
// gateway usually trails RUNNING by a fraction of a second.
var gatewayProbeBackoff = Backoff{Initial: 100 * time.Millisecond, Factor: 2, Max: 5 * time.Second, Jitter: 0.2}

// gatewayProbeMinStep is the shortest interval between two probes of one
// sandbox: a probe is one small request to the gateway, and the gateway
// usually trails RUNNING by a fraction of a second.
const gatewayProbeMinStep = 25 * time.Millisecond

// gatewayAliveRecheck is how stale the control plane's RUNNING may be before
// a failed probe asks again whether the sandbox is still alive. The SDK asks
// before every probe; its probes are seconds apart, ours can be 25 ms, and a
// sandbox that dies while its gateway registers is still noticed within a
// second.
var gatewayAliveRecheck = time.Second

// bootCohort paces the status checks of every sandbox waiting to boot
// (cohortParams): two scouts while the boot time is unknown, one wait in
// sixteen afterwards; followers make one check at the expected time (a
// status round's lookup counts against the token's 30,000 a minute, and a
// fleet's every member checked on its own backoff cost about four each),
// and on their own after 2 s, 6 s, 11 s, … (5 s apart at most) while
// nothing is known. No hop: the shared poller moves a follower's check when
// what is known changes (its wakeOn).
var bootCohort = cohortParams{
	first:   DefaultStatusBackoff.Initial,
	minStep: statusMinStep,
	max:     DefaultStatusBackoff.Max,
	safety:  Backoff{Initial: 2 * time.Second, Factor: 2, Max: DefaultStatusBackoff.Max},
	scouts:  2,
	every:   16,
}

// gatewayCohort paces the probes of every sandbox waiting for its gateway
// (cohortParams): scouts probe at once, then finely; followers probe once
// when a scout has seen the gateway answer, or on their own after 2 s.
var gatewayCohort = cohortParams{
	first:   0,
	minStep: gatewayProbeMinStep,
	max:     gatewayProbeBackoff.Max,
	hop:     cohortHop,
	safety:  Backoff{Initial: 2 * time.Second, Factor: 2, Max: gatewayProbeBackoff.Max},
	scouts:  2,
	every:   16,
}

// WaitReadyOptions tune WaitForReady. Zero values select the defaults.
type WaitReadyOptions struct {
	// Timeout is the budget for booting and, with Gateway, for the gateway
	// probe (default DefaultReadyTimeout). An image build does not use it:
	// it restarts when the build is over, as in the SDK.
	Timeout time.Duration
	// ImageBuildTimeout is the budget of an automatic VM image build
	// (default DefaultImageBuildTimeout), polled every ImageBuildPoll
	// (default DefaultImageBuildPoll).
	ImageBuildTimeout time.Duration
	ImageBuildPoll    time.Duration
	// Gateway: after RUNNING, wait until the gateway runs a command.
	Gateway bool
	// OnRunning, when set, is called once the sandbox is RUNNING, before
	// the gateway wait: work that needs only RUNNING (an egress write)
	// overlaps the gateway's registration instead of following it.
	OnRunning func()
	// OnProgress is called when the observed status or image-build state
	// changes (for logs); optional.
	OnProgress func(s SandboxStatus)
}

// WaitTimeoutError reports a budget of WaitForReady that ran out. It
// unwraps to context.DeadlineExceeded; the sandbox did not fail, so it is
// never a *SandboxFailedError, whatever Last is.
type WaitTimeoutError struct {
	SandboxID string
	Phase     WaitPhase
	Budget    time.Duration
	// LastStatus is the last lifecycle status seen ("" when none was).
	LastStatus string
	// Last is the last transient probe failure (gateway phase), else nil.
	Last error
}

func (e *WaitTimeoutError) Error() string {
	last := e.LastStatus
	if last == "" {
		last = "none seen"
	}
	switch e.Phase {
	case PhaseImageBuild:
		return fmt.Sprintf("the VM image build for sandbox %s did not finish within %s (status %s)", e.SandboxID, e.Budget, last)
	case PhaseGateway:
		msg := fmt.Sprintf("sandbox %s reached RUNNING but did not become reachable through the gateway within %s (status %s)", e.SandboxID, e.Budget, last)
		if e.Last != nil {
			msg += "; last error: " + e.Last.Error()
		}
		return msg
	}
	return fmt.Sprintf("sandbox %s did not reach RUNNING within %s (last status %s)", e.SandboxID, e.Budget, last)
}

func (e *WaitTimeoutError) Unwrap() error { return context.DeadlineExceeded }

// WaitForReady waits until a sandbox is usable: RUNNING and, with
// o.Gateway, answering commands through the gateway. Every waiting sandbox
// shares the client's status poller (one status:batchGet per round for all
// of them). ctx carries cancellation only; the budgets are o's. It returns
// nil, a *SandboxFailedError for a terminal status (with the platform's
// error type and message), a *WaitTimeoutError for a budget that ran out,
// ctx's cause when ctx ends first, or the error that ended the wait
// (a per-id status error, a gateway failure that is not transient).
func (c *Client) WaitForReady(ctx context.Context, id string, o WaitReadyOptions) error {
	if o.Timeout <= 0 {
		o.Timeout = DefaultReadyTimeout
	}
	if o.ImageBuildTimeout <= 0 {
		o.ImageBuildTimeout = DefaultImageBuildTimeout
	}
	if o.ImageBuildPoll <= 0 {
		o.ImageBuildPoll = DefaultImageBuildPoll
	}
	deadline, err := c.waitBoot(ctx, id, bootOptions{
		timeout: o.Timeout, buildTimeout: o.ImageBuildTimeout, buildPoll: o.ImageBuildPoll, onProgress: o.OnProgress,
	})
	if err != nil {
		return err
	}
	if o.OnRunning != nil {
		o.OnRunning()
	}
	if !o.Gateway {
		return nil
	}
	return c.waitGateway(ctx, id, deadline, o.Timeout)
}

// bootOptions: zero durations mean no budget of the wait's own (ctx's
// deadline, if any, is the only one) and the plain schedule during builds.
type bootOptions struct {
	timeout      time.Duration
	buildTimeout time.Duration
	buildPoll    time.Duration
	onProgress   func(SandboxStatus)
}

// bootWait is the state of one wait for RUNNING. The status check runs on
// the poller's goroutine; the schedule and the budget timer read the same
// state, so it is guarded by mu.
type bootWait struct {
	id   string
	o    bootOptions
	base Schedule
	// cohort paces the boot until an image build shows (nil after one:
	// a build's boot is not the usual one, and base restarts).
	cohort *cohortWait

	mu         sync.Mutex
	phase      WaitPhase
	deadline   time.Time // of the current phase's budget; zero: none
	buildSince time.Time // when the image build was first seen
	last       SandboxStatus
	seen       bool
	lastN      int // the last check index the poller asked a delay for
	offset     int // check index at which the schedule restarted
	timer      *time.Timer
	expired    context.CancelCauseFunc
}

// Delay is the wait's schedule: the build poll during an image build, else
// the cohort's next check (measured from now, so the poller may ask again
// when the boot time becomes known), or after a build the plain backoff,
// restarted.
func (w *bootWait) Delay(n int) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lastN = n
	if w.phase == PhaseImageBuild && w.o.buildPoll > 0 {
		return w.o.buildPoll
	}
	if w.cohort != nil {
		return w.cohort.untilDue()
	}
	return w.base.Delay(max(0, n-w.offset))
}

// noteAnswer tells the cohort about an answer that just arrived: one the
// wait was due for is its check (a miss, or the time that showed RUNNING);
// one that came well before (another wait's on the same sandbox) teaches
// nothing. The answer's arrival, not the request's sending, is the time:
// the platform may have decided any time in between, so only the arrival
// is an upper bound (under load the sending time taught a boot time
// shorter than the boot, and every member checked too early once).
func (w *bootWait) noteAnswer(running bool, seen *time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cohort == nil {
		return
	}
	at := w.cohort.elapsed()
	if at+pollSlack < w.cohort.next() {
		return
	}
	w.cohort.asked(at, !running)
	if running {
		*seen = at
	}
}

// moving: a cohort wait's next check moves when the boot time becomes
// known or drops (movingSchedule).
func (w *bootWait) moving() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cohort != nil
}

// setBudget starts the current phase's budget (under mu).
func (w *bootWait) setBudget(d time.Duration, from time.Time) {
	if d <= 0 {
		w.deadline = time.Time{}
		if w.timer != nil {
			w.timer.Stop()
		}
		return
	}
	w.deadline = from.Add(d)
	if w.timer == nil {
		w.timer = time.AfterFunc(time.Until(w.deadline), w.expire)
		return
	}
	w.timer.Reset(time.Until(w.deadline))
}

// expire ends the wait when the current phase's budget has run out (the
// timer may have been set for an older deadline: then it is re-armed).
func (w *bootWait) expire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.deadline.IsZero() {
		return
	}
	if left := time.Until(w.deadline); left > 0 {
		w.timer.Reset(left)
		return
	}
	budget := w.o.timeout
	if w.phase == PhaseImageBuild {
		budget = w.o.buildTimeout
	}
	w.expired(&WaitTimeoutError{SandboxID: w.id, Phase: w.phase, Budget: budget, LastStatus: w.last.Status})
}

// observe updates the phase from one status and reports progress.
func (w *bootWait) observe(s SandboxStatus) {
	w.mu.Lock()
	prev, hadPrev := w.last, w.seen
	w.last, w.seen = s, true
	// The SDK's test for a build in progress: PENDING with a build id.
	building := s.Status == StatusPending && s.PendingImageBuildID != nil
	switch {
	case building && w.phase != PhaseImageBuild:
		w.phase = PhaseImageBuild
		if w.cohort != nil {
			w.cohort.done(0) // a first-use build is not the usual boot
			w.cohort = nil
		}
		if w.buildSince.IsZero() {
			w.buildSince = time.Now() // the build's budget is never restarted
		}
		w.setBudget(w.o.buildTimeout, w.buildSince)
	case !building && w.phase == PhaseImageBuild:
		// The build is over: the creation budget and the schedule restart.
		w.phase = PhaseBoot
		w.offset = w.lastN + 1
		w.setBudget(w.o.timeout, time.Now())
	}
	w.mu.Unlock()
	changed := !hadPrev || s.Status != prev.Status || (s.PendingImageBuildID == nil) != (prev.PendingImageBuildID == nil)
	if w.o.onProgress != nil && changed {
		w.o.onProgress(s)
	}
}

// waitBoot waits through the shared poller until the sandbox is RUNNING,
// and returns the deadline of the creation budget then in force (zero
// without one), which the gateway phase shares.
func (c *Client) waitBoot(ctx context.Context, id string, o bootOptions) (time.Time, error) {
	start := time.Now()
	w := &bootWait{id: id, o: o, phase: PhaseBoot, base: DefaultStatusBackoff}
	if created, ok := c.kinds.takeCreated(id); ok {
		// Only a boot timed from its create's answer teaches the cohort: a
		// wait on a sandbox this client did not create (or one resumed)
		// starts somewhere in its boot and keeps the plain schedule.
		w.cohort = c.bootLatency.joinCohort(bootCohort, created)
	}
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	w.expired = cancel
	w.mu.Lock()
	w.setBudget(o.timeout, start)
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		if w.timer != nil {
			w.timer.Stop()
		}
		w.mu.Unlock()
	}()

	var seen time.Duration // when the answer that showed RUNNING arrived
	defer func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.cohort != nil {
			w.cohort.done(seen)
		}
	}()
	err := c.StatusPoller().Watch(wctx, id, w, func(obs StatusObservation) (bool, error) {
		if obs.Error != nil {
			return false, fmt.Errorf("sandbox %s: %s: %s", id, obs.Error.Code, obs.Error.Message)
		}
		s := *obs.Status
		w.observe(s)
		running := s.Status == StatusRunning
		w.noteAnswer(running, &seen)
		switch {
		case running:
			return true, nil
		case IsTerminalStatus(s.Status):
			return false, &SandboxFailedError{SandboxID: id, Status: s.Status, ErrorType: deref(s.ErrorType), ErrorMessage: deref(s.ErrorMessage)}
		}
		return false, nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return time.Time{}, context.Cause(ctx)
		}
		return time.Time{}, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.deadline, nil
}

// waitGateway probes the gateway until a command runs, within what is left
// of the budget (deadline; zero: ctx's only), retrying transient failures
// on gatewayProbeBackoff while the control plane keeps the sandbox alive.
func (c *Client) waitGateway(ctx context.Context, id string, deadline time.Time, budget time.Duration) error {
	gctx := ctx
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		gctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	var last error
	lastStatus := StatusRunning
	aliveAt := time.Now() // the boot wait just saw RUNNING
	// Probes share the work with every other sandbox waiting for its
	// gateway (a cohort, latency_estimate.go): while the lag is unknown two of them
	// probe on a fine cadence and the others wait until one has answered,
	// then probe once at that lag after their own RUNNING.
	w := c.gatewayLatency.joinCohort(gatewayCohort, time.Now())
	var seen time.Duration
	defer func() { w.done(seen) }()
	// A follower that knows the gateway's usual lag fetches its token now,
	// while it waits: its one probe then costs one round trip, not two.
	// (The SDK asks at the same moment: its first probe follows RUNNING at
	// once.) While the lag is unknown nobody does: a thousand fetches at
	// once would queue the scouts' own and delay what every follower waits
	// for. Concurrent fetches share one POST /auth; a failure here is the
	// probe's to report.
	if w.waitsForKnownLag() {
		tctx, stopToken := context.WithCancel(gctx)
		tokenDone := make(chan struct{})
		go func() {
			defer close(tokenDone)
			_, _ = c.gatewayAuth(tctx, id)
		}()
		defer func() { stopToken(); <-tokenDone }()
	}
	probe := func(ctx context.Context) (bool, error) {
		if !w.due() {
			return false, nil // a follower's free round
		}
		asked := w.elapsed()
		_, err := c.exec(ctx, id, ExecRequest{Command: gatewayProbeCommand, Timeout: gatewayProbeTimeout}, execMode{probe: true})
		if err == nil {
			w.asked(asked, false)
			// The answer's time, not the send time as for policies: a
			// probe's wait starts when the shared status round saw RUNNING,
			// which lags the real RUNNING by a different amount for each
			// sandbox, and the answer's slack keeps followers from probing
			// before their gateway is up (a miss is one more probe on a
			// gateway already busy with a fleet's).
			seen = w.elapsed()
			return true, nil
		}
		w.asked(asked, true)
		if ctx.Err() != nil {
			return false, context.Cause(ctx)
		}
		if !transientProbeError(err) {
			return false, fmt.Errorf("sandbox %s reached RUNNING but the gateway failed: %w", id, err)
		}
		last = err
		// Ask the control plane whether the sandbox is still alive, as the
		// SDK does, once its last RUNNING is gatewayAliveRecheck old: one
		// round of the shared poller, which every waiting sandbox shares
		// (the probe itself never asks error-context).
		if time.Since(aliveAt) < gatewayAliveRecheck {
			return false, nil
		}
		st, err := c.observeStatus(ctx, id)
		if err != nil {
			if ctx.Err() != nil {
				return false, context.Cause(ctx)
			}
			return false, err
		}
		aliveAt = time.Now()
		lastStatus = st.Status
		if IsTerminalStatus(st.Status) {
			return false, &SandboxFailedError{SandboxID: id, Status: st.Status, ErrorType: deref(st.ErrorType), ErrorMessage: deref(st.ErrorMessage)}
		}
		return false, nil
	}
	err := Poll(gctx, w, probe)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return context.Cause(ctx)
	case gctx.Err() != nil:
		return &WaitTimeoutError{SandboxID: id, Phase: PhaseGateway, Budget: budget, LastStatus: lastStatus, Last: last}
	}
	return err
}

// immediately is a schedule whose first check is due at once.
type immediately struct{}

func (immediately) Delay(int) time.Duration { return 0 }

// observeStatus reads a sandbox's status in the poller's next round, which
// it shares with every other waiter.
func (c *Client) observeStatus(ctx context.Context, id string) (SandboxStatus, error) {
	var got SandboxStatus
	err := c.StatusPoller().Watch(ctx, id, immediately{}, func(obs StatusObservation) (bool, error) {
		if obs.Error != nil {
			return false, fmt.Errorf("sandbox %s: %s: %s", id, obs.Error.Code, obs.Error.Message)
		}
		got = *obs.Status
		return true, nil
	})
	return got, err
}

// transientProbeError reports a probe failure the SDK's reachability wait
// retries: Connect unavailable, aborted or deadline_exceeded; the gateway
// not knowing the sandbox while the control plane says RUNNING (or could not
// be asked: the status check after the failure then decides); REST 408,
// 409 and 5xx; a command timeout; a connection that failed or broke.
// Anything else (a refused token, a stream without an exit code, a sandbox
// the control plane reports stopped) ends the wait.
func transientProbeError(err error) bool {
	if errors.Is(err, errNoExitCode) {
		return false
	}
	var failed *SandboxFailedError
	if errors.As(err, &failed) {
		return failed.GatewayNotFound && (failed.ControlPlaneStatus == StatusRunning || failed.ControlPlaneStatus == "")
	}
	if errors.Is(err, ErrExecTimeout) {
		return true
	}
	var rpcErr *connect.Error
	if errors.As(err, &rpcErr) {
		switch rpcErr.Code() {
		case connect.CodeUnavailable, connect.CodeAborted, connect.CodeDeadlineExceeded:
			return true
		}
		return false
	}
	if code := StatusCodeOf(err); code != 0 {
		return code == http.StatusRequestTimeout || code == http.StatusConflict || code >= 500
	}
	return isUnsent(err) || isResetWhileReading(err) || isTimeout(err)
}
