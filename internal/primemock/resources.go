package primemock

// The 2026 platform's resources beside sandboxes: checkpoints and restores,
// pause and resume, private networks, volumes, image VM artifacts and SSH
// sessions. Their state lives in one resources value guarded by Server.mu;
// this file holds that state, the routes and the per-sandbox bookkeeping
// the sandbox lifecycle calls into.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// resources is the mock's non-sandbox state. Guarded by Server.mu.
type resources struct {
	checkpoints map[string]*checkpoint
	ckOrder     []*checkpoint
	volumes     map[string]*volume // scope + "/" + name
	networks    map[string]*network
	netOrder    []*network
	images      map[string]*mockImage // "name:tag" (any owner)
	builds      map[string]*imageBuild
	sessions    map[string]*sshSession
}

func newResources() *resources {
	return &resources{
		checkpoints: map[string]*checkpoint{}, volumes: map[string]*volume{}, networks: map[string]*network{},
		images: map[string]*mockImage{}, builds: map[string]*imageBuild{}, sessions: map[string]*sshSession{},
	}
}

// release stops every timer and drops every snapshot (Reset, Close).
func (r *resources) release() {
	for _, ck := range r.checkpoints {
		ck.stop()
		ck.snap.Release()
	}
	for _, v := range r.volumes {
		v.head.Release()
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

// sandboxExtra is a sandbox's part in the resources (Server.mu).
type sandboxExtra struct {
	// restoredFrom is the checkpoint the sandbox booted from.
	restoredFrom string
	// volumes are its attachments (private copies).
	volumes []attachment
	// pausing/resuming: a pause or resume was accepted and has not taken
	// effect yet.
	pausing, resuming bool
	pausedAt          time.Time
}

// attachment is one attached volume.
type attachment struct {
	key       string // the volume's resources key
	name      string // as the create named it (name or owner/name)
	mountPath string
	readOnly  bool
}

// newResourceID makes an id with a prefix, e.g. "ck-…", from the seeded
// source.
func (s *Server) newResourceID(prefix string) string {
	b := make([]byte, 20)
	for i := range b {
		b[i] = idAlphabet[s.rng.IntN(len(idAlphabet))]
	}
	return prefix + string(b)
}

// scopeOf is the owner scope of a request: a team when one is named, else
// the caller's own account.
func scopeOf(team *string, caller string) string {
	if team != nil && *team != "" {
		return "team:" + *team
	}
	return "user:" + userIDOf(caller)
}

// sandboxScope is the scope a sandbox belongs to.
func sandboxScope(sb *sandbox) string { return scopeOf(sb.req.TeamID, sb.owner) }

// resourceRoute is one route of the resource API.
type resourceRoute struct {
	pattern string
	h       apiFunc
}

// resourceRoutes registers the resource API. Routes whose second segment
// is a collection name (/sandbox/checkpoints/{id}, /sandbox/volumes/{name},
// /sandbox/networks/{id}) overlap the sandbox routes (/sandbox/{id}/logs)
// in ServeMux's eyes, so GET and DELETE at that depth go through one
// dispatcher each; stats still count them under their own templates.
func (s *Server) resourceRoutes() {
	const api = apiPrefix
	for _, r := range []resourceRoute{
		{"POST " + api + "/sandbox/{id}/checkpoints", s.handleCreateCheckpoint},
		{"GET " + api + "/sandbox/{id}/checkpoints", s.handleListSandboxCheckpoints},
		{"GET " + api + "/sandbox/checkpoints", s.handleListCheckpoints},
		// A literal segment: ServeMux prefers it to DELETE /sandbox/{id}.
		{"DELETE " + api + "/sandbox/checkpoints", s.handleDeleteOwnerCheckpoints},
		{"POST " + api + "/sandbox/checkpoints:batchGet", s.handleBatchCheckpoints},
		{"POST " + api + "/sandbox/{id}/pause", s.handlePause},
		{"POST " + api + "/sandbox/{id}/resume", s.handleResume},
		{"POST " + api + "/sandbox/networks", s.handleCreateNetwork},
		{"GET " + api + "/sandbox/networks", s.handleListNetworks},
		{"PUT " + api + "/sandbox/networks/{network_id}/rules", s.handleReplaceRules},
		{"PUT " + api + "/sandbox/networks/{network_id}/members/{sandbox_id}", s.handlePutMember},
		{"DELETE " + api + "/sandbox/networks/{network_id}/members/{sandbox_id}", s.handleRemoveMember},
		{"POST " + api + "/sandbox/volumes", s.handleCreateVolume},
		{"GET " + api + "/sandbox/volumes", s.handleListVolumes},
		{"PATCH " + api + "/sandbox/volumes/{ref...}", s.handleUpdateVolume},
		{"POST " + api + "/sandbox/{id}/volumes/{name}/publish", s.handlePublishVolume},
		{"GET " + api + "/images", s.handleListImages},
		{"POST " + api + "/images/{image_name}/{image_tag}/vm-build", s.handleVMBuild},
		{"GET " + api + "/images/build/{build_id}", s.handleGetBuild},
		{"POST " + api + "/sandbox/{id}/ssh-session", s.handleCreateSSH},
		{"DELETE " + api + "/sandbox/{id}/ssh-session/{session_id}", s.handleCloseSSH},
	} {
		s.mux.Handle(r.pattern, s.api(r.pattern, r.h, false))
	}
	s.mux.Handle("GET "+api+"/sandbox/{a}/{b}", s.collectionDispatch(map[string]resourceRoute{
		"checkpoints": {"GET " + api + "/sandbox/checkpoints/{checkpoint_id}", s.handleGetCheckpoint},
		"volumes":     {"GET " + api + "/sandbox/volumes/{name}", s.handleGetVolume},
		"networks":    {"GET " + api + "/sandbox/networks/{network_id}", s.handleGetNetwork},
	}, nil))
	s.mux.Handle("DELETE "+api+"/sandbox/{a}/{b}", s.collectionDispatch(map[string]resourceRoute{
		"checkpoints": {"DELETE " + api + "/sandbox/checkpoints/{checkpoint_id}", s.handleDeleteCheckpoint},
		"volumes":     {"DELETE " + api + "/sandbox/volumes/{name}", s.handleDeleteVolume},
		"networks":    {"DELETE " + api + "/sandbox/networks/{network_id}", s.handleDeleteNetwork},
	}, &resourceRoute{"DELETE " + api + "/sandbox/{id}/checkpoints", s.handleDeleteSandboxCheckpoints}))
	s.mux.HandleFunc("GET /_mock/sandbox/{id}/peer", s.handleMockPeerReach)
	s.mux.HandleFunc("GET /_mock/checkpoints/{checkpoint_id}/files", s.handleMockCheckpointFiles)
}

// collectionDispatch serves /sandbox/{a}/{b}: a collection name in a picks
// its item route (b is the item's id); otherwise sandboxSub, when set,
// serves /sandbox/{id}/checkpoints. The item's id is put where the handler
// reads it.
func (s *Server) collectionDispatch(items map[string]resourceRoute, sandboxSub *resourceRoute) http.Handler {
	handlers := map[string]http.Handler{}
	params := map[string]string{"checkpoints": "checkpoint_id", "volumes": "name", "networks": "network_id"}
	for name, r := range items {
		handlers[name] = s.api(r.pattern, r.h, false)
	}
	var sub http.Handler
	if sandboxSub != nil {
		sub = s.api(sandboxSub.pattern, sandboxSub.h, false)
	}
	notFound := s.api("other "+apiPrefix+"/...", func(*http.Request, string) reply {
		return errorReply(http.StatusNotFound, "Not Found")
	}, false)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, b := r.PathValue("a"), r.PathValue("b")
		if h := handlers[a]; h != nil {
			r.SetPathValue(params[a], b)
			h.ServeHTTP(w, r)
			return
		}
		if sub != nil && b == "checkpoints" {
			r.SetPathValue("id", a)
			sub.ServeHTTP(w, r)
			return
		}
		notFound.ServeHTTP(w, r)
	})
}

