package primemock

// Checkpoints and restores. A checkpoint copies a running VM's root file
// system when it is requested ([guess] the mock freezes at once; FROZEN is
// reported CheckpointFreezeDelay later), uploads for CheckpointDurableDelay
// and is then DURABLE, or FAILED (CheckpointFailRate, or a sandbox named
// with MagicCheckpointFailName). Volumes are never part of it. A sandbox
// created with checkpoint_id boots from a copy of that file system, so
// whatever the checkpointed sandbox wrote exists in every restored one.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock/sandboxfs"
)

// MagicCheckpointFailName in a sandbox's name makes every checkpoint of it
// FAIL at the end of its upload.
const MagicCheckpointFailName = "prime-mock-checkpoint-fail"

// checkpointPageSize is the owner list's page [guess: the page size and the
// cursor's form are not published].
const checkpointPageSize = 50

// checkpoint is one record. Guarded by Server.mu.
type checkpoint struct {
	id, sandboxID, owner, scope string
	teamID, parentID            *string
	depth                       int
	state                       string
	dockerImage                 string
	diskSizeGB                  float64
	// memory: a pause checkpoint, restorable with restore_memory, which
	// keeps the paused sandbox's shape (cpuCores, memoryGB).
	memory   bool
	cpuCores int
	memoryGB float64
	// volumeKey is set on a volume publish; merge tracks its merge.
	volumeKey string
	merge     *string
	errMsg    *string
	snap      *sandboxfs.Snapshot
	createdAt time.Time
	updatedAt time.Time
	timer     *time.Timer
	ttlTimer  *time.Timer
}

func (ck *checkpoint) stop() {
	if ck.timer != nil {
		ck.timer.Stop()
	}
	if ck.ttlTimer != nil {
		ck.ttlTimer.Stop()
	}
}

// stopTimers stops every resource timer (Close): nothing progresses.
func (r *resources) stopTimers() {
	for _, ck := range r.checkpoints {
		ck.stop()
	}
	for _, b := range r.builds {
		if b.timer != nil {
			b.timer.Stop()
		}
	}
	for _, ss := range r.sessions {
		if ss.timer != nil {
			ss.timer.Stop()
		}
	}
}

func (s *Server) wireCheckpoint(ck *checkpoint) prime.Checkpoint {
	out := prime.Checkpoint{
		ID: ck.id, SandboxID: ck.sandboxID, ParentID: cloneStrPtr(ck.parentID), TeamID: cloneStrPtr(ck.teamID),
		State: ck.state, Depth: ck.depth, DockerImage: ck.dockerImage, Error: cloneStrPtr(ck.errMsg),
		Merge: cloneStrPtr(ck.merge), CreatedAt: ts(ck.createdAt), UpdatedAt: ts(ck.updatedAt),
	}
	disk := int64(ck.diskSizeGB * (1 << 30))
	out.DiskSizeBytes = &disk
	if ck.state == prime.CheckpointDurable {
		_, stored := ck.snap.Usage()
		out.StoredBytes = &stored
	}
	return out
}

// ckAfter runs f under the lock after d unless the checkpoint is gone or
// the server closed.
func (s *Server) ckAfter(ck *checkpoint, d time.Duration, f func()) {
	ck.timer = time.AfterFunc(d, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.closed || s.res.checkpoints[ck.id] != ck {
			return
		}
		f()
	})
}

// FinishCheckpointUploads ends, now, the upload of every checkpoint that
// is still FROZEN (its durable timer fires at once), and lets later ones
// take d. A test that needs an upload in progress while it kills or
// interrupts Terraform sets CheckpointDurableDelay to a time no run
// reaches, and calls this when the upload may end: no race with the clock.
func (s *Server) FinishCheckpointUploads(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts.CheckpointDurableDelay = d
	for _, ck := range s.res.checkpoints {
		// Stop is false for a timer that already fired: its callback
		// is waiting for the lock and makes the checkpoint DURABLE.
		if ck.state == prime.CheckpointFrozen && ck.timer != nil && ck.timer.Stop() {
			ck.timer.Reset(0)
		}
	}
}

