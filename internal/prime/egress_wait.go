package prime

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// EgressApplyBackoff is the default wait for the data plane: first check
// within 100 ms (80 ms ±20 %), doubling to a 1 s cap.
var EgressApplyBackoff = Backoff{Initial: 80 * time.Millisecond, Factor: 2, Max: time.Second, Jitter: 0.2}

// egressFineStep is the shortest polling interval around the expected apply
// time; slower data planes get a step of 1/20 of their expected time, so the
// window around it always costs about 14 checks at most.
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

// applyLatency remembers how long this client's recent policies took to be
// enforced. A fleet's policies go through the same data plane, so after a
// few of them the wait can poll closely around the usual time instead of
// doubling past it (a 1 s apply is otherwise seen ~200 ms late). What is
// recorded is the last moment a policy was seen NOT yet applied: a lower
// bound of the true apply time, so the learnt schedule starts checking just
// before it. (Recording when it was seen applied would include each wait's
// overshoot and keep the schedule late.)
type applyLatency struct {
	mu     sync.Mutex
	recent []time.Duration // ring of the last applyLatencySamples
	next   int
}

const applyLatencySamples = 32

func (a *applyLatency) record(d time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.recent) < applyLatencySamples {
		a.recent = append(a.recent, d)
		return
	}
	a.recent[a.next] = d
	a.next = (a.next + 1) % applyLatencySamples
}

// median is the typical apply time (lower bound), once three policies were
// seen.
func (a *applyLatency) median() (time.Duration, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.recent) < 3 {
		return 0, false
	}
	s := slices.Clone(a.recent)
	slices.Sort(s)
	return s[len(s)/2], true
}

// egressSchedule is the wait for one policy. Without an estimate it is
// EgressApplyBackoff. With one (expected, from applyLatency), the first
// check still comes within 100 ms (a fast data plane is never waited on),
// the next at 90 % of the expected time, then every 50 ms until 150 % of
// it (steps of max(50 ms, expected/20)), and from there doubling from the
// step to the 1 s cap, so a data plane that became slow costs little more
// than the plain backoff would.
type egressSchedule struct {
	expected time.Duration
}

func (s egressSchedule) Delay(n int) time.Duration {
	first := EgressApplyBackoff.Delay(0)
	if s.expected <= 2*first {
		return EgressApplyBackoff.Delay(n)
	}
	step := max(egressFineStep, s.expected/20)
	start := s.expected*9/10 - EgressApplyBackoff.Initial
	fineSteps := int((s.expected*15/10 - s.expected*9/10) / step)
	switch {
	case n == 0:
		return first
	case n == 1:
		return start
	case n <= 1+fineSteps:
		return step
	default:
		// Past the window: keep doubling from the fine step to the cap.
		k := min(n-1-fineSteps, 16)
		return min(EgressApplyBackoff.Max, step<<k)
	}
}

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
	var sched Schedule = EgressApplyBackoff
	if expected, ok := c.egressLatency.median(); ok {
		sched = egressSchedule{expected: expected}
	}
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