// noContent is a 204 reply: no body.
func noContent() reply { return reply{status: http.StatusNoContent} }

// Resource event types (the Event fields each one sets are listed in the
// package documentation).
const (
	EventCheckpointCreated   = "checkpoint_created"
	EventCheckpointState     = "checkpoint_state"
	EventCheckpointMerged    = "checkpoint_merged"
	EventCheckpointDeleted   = "checkpoint_deleted"
	EventCheckpointDiscarded = "checkpoint_discarded"
	EventSandboxRestored     = "sandbox_restored"
	EventPauseRequested      = "pause_requested"
	EventSandboxPaused       = "sandbox_paused"
	EventResumeRequested     = "resume_requested"
	EventResumeRefused       = "resume_refused"
	EventSandboxResumed      = "sandbox_resumed"
	EventNetworkCreated      = "network_created"
	EventNetworkDeleted      = "network_deleted"
	EventNetworkRules        = "network_rules_replaced"
	EventNetworkMemberPut    = "network_member_put"
	EventNetworkMemberGone   = "network_member_removed"
	EventNetworkConnect      = "network_connect"
	EventVolumeCreated       = "volume_created"
	EventVolumeUpdated       = "volume_updated"
	EventVolumeDeleted       = "volume_deleted"
	EventVolumeAttached      = "volume_attached"
	EventVolumePublished     = "volume_published"
	EventVolumeHead          = "volume_head"
	EventImageBuild          = "image_build"
	EventSSHOpened           = "ssh_session_opened"
	EventSSHClosed           = "ssh_session_closed"
)