// startCheckpoint records a checkpoint of sb holding snap and starts its
// upload. volumeKey marks a volume publish; memory a pause checkpoint.
func (s *Server) startCheckpoint(sb *sandbox, snap *sandboxfs.Snapshot, memory bool, volumeKey string) *checkpoint {
	now := s.now()
	ck := &checkpoint{
		id: s.newResourceID("ck"), sandboxID: sb.id, owner: sb.owner, scope: sandboxScope(sb), teamID: cloneStrPtr(sb.req.TeamID),
		state: prime.CheckpointPending, dockerImage: sb.req.DockerImage, diskSizeGB: *sb.req.DiskSizeGB, memory: memory,
		volumeKey: volumeKey, snap: snap, createdAt: now, updatedAt: now, depth: 1,
	}
	if memory && sb.req.CPUCores != nil && sb.req.MemoryGB != nil {
		ck.cpuCores, ck.memoryGB = *sb.req.CPUCores, *sb.req.MemoryGB
	}
	if parent := s.res.checkpoints[sb.x.restoredFrom]; parent != nil && volumeKey == "" {
		ck.parentID, ck.depth = strPtr(parent.id), parent.depth+1
	} else if sb.x.restoredFrom != "" && volumeKey == "" {
		ck.parentID = strPtr(sb.x.restoredFrom) // the parent itself is gone
	}
	if volumeKey != "" {
		ck.merge = strPtr(prime.MergePending)
	}
	s.res.checkpoints[ck.id] = ck
	s.res.ckOrder = append(s.res.ckOrder, ck)
	s.emit(Event{Type: EventCheckpointCreated, SandboxID: sb.id, CheckpointID: ck.id, State: ck.state, Memory: memory, Volume: volumeName(volumeKey)})
	s.logf(sb, "checkpoint %s requested", ck.id)
	fail := strings.Contains(sb.req.Name, MagicCheckpointFailName) ||
		(s.opts.CheckpointFailRate > 0 && s.rng.Float64() < s.opts.CheckpointFailRate)
	s.ckAfter(ck, s.opts.checkpointFreezeDelay(), func() {
		s.setCheckpointState(ck, prime.CheckpointFrozen, "")
		s.ckAfter(ck, s.opts.checkpointDurableDelay(), func() {
			if fail {
				s.setCheckpointState(ck, prime.CheckpointFailed, "upload failed (simulated by prime-mock)")
				ck.snap.Release()
				return
			}
			s.setCheckpointState(ck, prime.CheckpointDurable, "")
			if ck.volumeKey != "" {
				s.ckAfter(ck, s.opts.checkpointDurableDelay(), func() { s.mergePublish(ck) })
			}
		})
	})
	return ck
}

func (s *Server) setCheckpointState(ck *checkpoint, state, msg string) {
	ck.state, ck.updatedAt = state, s.now()
	if msg != "" {
		ck.errMsg = strPtr(msg)
	}
	s.emit(Event{Type: EventCheckpointState, SandboxID: ck.sandboxID, CheckpointID: ck.id, State: state, Message: msg})
}

// dropCheckpoint forgets a checkpoint (deleted, discarded with its
// sandbox, or expired): it reads as NOT_FOUND from now on.
func (s *Server) dropCheckpoint(ck *checkpoint, event, msg string) {
	ck.stop()
	ck.snap.Release()
	delete(s.res.checkpoints, ck.id)
	s.res.ckOrder = slices.DeleteFunc(s.res.ckOrder, func(c *checkpoint) bool { return c == ck })
	s.emit(Event{Type: event, SandboxID: ck.sandboxID, CheckpointID: ck.id, State: ck.state, Message: msg})
}

// snapshotRoot copies a sandbox's root file system without its volumes.
func (s *Server) snapshotRoot(sb *sandbox) (*sandboxfs.Snapshot, error) {
	snap, err := sb.m.FS().Snapshot("/")
	if err != nil {
		return nil, err
	}
	for _, a := range sb.x.volumes {
		snap.Remove(a.mountPath)
	}
	return snap, nil
}

