package checkpoint

// The checkpoint journal's side of Create: a Terraform killed while Create
// waits for DURABLE never records the checkpoint, and the request has no
// idempotency key to replay. So each request is noted in the journal
// (internal/journal) before it is sent, with the checkpoint's ID right
// after, and the next create of the same configuration takes over the
// checkpoint a killed apply left instead of requesting a second one.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/primeintellect/terraform-provider-prime/internal/journal"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// configHash names a checkpoint's configuration in the journal: the
// source sandbox, ttl_seconds and triggers — what decides which checkpoint
// is taken. A provider never learns a resource's address, so two
// checkpoint resources with the same three share a hash; either may adopt
// the other's leftover, which is harmless: the same source, the same
// expiry, and triggers are how a configuration says "checkpoint again".
// source_after and timeouts are left out: they act on the source and on
// the wait once the checkpoint exists, not on what it holds. Journals are
// per working directory and workspace, so other states never share one.
func configHash(ctx context.Context, m resourceModel) string {
	var triggers map[string]string
	if !m.Triggers.IsNull() && !m.Triggers.IsUnknown() {
		_ = m.Triggers.ElementsAs(ctx, &triggers, false)
	}
	return journal.RunHash("prime_sandbox_checkpoint", m.SandboxID.ValueString(), ttlOf(m.TTLSeconds), triggers)
}

// leftoverError: a checkpoint a killed apply left could not be checked, so
// whether to adopt it is unknown. Its entry stays for the next apply.
type leftoverError struct {
	id  string
	err error
}

func (e *leftoverError) Error() string {
	return fmt.Sprintf("checkpoint %s, requested for this configuration by an apply that was killed before it "+
		"recorded it, could not be checked: %v. It is kept in the create journal; the next apply checks it again "+
		"(and adopts or deletes it) before taking a new checkpoint", e.id, e.err)
}

func (e *leftoverError) Unwrap() error { return e.err }

// requestCheckpoint returns the checkpoint this create waits for, and its
// journal entry (locked; the caller hands it over once the checkpoint is in
// state, or finishes it): a killed apply's leftover of the same
// configuration if it is still usable, else a new one. Leftovers that are
// not usable are deleted on the way.
func requestCheckpoint(ctx context.Context, c *prime.Client, j *journal.Checkpoints, hash, sandboxID string, o prime.CreateCheckpointOptions) (*prime.Checkpoint, *journal.CheckpointEntry, error) {
	for e := j.Adopt(hash); e != nil; e = j.Adopt(hash) {
		ck, err := checkLeftover(ctx, c, e, sandboxID)
		if err != nil {
			e.Release()
			return nil, nil, &leftoverError{id: e.CheckpointID(), err: err}
		}
		if ck != nil && j.Take(ck.ID) {
			tflog.Info(ctx, "checkpoint journal: adopting the checkpoint a killed apply requested", map[string]any{
				"checkpoint_id": ck.ID, "sandbox_id": sandboxID, "state": ck.State,
			})
			return ck, e, nil
		}
	}
	// No journal here (a new machine): the markers in the source sandbox.
	ck, err := adoptMarked(ctx, c, j, hash, sandboxID)
	if err != nil {
		return nil, nil, err
	}
	if ck != nil {
		e := j.Begin(hash, sandboxID)
		e.RecordID(ck.ID)
		return ck, e, nil
	}
	e := j.Begin(hash, sandboxID)
	reqCtx, cancel := answerAfterInterrupt(ctx, interruptedRequestGrace)
	defer cancel()
	ck, err = c.CreateCheckpoint(reqCtx, sandboxID, o)
	if err != nil {
		// No ID to track: a request whose answer was lost cannot be found
		// again by anything the journal or the markers hold.
		e.Finish()
		return nil, nil, err
	}
	j.Take(ck.ID)
	e.RecordID(ck.ID)
	markCheckpoint(reqCtx, c, sandboxID, hash, ck.ID)
	return ck, e, nil
}

// checkLeftover is the leftover's checkpoint if this create can adopt it:
// it exists, is of sandboxID, and is neither FAILED nor DELETING. One that
// is not is deleted (if anything is left of it) and its entry finished: nil,
// nil. An error means the platform could not be asked.
func checkLeftover(ctx context.Context, c *prime.Client, e *journal.CheckpointEntry, sandboxID string) (*prime.Checkpoint, error) {
	ck, err := usableLeftover(ctx, c, e.CheckpointID(), sandboxID)
	if err != nil {
		return nil, err
	}
	if ck == nil {
		e.Finish()
	}
	return ck, nil
}

// usableLeftover is checkpoint id, left by a lost apply, if a create from
// sandboxID can adopt it: it exists, is of sandboxID, and is neither
// FAILED nor DELETING. One that is not is deleted (if anything is left of
// it): nil, nil. An error means the platform could not be asked.
func usableLeftover(ctx context.Context, c *prime.Client, id, sandboxID string) (*prime.Checkpoint, error) {
	ck, err := c.GetCheckpoint(ctx, id)
	switch {
	case errors.Is(err, prime.ErrNotFound):
		return nil, nil // expired, deleted, or lost with its sandbox
	case err != nil:
		return nil, err
	case ck.SandboxID == sandboxID && !prime.IsTerminalCheckpointState(ck.State):
		return ck, nil
	}
	tflog.Info(ctx, "deleting the unusable checkpoint a lost apply requested", map[string]any{
		"checkpoint_id": ck.ID, "state": ck.State,
	})
	if ck.State != prime.CheckpointDeleting {
		if err := c.DeleteCheckpointOnceUploaded(ctx, ck.ID, DefaultDeleteTimeout); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// interruptedRequestGrace is how long a checkpoint request already sent may
// still answer after the apply is interrupted: a single request takes
// seconds, and Ctrl-C should still end the apply promptly.
const interruptedRequestGrace = 30 * time.Second

// answerAfterInterrupt is ctx for a request whose answer must not be
// dropped: the checkpoint request has no idempotency key, so its answer is
// the only record of the checkpoint it made. An interruption of ctx ends
// the returned context only grace later, long enough for the answer to
// arrive and be recorded (the wait that follows sees the interruption and
// records the checkpoint as tainted).
func answerAfterInterrupt(ctx context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	detached, cancel := context.WithCancel(context.WithoutCancel(ctx))
	// A grace timer still pending when the caller is done only cancels
	// what is already cancelled.
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(grace, cancel) })
	return detached, func() { stop(); cancel() }
}
