package prime

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// EgressApplyBackoff bounds the egress wait's cadence: a scout's first check
// within 100 ms (Initial), never more than Max between two checks of a late
// policy.
var EgressApplyBackoff = Backoff{Initial: 80 * time.Millisecond, Factor: 2, Max: time.Second, Jitter: 0.2}

// egressFineStep is the shortest interval between two checks of one policy.
const egressFineStep = 50 * time.Millisecond

// egressCohort is how policy waits share the work (see cohortParams): two
// scouts while the apply time is unknown, one wait in sixteen scouting
// afterwards, followers woken when what is known changes (and every cohortHop
// regardless) and, while nothing is, checking on their own after 2 s, 6 s,
// 14 s, … (8 s apart at most) in case no scout ever finishes.
var egressCohort = cohortParams{
	first:   EgressApplyBackoff.Initial,
	minStep: egressFineStep,
	max:     EgressApplyBackoff.Max,
	hop:     cohortHop,
	safety:  Backoff{Initial: 2 * time.Second, Factor: 2, Max: 8 * time.Second},
	scouts:  2,
	every:   16,
}

// EgressNotAppliedError says the platform accepted a policy but did not
// enforce it before the wait ended: fail closed.
type EgressNotAppliedError struct {
	SandboxID string
	// Last is the last status seen.
	Last    EgressPolicyStatus
	Want    int64
	Waited  time.Duration
	Context error
	// Paused: the sandbox is PAUSED. The platform keeps the accepted
	// policy and applies it when the sandbox resumes; until then it is not
	// enforced, and the wait did not go on.
	Paused bool
	// LastError is the last failed check (a 429 or a 5xx the wait rode
	// out), if any.
	LastError error
}

func (e *EgressNotAppliedError) Error() string {
	if e.Paused {
		return fmt.Sprintf("egress policy generation %d for sandbox %s was accepted but is not enforced: the sandbox "+
			"is PAUSED, and the platform applies the policy when it resumes", e.Want, e.SandboxID)
	}
	msg := fmt.Sprintf("egress policy generation %d for sandbox %s was accepted but not enforced after %s "+
		"(platform: generation %d, applied_generation %d, applied %t): %v",
		e.Want, e.SandboxID, e.Waited.Round(time.Millisecond), e.Last.Generation, e.Last.AppliedGeneration, e.Last.Applied, e.Context)
	if e.LastError != nil {
		msg += fmt.Sprintf(" (last check: %v)", e.LastError)
	}
	return msg
}

func (e *EgressNotAppliedError) Unwrap() error { return e.Context }

// WaitForEgressApplied waits until the data plane enforces generation gen
// or newer (applied, and applied_generation >= gen). last is the answer the
// caller already holds (the PUT's); it is checked first, so a policy applied
// at once costs no extra request. When ctx ends first the error is an
// *EgressNotAppliedError: the caller must treat the policy as not enforced.
//
// Every policy wait of the client belongs to one cohort (latency_estimate.go): a few
// scouts poll finely while the apply time is unknown, and the other waits
// ask once, when a finished wait says the data plane is done, so a fleet's
// policies PUT together cost about one GET each and are seen within a step
// or two of being applied.
//
// A sandbox known to be PAUSED (confirmed with one GET) ends the wait at
// once with Paused set: the platform applies the policy on resume, and
// nothing may treat it as enforced before. A check answered 429 or 5xx
// (after the client's own retries, which never wait past ctx's deadline)
// is no answer: the wait goes on until its deadline.
func (c *Client) WaitForEgressApplied(ctx context.Context, id string, gen int64, last *EgressPolicyStatus) (*EgressPolicyStatus, error) {
	start := time.Now()
	if last != nil && last.Enforces(gen) {
		return last, nil
	}
	current := EgressPolicyStatus{Generation: gen, AppliedGeneration: -1}
	if last != nil {
		current = *last
	}
	paused := func() bool {
		sb, err := c.GetSandbox(ctx, id)
		return err == nil && sb.Status == StatusPaused
	}
	known, ok := c.Known(id)
	if ok && known.Status == StatusPaused && paused() {
		return &current, &EgressNotAppliedError{SandboxID: id, Last: current, Want: gen, Waited: time.Since(start), Paused: true}
	}
	// A sandbox this process has not seen (Terraform's apply runs in a
	// provider process of its own, after the refresh's) may be PAUSED too:
	// once the wait has lasted pausedCheckAfter, one GET tells, so a policy
	// written to a paused sandbox is reported pending without waiting out the
	// whole timeout. Waits that end sooner cost nothing extra.
	statusChecked := ok
	w := c.egressLatency.joinCohort(egressCohort, start)
	var seen time.Duration
	var lastErr error
	defer func() { w.done(seen) }()
	var pausedSeen bool
	err := Poll(ctx, w, func(ctx context.Context) (bool, error) {
		if !statusChecked && time.Since(start) >= pausedCheckAfter {
			statusChecked = true
			if paused() {
				pausedSeen = true
				return false, errPausedWait
			}
		}
		if !w.due() {
			return false, nil // a follower's free round: nothing new is known
		}
		asked := w.elapsed()
		st, err := c.GetEgressPolicy(ctx, id)
		if err != nil && ctx.Err() == nil && passingWaitError(err) {
			lastErr = err
			return false, nil
		}
		if err != nil {
			return false, err
		}
		current = *st
		applied := st.Enforces(gen)
		w.asked(asked, !applied)
		if applied {
			seen = asked
		}
		return applied, nil
	})
	switch {
	case err == nil:
		return &current, nil
	case pausedSeen:
		return &current, &EgressNotAppliedError{SandboxID: id, Last: current, Want: gen, Waited: time.Since(start), Paused: true}
	case ctx.Err() != nil:
		return &current, &EgressNotAppliedError{SandboxID: id, Last: current, Want: gen, Waited: time.Since(start), Context: err, LastError: lastErr}
	}
	return &current, err
}

// pausedCheckAfter is how long an egress wait on a sandbox of unknown
// status goes before it asks whether the sandbox is PAUSED: longer than
// the data plane usually takes, so ordinary waits cost no extra request.
const pausedCheckAfter = 2 * time.Second

// errPausedWait ends a wait that found the sandbox PAUSED.
var errPausedWait = errors.New("the sandbox is paused")

// passingWaitError reports a failed check that says nothing about the
// policy: rate limited, a server error, or a connection that failed.
func passingWaitError(err error) bool {
	if errors.Is(err, ErrRateLimited) || errors.Is(err, ErrServer) {
		return true
	}
	var apiErr *APIError
	return !errors.As(err, &apiErr) && !errors.Is(err, ErrInvalidRequest)
}