func (s *Server) handleCreateCheckpoint(r *http.Request, _ string) reply {
	var body struct {
		TTLSeconds *int `json:"ttl_seconds"`
	}
	// The body is optional (the SDK sends none).
	if raw, err := readBody(r); err == nil {
		if err := json.Unmarshal(raw, &body); err != nil {
			return errorReply(http.StatusUnprocessableEntity, "invalid JSON body: %v", err)
		}
	}
	if body.TTLSeconds != nil && *body.TTLSeconds < 1 {
		return errorReply(http.StatusUnprocessableEntity, "ttl_seconds must be a positive number of seconds")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sb, rep, found := s.lookup(r)
	if !found {
		return rep
	}
	// [guess] Only a RUNNING VM can be checkpointed (409 otherwise).
	if sb.status != prime.StatusRunning || sb.x.pausing {
		return errorReply(http.StatusConflict, "Sandbox %s is %s; only a running VM sandbox can be checkpointed", sb.id, describeStatus(sb))
	}
	snap, err := s.snapshotRoot(sb)
	if err != nil {
		return errorReply(http.StatusConflict, "Sandbox %s: its file system cannot be read: %v", sb.id, err)
	}
	ck := s.startCheckpoint(sb, snap, false, "")
	if body.TTLSeconds != nil {
		ttl := time.Duration(*body.TTLSeconds) * time.Second
		ck.ttlTimer = time.AfterFunc(ttl, func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if !s.closed && s.res.checkpoints[ck.id] == ck {
				s.dropCheckpoint(ck, EventCheckpointDeleted, "its ttl_seconds passed")
			}
		})
	}
	// [guess] 202: the request is accepted; the code is not published.
	return reply{status: http.StatusAccepted, body: s.wireCheckpoint(ck)}
}

func describeStatus(sb *sandbox) string {
	switch {
	case sb.x.pausing:
		return "pausing"
	case sb.x.resuming:
		return "resuming"
	}
	return sb.status
}

func (s *Server) handleListSandboxCheckpoints(r *http.Request, _ string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb, rep, found := s.lookup(r)
	if !found {
		return rep
	}
	only := r.URL.Query().Get("checkpoint_id")
	out := []prime.Checkpoint{}
	for _, ck := range s.res.ckOrder {
		if ck.sandboxID == sb.id && (only == "" || ck.id == only) {
			out = append(out, s.wireCheckpoint(ck))
		}
	}
	return ok(map[string]any{"checkpoints": out})
}

func (s *Server) handleListCheckpoints(r *http.Request, caller string) reply {
	q := r.URL.Query()
	start := 0
	if c := q.Get("cursor"); c != "" {
		n, err := strconv.Atoi(c)
		if err != nil || n < 0 {
			return errorReply(http.StatusUnprocessableEntity, "cursor is not one this server issued")
		}
		start = n
	}
	var team *string
	if t := q.Get("team_id"); t != "" {
		team = &t
	}
	scope, sandboxID := scopeOf(team, caller), q.Get("sandbox_id")
	s.mu.Lock()
	defer s.mu.Unlock()
	var match []*checkpoint
	for _, ck := range s.res.ckOrder {
		if ck.scope == scope && (sandboxID == "" || ck.sandboxID == sandboxID) {
			match = append(match, ck)
		}
	}
	start = min(start, len(match))
	end := min(start+checkpointPageSize, len(match))
	page := []prime.Checkpoint{}
	for _, ck := range match[start:end] {
		page = append(page, s.wireCheckpoint(ck))
	}
	var next *string
	if end < len(match) {
		next = strPtr(strconv.Itoa(end))
	}
	return ok(map[string]any{"checkpoints": page, "next_cursor": next})
}

