package primemock

// Volumes. A volume's head is the file tree of its latest completed
// publish (empty until the first). A sandbox created with a volume gets a
// private copy of the head at the mount path; its writes are its own, and
// running sandboxes never see later publishes. A publish snapshots the
// mount path of one running sandbox into a checkpoint; once that is DURABLE
// and its merge is done (CheckpointDurableDelay later), the snapshot is the
// new head. [I: volume-mounts-unenforced] Read-only mounts are not enforced on writes (the mock's
// file system has no read-only mounts), but cannot be published; sizes are
// not enforced on writes.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock/sandboxfs"
)

type volume struct {
	key, name, scope string
	teamID           *string
	sizeGB           int
	visibility       string
	head             *sandboxfs.Snapshot
	headCheckpoint   *string
	createdAt        time.Time
	updatedAt        time.Time
}

// mockVolumeName is one segment of the published reference pattern.
var mockVolumeName = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$`)

// maxMockVolumeGB is the published "up to 100 GiB".
const maxMockVolumeGB = 100

// scopeOwner is a scope's owner segment in an owner/name reference: the
// user or team id.
func scopeOwner(scope string) string {
	_, id, _ := strings.Cut(scope, ":")
	return id
}

// volumeName is the name part of a volume key.
func volumeName(key string) string {
	if key == "" {
		return ""
	}
	_, name, _ := strings.Cut(key, "/")
	return name
}

// wireVolume is a volume as the API answers it. [I: volume-shape]
// VolumeResponse is a name only: the keys are the mock's.
func (s *Server) wireVolume(v *volume) map[string]any {
	return map[string]any{
		"name": v.name, "owner": scopeOwner(v.scope), "team_id": cloneStrPtr(v.teamID), "size_gb": v.sizeGB,
		"visibility": v.visibility, "head_checkpoint_id": cloneStrPtr(v.headCheckpoint),
		"created_at": ts(v.createdAt), "updated_at": ts(v.updatedAt),
	}
}

// resolveVolume finds ref ("name" in scope, or "owner/name") for a caller
// in scope. public allows another owner's PUBLIC volume (an attachment);
// otherwise a foreign volume is not found, as the update page says.
func (s *Server) resolveVolume(ref, scope string, public bool) *volume {
	owner, name, qualified := strings.Cut(ref, "/")
	if !qualified {
		return s.res.volumes[scope+"/"+owner]
	}
	for _, v := range s.res.volumes {
		if v.name == name && scopeOwner(v.scope) == owner && (v.scope == scope || (public && v.visibility == prime.VolumePublic)) {
			return v
		}
	}
	return nil
}

func teamQuery(r *http.Request) *string {
	if t := r.URL.Query().Get("team_id"); t != "" {
		return &t
	}
	return nil
}

func (s *Server) handleCreateVolume(r *http.Request, caller string) reply {
	var req prime.CreateVolumeRequest
	if err := decodeBody(r, &req); err != nil {
		return errorReply(http.StatusUnprocessableEntity, "%v", err)
	}
	switch {
	case !mockVolumeName.MatchString(req.Name):
		return errorReply(http.StatusUnprocessableEntity, "name: String should match pattern '%s'", mockVolumeName)
	case req.SizeGB < 1 || req.SizeGB > maxMockVolumeGB:
		return errorReply(http.StatusUnprocessableEntity, "size_gb: a volume holds 1 to %d GiB", maxMockVolumeGB)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	scope, rep, allowed := s.scopeFor(req.TeamID, caller)
	if !allowed {
		return rep
	}
	key := scope + "/" + req.Name
	if s.res.volumes[key] != nil {
		return errorReply(http.StatusConflict, "A volume named %s already exists", req.Name)
	}
	now := s.now()
	v := &volume{key: key, name: req.Name, scope: scope, teamID: cloneStrPtr(req.TeamID), sizeGB: req.SizeGB,
		visibility: prime.VolumePrivate, createdAt: now, updatedAt: now}
	s.res.volumes[key] = v
	s.emit(Event{Type: EventVolumeCreated, Volume: v.name, Message: fmt.Sprintf("%d GiB", v.sizeGB)})
	return reply{status: http.StatusCreated, body: s.wireVolume(v)}
}

func (s *Server) handleGetVolume(r *http.Request, caller string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	scope, rep, allowed := s.scopeFor(teamQuery(r), caller)
	if !allowed {
		return rep
	}
	v := s.resolveVolume(r.PathValue("name"), scope, false)
	if v == nil {
		return errorReply(http.StatusNotFound, "Volume not found")
	}
	return ok(s.wireVolume(v))
}

func (s *Server) handleListVolumes(r *http.Request, caller string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	scope, rep, allowed := s.scopeFor(teamQuery(r), caller)
	if !allowed {
		return rep
	}
	out := []map[string]any{}
	for _, v := range s.res.volumes {
		if v.scope == scope {
			out = append(out, s.wireVolume(v))
		}
	}
	slices.SortFunc(out, func(a, b map[string]any) int { return strings.Compare(a["name"].(string), b["name"].(string)) })
	return ok(map[string]any{"volumes": out})
}

func (s *Server) handleUpdateVolume(r *http.Request, caller string) reply {
	var req prime.UpdateVolumeRequest
	if err := decodeBody(r, &req); err != nil {
		return errorReply(http.StatusUnprocessableEntity, "%v", err)
	}
	if v := req.Visibility; v != nil && *v != prime.VolumePrivate && *v != prime.VolumePublic {
		return errorReply(http.StatusUnprocessableEntity, "visibility must be PRIVATE or PUBLIC")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	scope, rep, allowed := s.scopeFor(teamQuery(r), caller)
	if !allowed {
		return rep
	}
	v := s.resolveVolume(r.PathValue("ref"), scope, false)
	if v == nil {
		return errorReply(http.StatusNotFound, "Volume not found")
	}
	if n := req.SizeGB; n != nil {
		switch {
		case *n < v.sizeGB:
			return errorReply(http.StatusUnprocessableEntity, "size_gb can only grow: the volume holds %d GiB, got %d", v.sizeGB, *n)
		case *n > maxMockVolumeGB:
			return errorReply(http.StatusUnprocessableEntity, "size_gb: a volume holds at most %d GiB", maxMockVolumeGB)
		}
		v.sizeGB = *n
	}
	if req.Visibility != nil {
		v.visibility = *req.Visibility
	}
	v.updatedAt = s.now()
	s.emit(Event{Type: EventVolumeUpdated, Volume: v.name, Message: fmt.Sprintf("%d GiB, %s", v.sizeGB, v.visibility)})
	return ok(s.wireVolume(v))
}

func (s *Server) handleDeleteVolume(r *http.Request, caller string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	scope, rep, allowed := s.scopeFor(teamQuery(r), caller)
	if !allowed {
		return rep
	}
	v := s.resolveVolume(r.PathValue("name"), scope, false)
	if v == nil {
		return errorReply(http.StatusNotFound, "Volume not found")
	}
	// [I: volume-delete-copies] Attached sandboxes keep their private copies.
	delete(s.res.volumes, v.key)
	v.head.Release()
	s.emit(Event{Type: EventVolumeDeleted, Volume: v.name})
	return ok(map[string]any{"success": true, "message": fmt.Sprintf("Volume %s deleted", v.name)})
}

// admitVolumes resolves a create's volumes ([I: volume-404] 404 for a volume the
// caller cannot see).
func (s *Server) admitVolumes(req prime.CreateSandboxRequest, caller string) ([]*volume, reply, bool) {
	scope := scopeOf(req.TeamID, caller) // the create checked the team
	var out []*volume
	for _, m := range req.Volumes {
		v := s.resolveVolume(m.Name, scope, true)
		if v == nil {
			return nil, errorReply(http.StatusNotFound, "Volume %s not found", m.Name), false
		}
		out = append(out, v)
	}
	return out, reply{}, true
}

// attachVolumes gives a new sandbox private copies of the volumes' heads.
func (s *Server) attachVolumes(sb *sandbox, vols []*volume) {
	for i, v := range vols {
		m := sb.req.Volumes[i]
		_ = sb.m.FS().Graft(m.MountPath, v.head, 0o755)
		sb.x.volumes = append(sb.x.volumes, attachment{key: v.key, name: m.Name, mountPath: m.MountPath, readOnly: m.ReadOnly})
		s.emit(Event{Type: EventVolumeAttached, SandboxID: sb.id, Volume: v.name, Path: m.MountPath, ReadOnly: m.ReadOnly,
			CheckpointID: deref(v.headCheckpoint)})
	}
}

func (s *Server) handlePublishVolume(r *http.Request, caller string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb, rep, found := s.lookup(r, caller)
	if !found {
		return rep
	}
	if sb.status != prime.StatusRunning || sb.x.pausing {
		return errorReply(http.StatusConflict, "Sandbox %s is %s; only a running VM sandbox can publish a volume", sb.id, describeStatus(sb))
	}
	name := r.PathValue("name")
	var att *attachment
	for i := range sb.x.volumes {
		if a := &sb.x.volumes[i]; a.name == name || volumeName(a.key) == name {
			att = a
			break
		}
	}
	switch {
	case att == nil:
		return errorReply(http.StatusNotFound, "Volume %s is not attached to sandbox %s", name, sb.id)
	case att.readOnly:
		return errorReply(http.StatusConflict, "Volume %s is attached read-only to sandbox %s; only a read-write attachment can be published", name, sb.id)
	case s.res.volumes[att.key] == nil:
		return errorReply(http.StatusNotFound, "Volume %s no longer exists", name)
	}
	snap, err := sb.m.FS().Snapshot(att.mountPath)
	if err != nil {
		return errorReply(http.StatusConflict, "Sandbox %s: %s cannot be read: %v", sb.id, att.mountPath, err)
	}
	ck := s.startCheckpoint(sb, snap, false, att.key)
	s.emit(Event{Type: EventVolumePublished, SandboxID: sb.id, Volume: volumeName(att.key), CheckpointID: ck.id, Path: att.mountPath})
	// [I: publish-202] 202, as a checkpoint create: accepted while it freezes.
	return reply{status: http.StatusAccepted, body: s.wireCheckpoint(ck)}
}

// mergePublish finishes a DURABLE publish: its merge is done and its
// snapshot is the volume's head.
func (s *Server) mergePublish(ck *checkpoint) {
	ck.merge = strPtr("merged") // [I: merge-merged] only "pending" is published
	ck.updatedAt = s.now()
	s.emit(Event{Type: EventCheckpointMerged, SandboxID: ck.sandboxID, CheckpointID: ck.id, Volume: volumeName(ck.volumeKey)})
	v := s.res.volumes[ck.volumeKey]
	if v == nil {
		return
	}
	v.head.Release()
	v.head = ck.snap.Clone()
	v.headCheckpoint, v.updatedAt = strPtr(ck.id), s.now()
	s.emit(Event{Type: EventVolumeHead, Volume: v.name, CheckpointID: ck.id})
}

// checkVolumeMounts is the mock's check of a create's volumes: at most 8
// [G: the CLI's limit], absolute mount paths, no path twice.
// [I: volume-mount-fields] The items' shape is not published: the mock
// reads {name, mount_path, read_only}, the CLI's NAME:/mount/path[:ro].
func checkVolumeMounts(raw json.RawMessage) error {
	if raw == nil || string(raw) == "null" {
		return nil
	}
	var mounts []prime.VolumeMount
	if err := json.Unmarshal(raw, &mounts); err != nil {
		return fmt.Errorf("volumes: Input should be a valid list of {name, mount_path, read_only}")
	}
	if len(mounts) > 8 {
		return fmt.Errorf("volumes: at most 8 volumes per sandbox")
	}
	paths := map[string]bool{}
	for i, m := range mounts {
		switch {
		case m.Name == "":
			return fmt.Errorf("volumes[%d].name: Field required", i)
		case !strings.HasPrefix(m.MountPath, "/") || m.MountPath == "/":
			return fmt.Errorf("volumes[%d].mount_path: must be an absolute path below /", i)
		case paths[m.MountPath]:
			return fmt.Errorf("volumes[%d].mount_path: %s is used twice", i, m.MountPath)
		}
		paths[m.MountPath] = true
	}
	return nil
}
