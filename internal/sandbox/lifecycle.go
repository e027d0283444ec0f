package sandbox

// Creating and waiting for one sandbox, shared by prime_sandbox and every
// member of prime_sandbox_fleet: the create journal, the tracked create that
// never loses a sandbox, the wait until it is usable, and the errors a user
// can act on.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/primeintellect/terraform-provider-prime/internal/egress"
	"github.com/primeintellect/terraform-provider-prime/internal/journal"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

const (
	defaultSandboxCreateTimeout = 20 * time.Minute
	defaultSandboxDeleteTimeout = 5 * time.Minute
)

// taintedNote ends every error after which a sandbox stays in state.
const taintedNote = "The sandbox stays in state as tainted: the next apply replaces it, and `terraform destroy` removes it."

// creator is what creates a sandbox: the client, this machine's create
// journal and the recovery from the platform.
type creator struct {
	client   *prime.Client
	journal  *journal.Creates
	recovery *Recovery
}

// createSandbox creates the sandbox of one create of kind (createKindSandbox
// or createKindFleet), or adopts the one a lost apply created for it.
//
// First the platform is asked (Recovery): a live sandbox of this workspace
// scope labelled for this very create, which no plan saw Terraform hold,
// no create of this process took and held does not name (a fleet's
// current members), is what an earlier apply created and lost; it is
// adopted (resumed if it was paused) instead of making a second one. It
// has no journal entry: nil is returned for it.
//
// Otherwise one create is sent. The journal keeps its key until the
// caller's Create returns (the caller finishes the returned entry then), so
// a create cut short by a killed Terraform is finished by the next apply
// on this machine even before the platform lists the sandbox. A non-nil
// sandbox exists and must reach state, even when err reports an
// interruption. Without a sandbox there is no entry to finish: a create
// the platform refused is forgotten, and one whose outcome is unknown (the
// request may have reached the platform, the answer was lost) is released
// for the next apply to replay, which adopts the sandbox if it was made.
func createSandbox(ctx context.Context, cr creator, kind string, held map[string]bool, req prime.CreateSandboxRequest) (*prime.Sandbox, *journal.InflightCreate, error) {
	c, journal := cr.client, cr.journal
	label := cr.recovery.label(kind, &req)
	found, err := cr.recovery.take(ctx, req, label, held)
	if err != nil {
		return nil, nil, err
	}
	if found != nil {
		if sb, err := adoptLeftover(ctx, c, found, req); sb != nil || err != nil {
			return sb, nil, err
		}
	}
	inflight := journal.Begin(req)
	req.IdempotencyKey = inflight.Key()
	sb, err := createSandboxTracked(ctx, c, req)
	if sb != nil && inflight.Adopted() && !adoptable(sb, req) {
		// The leftover key's sandbox is not one this configuration can use
		// (stopped since, or not what the key was recorded for): forget the
		// entry and create with a fresh key.
		tflog.Info(ctx, "create journal: not adopting the sandbox of a leftover key", map[string]any{
			"sandbox_id": sb.ID, "status": sb.Status,
		})
		inflight.Finish()
		inflight = journal.Fresh(req)
		req.IdempotencyKey = inflight.Key()
		sb, err = createSandboxTracked(ctx, c, req)
	}
	if sb == nil {
		if definitelyNotCreated(err) {
			inflight.Finish()
		} else {
			inflight.Release()
		}
		return nil, nil, err
	}
	inflight.RecordID(sb.ID)
	return sb, inflight, err
}

// adoptLeftover takes over the sandbox a lost apply created for req, as
// the platform listed it: nil when it is not one this create can use (see
// adoptable), which is then left alone. A paused one is resumed first: a
// create's sandbox starts running (the caller pauses it again if the
// configuration says so). An error is an adopted sandbox that could not be
// resumed: it must reach state, like any sandbox a create returns.
func adoptLeftover(ctx context.Context, c *prime.Client, sb *prime.Sandbox, req prime.CreateSandboxRequest) (*prime.Sandbox, error) {
	if !adoptable(sb, req) {
		tflog.Info(ctx, "recovery: not adopting a sandbox labelled for this create", map[string]any{"sandbox_id": sb.ID, "status": sb.Status})
		return nil, nil
	}
	tflog.Info(ctx, "recovery: adopting the sandbox an earlier, lost apply created", map[string]any{
		"sandbox_id": sb.ID, "name": sb.Name, "status": sb.Status,
	})
	if sb.Status == prime.StatusPaused {
		if err := c.ResumeSandbox(ctx, sb.ID); err != nil {
			return sb, fmt.Errorf("sandbox %s, created by an earlier, lost apply, is paused and could not be resumed: %w", sb.ID, err)
		}
	}
	return sb, nil
}

