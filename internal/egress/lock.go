package egress

// Locking a sandbox: the one write path of prime_egress_policy and
// prime_fleet_egress_policy (each member goes through it), with its
// baseline capture and fail-closed errors.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// lockResult is a first write that the data plane enforces.
type lockResult struct {
	Status     *prime.EgressPolicyStatus
	Generation int64
	// Baseline is what the sandbox held before, for the destroy.
	Baseline prime.EgressPolicy
}

// lockSandbox is a policy's create on one sandbox (shared with
// prime_fleet_egress_policy): the sandbox must be RUNNING; what it
// holds now is kept as the baseline, unless notes say that is an earlier
// failed create's write; then the policy is written and waited for,
// fail-closed. A *lockError carries the attribute-level message. A write
// that fails closed is noted with its baseline; a success drops the note
// (the caller records the baseline in state).
func lockSandbox(ctx context.Context, c *prime.Client, notes *Baselines, id string, policy prime.EgressPolicy, timeout time.Duration) (*lockResult, error) {
	// What this process already saw of the sandbox (its create, a refresh,
	// the shared status poller) saves a GET: a fleet's policies then cost a
	// PUT and the wait. A stale hint only means the PUT itself is refused.
	known, ok := c.Known(id)
	if !ok || known.Status != prime.StatusRunning {
		sb, err := c.GetSandbox(ctx, id)
		switch {
		case errors.Is(err, prime.ErrNotFound):
			return nil, &lockError{Summary: "Cannot apply egress policy", Err: fmt.Errorf("sandbox %s does not exist", id), Sandbox: true}
		case err != nil:
			return nil, &lockError{Summary: "Cannot apply egress policy", Err: err, Sandbox: true}
		}
		if err := awaitWritable(ctx, c, id, sb.Status, timeout, "create"); err != nil {
			return nil, &lockError{Summary: "Cannot apply egress policy", Err: err, Sandbox: true}
		}
		known, _ = c.Known(id)
	}
	if !known.EgressSure {
		// This process neither created the sandbox nor read or wrote its
		// policy (Terraform applies in a provider process of its own), and a
		// sandbox object's lists may be only the create-time ones: a restore
		// locked right after RUNNING would read as open. The egress-policy
		// endpoint says what it holds.
		st, err := c.GetEgressPolicy(ctx, id)
		if err != nil {
			return nil, &lockError{Summary: "Cannot apply egress policy", Err: fmt.Errorf("reading the egress policy of sandbox %s: %w", id, err), Sandbox: true}
		}
		known.Egress = st.Policy
	}
	baseline := known.Egress
	if noted, ok := notes.baseline(id, known.Egress); ok {
		baseline = noted
	}
	st, gen, err := Write(ctx, c, id, policy, timeout, "create")
	if err != nil {
		// Nothing is recorded: the policy does not exist for Terraform, so
		// dependents are not created and the next apply creates (writes and
		// waits) again. Nothing lifts the restriction in between; the note
		// keeps the baseline for that next create.
		if gen > 0 {
			notes.note(id, baseline, policy)
		}
		return nil, &lockError{Summary: "Egress policy not enforced", Err: errors.New(FailClosedMessage(id, timeout, "create", err)), Written: gen}
	}
	notes.forget(id)
	return &lockResult{Status: st, Generation: gen, Baseline: baseline}, nil
}

// lockError is a failed lock. Sandbox marks a problem with the sandbox
// itself (reported on sandbox_id); Written is a generation the platform
// accepted but did not enforce.
type lockError struct {
	Summary string
	Err     error
	Sandbox bool
	Written int64
}

func (e *lockError) Error() string { return e.Err.Error() }

func (e *lockError) Unwrap() error { return e.Err }

// relockSandbox is a policy's in-place update on one sandbox: when the
// platform already enforces the same destinations (only the spelling
// changed) nothing is written; otherwise the policy is written and waited
// for. wrote is the generation written (0 when none).
func relockSandbox(ctx context.Context, c *prime.Client, id string, policy prime.EgressPolicy, timeout time.Duration) (st *prime.EgressPolicyStatus, gen int64, err error) {
	current, err := c.GetEgressPolicy(ctx, id)
	if err != nil {
		return nil, 0, fmt.Errorf("reading the egress policy of sandbox %s: %w", id, err)
	}
	if prime.SamePolicy(current.Policy, policy) && current.Enforces(current.Generation) {
		return current, current.Generation, nil
	}
	st, gen, err = Write(ctx, c, id, policy, timeout, "update")
	if err != nil {
		return nil, gen, errors.New(FailClosedMessage(id, timeout, "update", err))
	}
	return st, gen, nil
}
