package egress

// Writing a policy and waiting, fail-closed, for the data plane to
// enforce it; reading it back.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// DefaultTimeout is how long a write waits for the data plane to
// enforce a policy, as in the upstream fail-closed wait.
const DefaultTimeout = 60 * time.Second

// Write writes a policy and waits for the data plane within timeout,
// measured from the moment the platform accepted it (as in the upstream
// fail-closed wait). A policy accepted but not enforced in time is an
// *prime.EgressNotAppliedError; the written generation is returned with it
// (0 when nothing was accepted). timeoutKey names the timeouts key for
// messages.
func Write(ctx context.Context, c *prime.Client, id string, policy prime.EgressPolicy, timeout time.Duration, timeoutKey string) (*prime.EgressPolicyStatus, int64, error) {
	put, err := putEgress(ctx, c, id, policy, timeout, timeoutKey)
	if err != nil {
		return nil, 0, err
	}
	final, err := waitEgress(ctx, c, id, put.Generation, put, timeout, timeoutKey)
	if err != nil {
		return nil, put.Generation, err
	}
	return final, put.Generation, nil
}

// putEgress writes a policy; the platform's answer carries the generation
// it accepted. The platform takes a policy only on a RUNNING or PAUSED
// sandbox (409 otherwise): one that is still booting is waited for, within
// timeout, and written to once it runs.
func putEgress(ctx context.Context, c *prime.Client, id string, policy prime.EgressPolicy, timeout time.Duration, timeoutKey string) (*prime.EgressPolicyStatus, error) {
	put, err := c.PutEgressPolicy(ctx, id, policy)
	if errors.Is(err, prime.ErrConflict) {
		if sb, gerr := c.GetSandbox(ctx, id); gerr == nil && booting(sb.Status) {
			if werr := awaitWritable(ctx, c, id, sb.Status, timeout, timeoutKey); werr != nil {
				return nil, werr
			}
			put, err = c.PutEgressPolicy(ctx, id, policy)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("the platform refused the egress policy for sandbox %s: %w", id, err)
	}
	tflog.Info(ctx, "egress policy accepted; waiting for the data plane to enforce it", map[string]any{
		"sandbox_id": id, "generation": put.Generation, "timeout": timeout.String(),
	})
	return put, nil
}

// waitEgress waits, fail-closed, for generation gen to be enforced.
func waitEgress(ctx context.Context, c *prime.Client, id string, gen int64, last *prime.EgressPolicyStatus, timeout time.Duration, timeoutKey string) (*prime.EgressPolicyStatus, error) {
	wctx, cancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("timeouts.%s (%s) reached", timeoutKey, timeout))
	defer cancel()
	return c.WaitForEgressApplied(wctx, id, gen, last)
}

// FailClosedMessage explains a policy that is not enforced after a write.
func FailClosedMessage(id string, timeout time.Duration, timeoutKey string, err error) string {
	var notApplied *prime.EgressNotAppliedError
	if !errors.As(err, &notApplied) {
		return fmt.Sprintf("egress policy for sandbox %s: %v", id, err)
	}
	if notApplied.Paused {
		return fmt.Sprintf("egress policy for sandbox %s was accepted (generation %d) but is not enforced: the sandbox "+
			"is PAUSED, and the platform applies the policy when the sandbox resumes.\n\n"+
			"Failing closed: the policy is not recorded as applied, and nothing that depends on it was started. The "+
			"requested restriction stays requested, so the sandbox resumes under it. Resume the sandbox and apply "+
			"again: the policy is then written and waited for as usual.", id, notApplied.Want)
	}
	return fmt.Sprintf("egress policy for sandbox %s was accepted (generation %d) but is not enforced after %s "+
		"(the platform reports applied_generation %d, applied %t).\n\n"+
		"Failing closed: the policy is not recorded as applied, and nothing that depends on it was started. "+
		"The requested restriction stays requested on the platform; the next apply writes it again and waits "+
		"again, without lifting it in between. If the data plane is only slow, raise timeouts.%s.",
		id, notApplied.Want, timeout, notApplied.Last.AppliedGeneration, notApplied.Last.Applied, timeoutKey)
}

// ReadStatus GETs the policy; gone is true when the sandbox is gone or
// terminated (the egress endpoints answer 404 or 409 then).
func ReadStatus(ctx context.Context, c *prime.Client, id string) (st *prime.EgressPolicyStatus, gone bool, err error) {
	st, err = c.GetEgressPolicy(ctx, id)
	switch code := prime.StatusCodeOf(err); {
	case err == nil:
		return st, false, nil
	case code == http.StatusNotFound:
		return nil, true, nil
	case code == http.StatusConflict || code == http.StatusBadRequest:
		sb, gerr := c.GetSandbox(ctx, id)
		switch {
		case errors.Is(gerr, prime.ErrNotFound):
			return nil, true, nil
		case gerr != nil:
			return nil, false, gerr
		case prime.IsTerminalStatus(sb.Status):
			return nil, true, nil
		}
	}
	return nil, false, err
}

// booting reports a sandbox on its way to RUNNING.
func booting(status string) bool {
	return status == prime.StatusPending || status == prime.StatusProvisioning
}

// awaitWritable makes sure a sandbox can take an egress policy: RUNNING, or
// PAUSED (the platform applies it on resume: it is written, and the wait
// reports it not enforced). A booting sandbox is waited for, within
// timeout; any other status is explained.
func awaitWritable(ctx context.Context, c *prime.Client, id, status string, timeout time.Duration, timeoutKey string) error {
	switch {
	case status == prime.StatusRunning || status == prime.StatusPaused:
		return nil
	case booting(status):
		tflog.Info(ctx, "sandbox still booting; waiting for RUNNING before writing its egress policy", map[string]any{
			"sandbox_id": id, "status": status, "timeout": timeout.String(),
		})
		wctx, cancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("timeouts.%s (%s) reached", timeoutKey, timeout))
		defer cancel()
		if err := c.WaitForRunning(wctx, id, prime.WaitRunningOptions{}); err != nil {
			return fmt.Errorf("sandbox %s was %s, and the platform takes an egress policy only once a sandbox is "+
				"RUNNING (or PAUSED); it did not get there: %w", id, status, err)
		}
		return nil
	}
	return fmt.Errorf("sandbox %s is %s; an egress policy can only be applied to a RUNNING (or PAUSED) sandbox", id, status)
}

// pendingWhilePaused is what a refresh adds to a policy it finds not
// enforced when the sandbox is PAUSED: the platform took the policy and
// applies it on resume, so it is pending, not lost, and the sandbox runs
// nothing meanwhile. "" when the sandbox is not paused (or cannot be read:
// the warning then stays the general one).
func pendingWhilePaused(ctx context.Context, c *prime.Client, id string) string {
	sb, err := c.GetSandbox(ctx, id)
	if err != nil || sb.Status != prime.StatusPaused {
		return ""
	}
	return PendingWhilePausedNote
}

// PendingWhilePausedNote ends the not-enforced warning of a PAUSED sandbox.
const PendingWhilePausedNote = " The sandbox is PAUSED: the policy is pending, and the platform applies it when the " +
	"sandbox resumes (a paused sandbox runs nothing, so no connection can bypass it meanwhile)."
