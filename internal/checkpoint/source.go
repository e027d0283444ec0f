package checkpoint

// What a checkpoint does to its source sandbox (source_after), and what is
// left to undo when the checkpoint is found gone.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// What source_after does with the source sandbox once the checkpoint is
// DURABLE.
const (
	SourceKeep   = "keep"
	SourcePause  = "pause"
	SourceDelete = "delete"
)

// deleteSource deletes the source sandbox of a DURABLE checkpoint, which
// outlives it, and waits until it is gone (within ctx): a template stops
// being billed once the fleet can be restored from its checkpoint. One
// already gone counts as deleted.
func deleteSource(ctx context.Context, c *prime.Client, sandboxID string) error {
	if err := c.DeleteSandbox(ctx, sandboxID); err != nil && !errors.Is(err, prime.ErrNotFound) {
		return err
	}
	return c.WaitForGone(ctx, sandboxID)
}

// resumeSource resumes a source sandbox that source_after paused; one gone
// (or ended) is left alone, one already RUNNING too.
func resumeSource(ctx context.Context, c *prime.Client, sandboxID string, timeout time.Duration) error {
	if gone, err := c.SandboxGone(ctx, sandboxID); err == nil && gone {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := c.ResumeAndWait(ctx, sandboxID)
	if errors.Is(err, prime.ErrNotFound) {
		return nil
	}
	return err
}

// resumePausedSource resumes the source of a checkpoint request the
// platform refused, when the source is PAUSED (only a RUNNING sandbox can
// be checkpointed), within timeout; it reports whether it did.
func resumePausedSource(ctx context.Context, c *prime.Client, sandboxID string, timeout time.Duration) (bool, error) {
	sb, err := c.GetSandbox(ctx, sandboxID)
	if err != nil || sb.Status != prime.StatusPaused {
		return false, nil // the refusal stands, and says why
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := c.ResumeAndWait(ctx, sandboxID); err != nil {
		return false, fmt.Errorf("sandbox %s is PAUSED (source_after = \"pause\" paused it after an earlier checkpoint), "+
			"and resuming it to checkpoint it again failed: %w", sandboxID, err)
	}
	return true, nil
}

// goneOnRefresh is what a refresh that finds the checkpoint gone (deleted
// out of band, or expired after ttl_seconds) says and does. Usually the
// checkpoint leaves state and the next apply takes a new one. With
// source_after = "pause" something is left to undo: the source is paused
// (and only a RUNNING sandbox can be checkpointed) and the checkpoint its
// pause took is billed. So it stays in state as DELETING, which the next
// plan replaces: the replacement's destroy resumes the source and deletes
// that pause checkpoint, and its create checkpoints the source again.
func goneOnRefresh(state resourceModel) (summary, detail string, keep bool) {
	id, sandboxID := state.ID.ValueString(), state.SandboxID.ValueString()
	detail = fmt.Sprintf("Checkpoint %s of sandbox %s no longer exists (deleted out of band, or expired after "+
		"ttl_seconds).", id, sandboxID)
	if state.SourceAfter.ValueString() != SourcePause {
		return "Checkpoint is gone", detail + " It is removed from state: the next apply takes a new one, and " +
			"replaces what was restored from it.", false
	}
	pause := ""
	if p := state.PauseCheckpointID.ValueString(); p != "" {
		pause = fmt.Sprintf(", deletes the checkpoint that pause took (%s)", p)
	}
	return "Checkpoint is gone", detail + fmt.Sprintf(" The next apply replaces it: it resumes sandbox %s (paused by "+
		"source_after = \"pause\")%s, takes a new checkpoint and pauses the sandbox again; what was restored from "+
		"%s is replaced too. Until then it stays in state as %s.", sandboxID, pause, id, prime.CheckpointDeleting), true
}
