package checkpoint

// How a wait for DURABLE ended, and what the user is told.

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

type waitOutcome int

const (
	// waitLost: the checkpoint is gone (its sandbox was deleted or ended
	// before it was DURABLE, or someone deleted it).
	waitLost waitOutcome = iota
	// waitFailed: FAILED or DELETING.
	waitFailed
	// waitTimedOut: still uploading when the create timeout ended.
	waitTimedOut
	// waitOther: the apply was interrupted, or polling failed.
	waitOther
)

// classifyWait reads WaitForCheckpoint's error; timedOut says the wait's
// own deadline ended (not the apply's).
func classifyWait(err error, timedOut bool) waitOutcome {
	var failed *prime.CheckpointFailedError
	switch {
	case errors.As(err, &failed) && failed.Gone:
		return waitLost
	case errors.As(err, &failed):
		return waitFailed
	case timedOut:
		return waitTimedOut
	}
	return waitOther
}

func outcomeSummary(o waitOutcome) string {
	switch o {
	case waitLost:
		return "Checkpoint lost"
	case waitFailed:
		return "Checkpoint failed"
	case waitTimedOut:
		return "Checkpoint not durable in time"
	}
	return "Checkpoint not confirmed durable"
}

// waitErrorText says what happened and what is left: a lost checkpoint
// is not recorded; any other that still exists is recorded as tainted by a
// create, and stays in state as it was after an update (which waited for
// an imported one), whose next apply waits again.
func waitErrorText(o waitOutcome, id, sandboxID string, timeout time.Duration, err error, creating bool) string {
	left := " It is recorded as tainted, so the next apply deletes it and takes a new one."
	if !creating {
		left = " It stays in state as it was, so the next apply waits for it again."
	}
	switch o {
	case waitLost:
		return fmt.Sprintf("Checkpoint %s of sandbox %s was lost before it became DURABLE: its sandbox was deleted or "+
			"ended while the checkpoint uploaded (the platform discards such checkpoints with their sandbox), or it "+
			"was deleted. No sandbox can be restored from it, and it is not recorded in state: the next apply takes "+
			"a new checkpoint of a running sandbox. (%v)", id, sandboxID, err)
	case waitFailed:
		return fmt.Sprintf("Checkpoint %s of sandbox %s did not become DURABLE: %v. No sandbox can be restored from "+
			"it, and nothing that depends on it was started.", id, sandboxID, err)
	case waitTimedOut:
		return fmt.Sprintf("Checkpoint %s of sandbox %s was not DURABLE after %s (timeouts.create): %v. Failing "+
			"closed: nothing that depends on it was started.%s", id, sandboxID, timeout, err, left)
	}
	return fmt.Sprintf("Checkpoint %s of sandbox %s was requested, but its wait for DURABLE ended: %v. Nothing that "+
		"depends on it was started.%s", id, sandboxID, err, left)
}

// interruptedText is the one error of an apply interrupted while the
// checkpoint uploaded, the create journal keeping it for the next apply.
func interruptedText(last prime.Checkpoint, sandboxID string) string {
	return fmt.Sprintf("The apply was interrupted while checkpoint %s of sandbox %s uploaded (last seen %s). Nothing that "+
		"depends on it was started. It is not recorded in state, and nothing is tainted: the create journal keeps it, "+
		"so the next apply of this configuration adopts it and waits for the rest of its upload instead of taking "+
		"a new one.", last.ID, sandboxID, orUnknown(last.State))
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// createErrorText explains a refused checkpoint request.
func createErrorText(sandboxID string, err error) (summary, detail string) {
	var leftover *leftoverError
	switch {
	case errors.As(err, &leftover):
		return "Checkpoint left by a killed apply not checked", fmt.Sprintf("Checkpointing sandbox %s: %v.", sandboxID, err)
	case errors.Is(err, prime.ErrNotFound):
		return "Sandbox not found", fmt.Sprintf("sandbox_id: no sandbox has the ID %q, so it cannot be checkpointed. (%v)", sandboxID, err)
	case prime.StatusCodeOf(err) == http.StatusConflict:
		return "Sandbox cannot be checkpointed", fmt.Sprintf("sandbox_id: sandbox %s cannot be checkpointed now; only a "+
			"RUNNING VM sandbox can. (%v)", sandboxID, err)
	}
	return "Checkpoint not requested", fmt.Sprintf("Checkpointing sandbox %s failed: %v", sandboxID, err)
}

func reasonSuffix(reason *string) string {
	if reason == nil || *reason == "" {
		return ""
	}
	return " (" + *reason + ")"
}

// deleteWarning explains a source_after = "delete" that did not finish:
// the checkpoint itself is fine and recorded.
func deleteWarning(id, sandboxID string, err error) (summary, detail string) {
	return "Source sandbox not deleted", fmt.Sprintf("Checkpoint %s is DURABLE and recorded, and sandboxes can be "+
		"restored from it, but its source sandbox %s was not deleted (source_after = \"delete\"): %v. It keeps running "+
		"and costing compute until its own resource is destroyed or replaced; the next apply does not retry the "+
		"delete.", id, sandboxID, err)
}

// pauseWarning explains a source_after = "pause" that did not finish: the
// checkpoint itself is fine and recorded.
func pauseWarning(id, sandboxID string, err error) (summary, detail string) {
	if errors.Is(err, prime.ErrPauseCheckpointUnlisted) {
		return "Pause checkpoint not recorded", fmt.Sprintf("Checkpoint %s is DURABLE and recorded, and its source "+
			"sandbox %s is paused (source_after = \"pause\"), but %v. Delete that checkpoint by hand after destroy "+
			"(it is listed under the sandbox's ID).", id, sandboxID, err)
	}
	return "Source sandbox not paused", fmt.Sprintf("Checkpoint %s is DURABLE and recorded, and sandboxes can be "+
		"restored from it, but its source sandbox %s was not paused (source_after = \"pause\"): %v. It keeps running "+
		"and costing compute until it is paused (prime_sandbox's paused = true) or destroyed; the next apply does not "+
		"retry the pause.", id, sandboxID, err)
}