// interruptedCreate explains a create whose sandbox was recovered after an
// interruption.
func interruptedCreate(id string, err error) string {
	return fmt.Sprintf("sandbox %s: %v", id, err)
}

// awaitSandbox waits until a new sandbox is usable — RUNNING and answering
// commands through its gateway — and turns the outcome into an error a user
// can act on (the caller says what becomes of the sandbox). ctx carries
// cancellation only; timeout is the create budget (a first-use image build
// has its own).
func awaitSandbox(ctx context.Context, c *prime.Client, id string, timeout, buildTimeout time.Duration) error {
	return awaitSandboxThen(ctx, c, id, timeout, buildTimeout, nil)
}

// bornLock is the egress block a new sandbox is restricted to before its
// create returns: Policy, SentAtCreate whether the create request carried
// it (else it is written once the sandbox is RUNNING: a restore [I]), and
// the fail-closed Timeout.
type bornLock struct {
	Policy       prime.EgressPolicy
	SentAtCreate bool
	Timeout      time.Duration
}

// awaitSandboxLocked is awaitSandbox for a sandbox with an egress block: the
// lock is enforced (written, if the create did not carry it, and waited
// for) from the moment the sandbox is RUNNING, while its gateway registers,
// and both are waited for. Nothing can run on the sandbox before the
// caller's create returns, which needs both, so the overlap changes no
// order a user relies on; it saves the gateway's lag from each restore's
// critical path. gen is the generation written or born (nil: none);
// waitErr is awaitSandbox's error, lockErr the lock's (not tried when the
// sandbox never ran; cut short when the wait fails, as the sandbox is
// then unusable anyway).
func awaitSandboxLocked(ctx context.Context, c *prime.Client, id string, timeout, buildTimeout time.Duration, lock bornLock) (gen *int64, waitErr, lockErr error) {
	lockCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	locking := false
	waitErr = awaitSandboxThen(ctx, c, id, timeout, buildTimeout, func() {
		locking = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			gen, lockErr = egress.EnforceBorn(lockCtx, c, id, lock.Policy, lock.SentAtCreate, lock.Timeout)
		}()
	})
	if waitErr != nil {
		cancel()
	}
	wg.Wait()
	if !locking && waitErr == nil {
		lockErr = fmt.Errorf("sandbox %s: the egress lock was never started", id) // not reached: RUNNING precedes success
	}
	return gen, waitErr, lockErr
}

// awaitSandboxThen is awaitSandbox calling onRunning (when set) as soon as
// the sandbox is RUNNING, before the gateway wait.
func awaitSandboxThen(ctx context.Context, c *prime.Client, id string, timeout, buildTimeout time.Duration, onRunning func()) error {
	started := time.Now()
	var last prime.SandboxStatus
	err := c.WaitForReady(ctx, id, prime.WaitReadyOptions{Timeout: timeout, ImageBuildTimeout: buildTimeout, Gateway: true, OnRunning: onRunning, OnProgress: func(s prime.SandboxStatus) {
		last = s
		fields := map[string]any{"sandbox_id": id, "status": s.Status, "elapsed": time.Since(started).Round(time.Second).String()}
		if s.PendingImageBuildID != nil {
			fields["image_build_id"] = *s.PendingImageBuildID
			tflog.Info(ctx, "sandbox waits for a first-use VM image build (this can take ~10 minutes; timeouts.image_build bounds it)", fields)
			return
		}
		tflog.Info(ctx, "sandbox status changed", fields)
	}})
	var failed *prime.SandboxFailedError
	var timedOut *prime.WaitTimeoutError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &failed):
		return fmt.Errorf("%w", failed)
	case errors.As(err, &timedOut):
		hint := "Raise timeouts.create if the platform is only slow."
		if timedOut.Phase == prime.PhaseImageBuild {
			hint = "A first-use VM image build has a budget of its own: raise timeouts.image_build."
		}
		return fmt.Errorf("%w. %s", timedOut, hint)
	case ctx.Err() != nil:
		return fmt.Errorf("waiting for sandbox %s to be ready was interrupted (last status %s)", id, orUnknown(last.Status))
	}
	return fmt.Errorf("waiting for sandbox %s: %w", id, err)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
