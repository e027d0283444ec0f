package primemock

// Deleting checkpoints: one (DELETE /sandbox/checkpoints/{id}), every one
// of a sandbox (DELETE /sandbox/{id}/checkpoints) and a page of the
// owner's (DELETE /sandbox/checkpoints). Pending checkpoints and the
// active tip of a running sandbox are reported as CONFLICT and kept by the
// two bulk routes [OA].

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// activeTip is the checkpoint a RUNNING sandbox's disk currently rests on.
// [I: checkpoint-tip] The platform does not define it: the mock takes the
// sandbox's newest checkpoint of its root disk (not a volume publish), or,
// when it has none, the checkpoint it was restored from.
func (s *Server) activeTip(sb *sandbox) *checkpoint {
	if sb.status != prime.StatusRunning {
		return nil
	}
	for i := len(s.res.ckOrder) - 1; i >= 0; i-- {
		if ck := s.res.ckOrder[i]; ck.sandboxID == sb.id && ck.volumeKey == "" {
			return ck
		}
	}
	return s.res.checkpoints[sb.x.restoredFrom]
}

// isActiveTip reports whether ck is the active tip of a running sandbox.
func (s *Server) isActiveTip(ck *checkpoint) (string, bool) {
	for _, sb := range s.order {
		if s.activeTip(sb) == ck {
			return sb.id, true
		}
	}
	return "", false
}

// deletable says why a checkpoint cannot be deleted now, or "".
func deletable(ck *checkpoint) string {
	// [I: pending-single-delete] As the bulk deletes report pending
	// checkpoints as CONFLICT and keep them ("each behaves like the single
	// DELETE"), a single delete of one refuses too.
	if ck.state == prime.CheckpointPending || ck.state == prime.CheckpointFrozen {
		return fmt.Sprintf("Checkpoint %s is %s; it can be deleted once its upload has finished", ck.id, ck.state)
	}
	return ""
}

// bulkDeletable is deletable for the bulk routes, which also keep the
// active tip of a running sandbox [OA].
func (s *Server) bulkDeletable(ck *checkpoint) string {
	if why := deletable(ck); why != "" {
		return why
	}
	if sb, tip := s.isActiveTip(ck); tip {
		return fmt.Sprintf("Checkpoint %s is the active tip of running sandbox %s; it is kept", ck.id, sb)
	}
	return ""
}

// handleDeleteCheckpoint deletes one checkpoint: 204. [I: single-delete-tip]
// The active tip of a running sandbox is deleted too: the single DELETE's
// page says its data is kept while descendants still need it; only the
// bulk routes are documented to keep it.
func (s *Server) handleDeleteCheckpoint(r *http.Request, caller string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	ck := s.checkpointOf(r.PathValue("checkpoint_id"), caller)
	if ck == nil {
		return errorReply(http.StatusNotFound, "Checkpoint not found")
	}
	if why := deletable(ck); why != "" {
		return errorReply(http.StatusConflict, "%s", why)
	}
	s.dropCheckpoint(ck, EventCheckpointDeleted, "")
	return noContent()
}

// deleteEach deletes the checkpoints the bulk rules allow and reports the
// others as CONFLICT.
func (s *Server) deleteEach(cks []*checkpoint) (deleted []string, errs []prime.CheckpointLookupError) {
	deleted, errs = []string{}, []prime.CheckpointLookupError{}
	for _, ck := range cks {
		if why := s.bulkDeletable(ck); why != "" {
			errs = append(errs, prime.CheckpointLookupError{CheckpointID: ck.id, Code: "CONFLICT", Message: why})
			continue
		}
		s.dropCheckpoint(ck, EventCheckpointDeleted, "")
		deleted = append(deleted, ck.id)
	}
	return deleted, errs
}

func (s *Server) handleDeleteSandboxCheckpoints(r *http.Request, caller string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb, rep, found := s.lookup(r, caller)
	if !found {
		return rep
	}
	var mine []*checkpoint
	for _, ck := range s.res.ckOrder {
		if ck.sandboxID == sb.id {
			mine = append(mine, ck)
		}
	}
	deleted, errs := s.deleteEach(mine)
	return ok(map[string]any{"deleted": deleted, "errors": errs})
}

// handleDeleteOwnerCheckpoints serves DELETE /sandbox/checkpoints: one page
// of the caller's (or, with team_id, the team's) checkpoints, optionally of
// one sandbox_id, oldest first; repeat with next_cursor until it is null
// [OA]. [I: owner-delete-page] The page is the owner list's (50) and the
// cursor counts the checkpoints kept before it; user_id and all_users (a
// team admin's) are not modelled.
func (s *Server) handleDeleteOwnerCheckpoints(r *http.Request, caller string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	match, start, end, rep, found := s.ownerPage(r, caller)
	if !found {
		return rep
	}
	deleted, errs := s.deleteEach(slices.Clone(match[start:end]))
	var next *string
	if end < len(match) {
		next = strPtr(strconv.Itoa(start + len(errs))) // the deleted ones are gone from the list
	}
	return ok(map[string]any{"deleted": deleted, "errors": errs, "next_cursor": next})
}