func (s *Server) handleGetCheckpoint(r *http.Request, _ string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	ck := s.res.checkpoints[r.PathValue("checkpoint_id")]
	if ck == nil {
		return errorReply(http.StatusNotFound, "Checkpoint not found")
	}
	return ok(s.wireCheckpoint(ck))
}

func (s *Server) handleBatchCheckpoints(r *http.Request, _ string) reply {
	var req prime.BatchCheckpointsRequest
	if err := decodeBody(r, &req); err != nil {
		return errorReply(http.StatusUnprocessableEntity, "%v", err)
	}
	if n := len(req.CheckpointIDs); n < 1 || n > prime.MaxBatchCheckpointIDs {
		return errorReply(http.StatusUnprocessableEntity, "checkpoint_ids must hold 1 to %d ids, got %d", prime.MaxBatchCheckpointIDs, n)
	}
	seen := map[string]bool{}
	for _, id := range req.CheckpointIDs {
		if len(id) < 1 || len(id) > prime.MaxCheckpointIDLength {
			return errorReply(http.StatusUnprocessableEntity, "checkpoint ids have 1 to %d characters", prime.MaxCheckpointIDLength)
		}
		if seen[id] {
			return errorReply(http.StatusUnprocessableEntity, "checkpoint_ids must be unique; %q is repeated", id)
		}
		seen[id] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := prime.BatchCheckpointsResponse{Checkpoints: []prime.Checkpoint{}, Errors: []prime.CheckpointLookupError{}}
	for _, id := range req.CheckpointIDs {
		if ck := s.res.checkpoints[id]; ck != nil {
			out.Checkpoints = append(out.Checkpoints, s.wireCheckpoint(ck))
			continue
		}
		out.Errors = append(out.Errors, prime.CheckpointLookupError{CheckpointID: id, Code: prime.BatchCodeNotFound, Message: "Checkpoint not found"})
	}
	return ok(out)
}

// deletable says why a checkpoint cannot be deleted now, or "".
func deletable(ck *checkpoint) string {
	// [guess] As the per-sandbox delete reports pending checkpoints as
	// CONFLICT and keeps them, a single delete of one refuses too.
	if ck.state == prime.CheckpointPending || ck.state == prime.CheckpointFrozen {
		return fmt.Sprintf("Checkpoint %s is %s; it can be deleted once its upload has finished", ck.id, ck.state)
	}
	return ""
}

func (s *Server) handleDeleteCheckpoint(r *http.Request, _ string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	ck := s.res.checkpoints[r.PathValue("checkpoint_id")]
	if ck == nil {
		return errorReply(http.StatusNotFound, "Checkpoint not found")
	}
	if why := deletable(ck); why != "" {
		return errorReply(http.StatusConflict, "%s", why)
	}
	s.dropCheckpoint(ck, EventCheckpointDeleted, "")
	return noContent()
}

func (s *Server) handleDeleteSandboxCheckpoints(r *http.Request, _ string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb, rep, found := s.lookup(r)
	if !found {
		return rep
	}
	deleted, errs := []string{}, []prime.CheckpointLookupError{}
	for _, ck := range slices.Clone(s.res.ckOrder) {
		if ck.sandboxID != sb.id {
			continue
		}
		if why := deletable(ck); why != "" {
			errs = append(errs, prime.CheckpointLookupError{CheckpointID: ck.id, Code: "CONFLICT", Message: why})
			continue
		}
		s.dropCheckpoint(ck, EventCheckpointDeleted, "")
		deleted = append(deleted, ck.id)
	}
	return ok(map[string]any{"deleted": deleted, "errors": errs})
}

// admitRestore checks a create's checkpoint_id and makes the request the
// checkpoint's: its image and disk size, and with restore_memory the
// paused shape (its CPU and memory: the sandbox continues where it was
// paused, as published). Only a DURABLE checkpoint of the
// request's own scope restores [guess: 404 otherwise, as for a missing one;
// 409 while it is not DURABLE]; restore_memory needs a pause checkpoint
// (409, as published).
func (s *Server) admitRestore(req *prime.CreateSandboxRequest, caller string) (*checkpoint, reply, bool) {
	if req.CheckpointID == nil {
		return nil, reply{}, true
	}
	ck := s.res.checkpoints[*req.CheckpointID]
	if ck == nil || ck.scope != scopeOf(req.TeamID, caller) {
		return nil, errorReply(http.StatusNotFound, "Checkpoint %s not found", *req.CheckpointID), false
	}
	if ck.volumeKey != "" {
		return nil, errorReply(http.StatusConflict, "Checkpoint %s is a volume publish, not a sandbox's file system", ck.id), false
	}
	if ck.state != prime.CheckpointDurable {
		return nil, errorReply(http.StatusConflict, "Checkpoint %s is %s; a sandbox can be restored from it once it is DURABLE", ck.id, ck.state), false
	}
	if req.RestoreMemory != nil && *req.RestoreMemory && !ck.memory {
		return nil, errorReply(http.StatusConflict, "Checkpoint %s has no memory to restore (only a pause checkpoint has)", ck.id), false
	}
	req.DockerImage = ck.dockerImage
	disk := ck.diskSizeGB
	req.DiskSizeGB = &disk
	if req.RestoreMemory != nil && *req.RestoreMemory && ck.cpuCores > 0 {
		cpu, mem := ck.cpuCores, ck.memoryGB
		req.CPUCores, req.MemoryGB = &cpu, &mem
	}
	return ck, reply{}, true
}

// restoreInto gives a new sandbox the checkpoint's root file system.
func (s *Server) restoreInto(sb *sandbox, ck *checkpoint) {
	sb.x.restoredFrom = ck.id
	_ = sb.m.FS().RestoreRoot(ck.snap, sb.id)
	memory := sb.req.RestoreMemory != nil && *sb.req.RestoreMemory
	s.emit(Event{Type: EventSandboxRestored, SandboxID: sb.id, CheckpointID: ck.id, Memory: memory})
	s.logf(sb, "restoring checkpoint %s", ck.id)
}

// handleMockCheckpointFiles serves GET /_mock/checkpoints/{id}/files?path=
// DIR: a checkpoint's stored files, for tests.
func (s *Server) handleMockCheckpointFiles(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	ck := s.res.checkpoints[r.PathValue("checkpoint_id")]
	var snap *sandboxfs.Snapshot
	if ck != nil {
		snap = ck.snap.Clone()
	}
	s.mu.Unlock()
	if snap == nil {
		writeJSON(w, http.StatusNotFound, detail("Checkpoint not found"))
		return
	}
	defer snap.Release()
	dir := r.URL.Query().Get("path")
	if dir == "" {
		dir = "/"
	}
	entries, err := snap.ReadDir(dir)
	if err != nil {
		writeJSON(w, http.StatusNotFound, detail(err.Error()))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"path": dir, "files": entries})
}

// checkRestoreKeys is the create body's restore and volume rules, on the
// keys as sent: with checkpoint_id (1-64 characters) docker_image and
// disk_size_gb must be absent (the SDK's "omit docker_image" rule; [guess]
// the platform's 422 says the same); restore_memory needs checkpoint_id;
// volumes must be well formed.
func checkRestoreKeys(keys map[string]json.RawMessage, req prime.CreateSandboxRequest) error {
	present := func(k string) bool { v, ok := keys[k]; return ok && string(v) != "null" }
	if req.CheckpointID != nil {
		if n := len(*req.CheckpointID); n < 1 || n > prime.MaxCheckpointIDLength {
			return fmt.Errorf("checkpoint_id: String should have 1 to %d characters", prime.MaxCheckpointIDLength)
		}
		if present("docker_image") || present("disk_size_gb") {
			return fmt.Errorf("omit docker_image and disk_size_gb when restoring a checkpoint: the sandbox takes the checkpoint's image and disk size")
		}
	}
	if req.RestoreMemory != nil && *req.RestoreMemory && req.CheckpointID == nil {
		return fmt.Errorf("restore_memory requires checkpoint_id")
	}
	return checkVolumeMounts(keys["volumes"])
}
