package prime

import (
	"context"
	"fmt"
	"time"
)

// EgressApplyBackoff is the default wait for the data plane: first check
// within 100 ms (80 ms ±20 %), doubling to a 1 s cap.
var EgressApplyBackoff = Backoff{Initial: 80 * time.Millisecond, Factor: 2, Max: time.Second, Jitter: 0.2}

// egressFineStep is the shortest polling interval around the expected apply
// time (see learnedSchedule).
const egressFineStep = 50 * time.Millisecond

// EgressNotAppliedError says the platform accepted a policy but did not
// enforce it before the wait ended: fail closed.
type EgressNotAppliedError struct {
	SandboxID string
	// Last is the last status seen.
	Last    EgressPolicyStatus
	Want    int64
	Waited  time.Duration
	Context error
}

func (e *EgressNotAppliedError) Error() string {
	return fmt.Sprintf("egress policy generation %d for sandbox %s was accepted but not enforced after %s "+
		"(platform: generation %d, applied_generation %d, applied %t): %v",
		e.Want, e.SandboxID, e.Waited.Round(time.Millisecond), e.Last.Generation, e.Last.AppliedGeneration, e.Last.Applied, e.Context)
}

func (e *EgressNotAppliedError) Unwrap() error { return e.Context }

// WaitForEgressApplied waits until the data plane enforces generation gen
// or newer (applied, and applied_generation >= gen). last is the answer the
// caller already holds (the PUT's); it is checked first, so a policy applied
// at once costs no extra request. When ctx ends first the error is an
// *EgressNotAppliedError: the caller must treat the policy as not enforced.
func (c *Client) WaitForEgressApplied(ctx context.Context, id string, gen int64, last *EgressPolicyStatus) (*EgressPolicyStatus, error) {
	start := time.Now()
	if last != nil && last.Enforces(gen) {
		return last, nil
	}
	current := EgressPolicyStatus{Generation: gen, AppliedGeneration: -1}
	if last != nil {
		current = *last
	}
	sched := c.egressLatency.schedule(EgressApplyBackoff, egressFineStep)
	var notYet time.Duration // last time the policy was seen not applied
	err := Poll(ctx, sched, func(ctx context.Context) (bool, error) {
		asked := time.Since(start)
		st, err := c.GetEgressPolicy(ctx, id)
		if err != nil {
			return false, err
		}
		current = *st
		if !st.Enforces(gen) {
			notYet = asked
			return false, nil
		}
		return true, nil
	})
	if err == nil {
		c.egressLatency.record(notYet)
		return &current, nil
	}
	if ctx.Err() != nil {
		return &current, &EgressNotAppliedError{SandboxID: id, Last: current, Want: gen, Waited: time.Since(start), Context: err}
	}
	return &current, err
}