var resourceEventTypes = map[string]bool{
	EventCheckpointCreated: true, EventCheckpointState: true, EventCheckpointMerged: true, EventCheckpointDeleted: true,
	EventCheckpointDiscarded: true, EventSandboxRestored: true, EventPauseRequested: true, EventSandboxPaused: true,
	EventResumeRequested: true, EventResumeRefused: true, EventSandboxResumed: true, EventNetworkCreated: true,
	EventNetworkDeleted: true, EventNetworkRules: true, EventNetworkMemberPut: true, EventNetworkMemberGone: true,
	EventNetworkConnect: true, EventVolumeCreated: true, EventVolumeUpdated: true, EventVolumeDeleted: true,
	EventVolumeAttached: true, EventVolumePublished: true, EventVolumeHead: true, EventImageBuild: true,
	EventSSHOpened: true, EventSSHClosed: true,
}

// withResourceKeys appends a resource event's own keys to its encoded
// common keys (Event.MarshalJSON), in a fixed order; other events pass
// through.
func (e Event) withResourceKeys(b []byte, err error) ([]byte, error) {
	if err != nil || !resourceEventTypes[e.Type] {
		return b, err
	}
	var extra bytes.Buffer
	add := func(k string, v any) {
		enc, _ := json.Marshal(v)
		fmt.Fprintf(&extra, ",%q:%s", k, enc)
	}
	for _, kv := range []struct {
		k string
		v string
	}{
		{"status", e.Status}, {"checkpoint_id", e.CheckpointID}, {"state", e.State}, {"network_id", e.NetworkID},
		{"peer", e.Peer}, {"volume", e.Volume}, {"path", e.Path}, {"image", e.Image}, {"build_id", e.BuildID},
		{"session_id", e.SessionID}, {"message", e.Message},
	} {
		if kv.v != "" {
			add(kv.k, kv.v)
		}
	}
	if e.Port > 0 {
		add("port", e.Port)
	}
	if e.Tags != nil {
		add("tags", e.Tags)
	}
	if e.Type == EventNetworkConnect {
		add("allowed", e.Allowed)
	}
	if e.Type == EventVolumeAttached {
		add("read_only", e.ReadOnly)
	}
	if e.Memory {
		add("memory", true)
	}
	out := bytes.TrimSuffix(bytes.TrimSpace(b), []byte("}"))
	return append(append(out, extra.Bytes()...), '}'), nil
}

// sandboxEnded is the resources' part of a sandbox ending (deleted or
// failed): its checkpoints that are not DURABLE are discarded, its SSH
// sessions close, it leaves its networks. Its volume copies die with it.
func (s *Server) sandboxEnded(sb *sandbox) {
	r := s.res
	// A clone: dropCheckpoint removes from ckOrder.
	for _, ck := range slices.Clone(r.ckOrder) {
		if ck.sandboxID == sb.id && r.checkpoints[ck.id] == ck && ck.state != prime.CheckpointDurable {
			s.dropCheckpoint(ck, EventCheckpointDiscarded, "its sandbox ended before the checkpoint was DURABLE")
		}
	}
	s.closeSessionsOf(sb, "the sandbox ended")
	for _, n := range r.netOrder {
		if _, member := n.members[sb.id]; member && r.networks[n.id] == n {
			delete(n.members, sb.id)
			s.emit(Event{Type: EventNetworkMemberGone, SandboxID: sb.id, NetworkID: n.id, Message: "the sandbox ended"})
		}
	}
	sb.x.pausing, sb.x.resuming = false, false
}

// bootDelayOf is how long a sandbox takes from PENDING to RUNNING: a
// restore boots from the checkpoint's disk in RestoreDelay.
func (s *Server) bootDelayOf(sb *sandbox) time.Duration {
	if sb.x.restoredFrom != "" {
		return s.opts.restoreDelay()
	}
	return s.opts.bootDelay()
}

// activeCount is how many of the owner's sandboxes count against the
// active-sandbox limit: booting or running (paused ones do not).
func (s *Server) activeCount(owner string) int {
	n := 0
	for _, sb := range s.sandboxes {
		if sb.owner == owner && !isTerminal(sb.status) && sb.status != prime.StatusPaused {
			n++
		}
	}
	return n
}

// admission is what a create's resources resolved to.
type admission struct {
	checkpoint *checkpoint
	volumes    []*volume
}

// admitResources checks a create's checkpoint, image and volumes against
// the mock's state (the request is already valid in shape) and makes a
// restore's request the checkpoint's.
func (s *Server) admitResources(req *prime.CreateSandboxRequest, caller string) (admission, reply, bool) {
	ck, rep, ok := s.admitRestore(req, caller)
	if !ok {
		return admission{}, rep, false
	}
	if rep, ok := s.admitImage(*req, scopeOf(req.TeamID, caller)); !ok {
		return admission{}, rep, false
	}
	vols, rep, ok := s.admitVolumes(*req, caller)
	if !ok {
		return admission{}, rep, false
	}
	return admission{checkpoint: ck, volumes: vols}, reply{}, true
}

// attachResources gives a new sandbox its checkpoint's file system and its
// volumes' copies.
func (s *Server) attachResources(sb *sandbox, adm admission) {
	if adm.checkpoint != nil {
		s.restoreInto(sb, adm.checkpoint)
	}
	s.attachVolumes(sb, adm.volumes)
}
