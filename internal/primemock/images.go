package primemock

// Images and their VM artifacts. The mock knows the images that creates
// used (each with a container and a VM artifact) and those listed in
// ImagesWithoutVM (a container artifact only): a VM create from one of
// those fails with 400 "VM image not found" [I: vm-image-400: the status is not
// published] until a vm-build of its name:tag COMPLETES (VMBuildDelay;
// PENDING, then BUILDING from half of it), or FAILS at its end when the
// image's name contains MagicVMBuildFailName. A caller sees the images its
// own (or its team's) creates used; the list pages by logical image
// (name:tag) with limit and offset.

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// MagicVMBuildFailName in an image's name makes its vm-builds end FAILED
// [I: vm-build-fail-text: the failure's message is not published].
const MagicVMBuildFailName = "prime-mock-vm-build-fail"

type mockImage struct {
	ref       string // as first seen: [owner/]name:tag
	name, tag string
	// hasVM: the image has a VM artifact from the start.
	hasVM bool
	// scopes are the owners whose creates used it; [I: image-owners] an
	// image of ImagesWithoutVM is everyone's.
	scopes    map[string]bool
	fixture   bool
	build     *imageBuild // the latest vm-build
	createdAt time.Time
}

type imageBuild struct {
	id, artifactID string
	image          *mockImage
	status         string
	createdAt      time.Time
	startedAt      *time.Time
	completedAt    *time.Time
	errMsg         *string
	timer          *time.Timer
}

// splitImageRef reads [owner/]name[:tag] (tag "latest" by default).
func splitImageRef(ref string) (name, tag string) {
	rest := ref
	if i := strings.LastIndex(rest, "/"); i >= 0 {
		rest = rest[i+1:]
	}
	name, tag, found := strings.Cut(rest, ":")
	if !found {
		tag = "latest"
	}
	return name, tag
}

// vmReady reports whether the image has a usable VM artifact.
func (im *mockImage) vmReady() bool {
	return im.hasVM || (im.build != nil && im.build.status == prime.ImageBuildCompleted)
}

// imageFor finds or registers the image a docker_image names.
func (s *Server) imageFor(ref string) *mockImage {
	name, tag := splitImageRef(ref)
	key := name + ":" + tag
	if im := s.res.images[key]; im != nil {
		return im
	}
	im := &mockImage{ref: ref, name: name, tag: tag, hasVM: !s.lacksVM(ref), createdAt: s.now(), scopes: map[string]bool{}}
	im.fixture = !im.hasVM
	s.res.images[key] = im
	return im
}

// lacksVM reports whether ImagesWithoutVM names the image (by its full
// reference, or by name:tag).
func (s *Server) lacksVM(ref string) bool {
	name, tag := splitImageRef(ref)
	for _, r := range s.opts.ImagesWithoutVM {
		n, t := splitImageRef(r)
		if r == ref || (n == name && t == tag) {
			return true
		}
	}
	return false
}

// visibleTo reports whether an owner scope sees the image.
func (im *mockImage) visibleTo(scope string) bool { return im.fixture || im.scopes[scope] }

// admitImage refuses a VM create from an image without a VM artifact; the
// image is then the creating scope's too.
func (s *Server) admitImage(req prime.CreateSandboxRequest, scope string) (reply, bool) {
	if req.CheckpointID != nil || req.DockerImage == "" {
		return reply{}, true
	}
	im := s.imageFor(req.DockerImage)
	im.scopes[scope] = true
	if im.vmReady() {
		return reply{}, true
	}
	return errorReply(http.StatusBadRequest, "VM image not found: %s has no VM artifact; POST /api/v1/images/%s/%s/vm-build converts it", req.DockerImage, im.name, im.tag), false
}

func (s *Server) imageRows(im *mockImage) []map[string]any {
	row := func(kind, status string, created time.Time, started, completed *time.Time) map[string]any {
		return map[string]any{
			"id": kind + "-" + im.name + "-" + im.tag, "artifactType": kind, "imageName": im.name, "imageTag": im.tag,
			"status": status, "fullImagePath": im.ref, "visibility": "PRIVATE", "createdAt": ts(created),
			"startedAt": tsPtr(started), "completedAt": tsPtr(completed), "ownerType": "personal", "displayRef": im.ref,
		}
	}
	rows := []map[string]any{row("CONTAINER", prime.ImageBuildCompleted, im.createdAt, nil, nil)}
	switch {
	case im.build != nil:
		b := im.build
		vm := row(prime.ArtifactVM, b.status, b.createdAt, b.startedAt, b.completedAt)
		vm["errorMessage"] = b.errMsg
		rows = append(rows, vm)
	case im.hasVM:
		rows = append(rows, row(prime.ArtifactVM, prime.ImageBuildCompleted, im.createdAt, nil, nil))
	}
	return rows
}

func (s *Server) handleListImages(r *http.Request, caller string) reply {
	q := r.URL.Query()
	var team *string
	if t := q.Get("teamId"); t != "" {
		team = &t
	}
	limit, err := intParam(q.Get("limit"), 50)
	if err != nil || limit < 1 {
		return errorReply(http.StatusUnprocessableEntity, "limit must be an integer >= 1")
	}
	offset, err := intParam(q.Get("offset"), 0)
	if err != nil || offset < 0 {
		return errorReply(http.StatusUnprocessableEntity, "offset must be an integer >= 0")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	scope, rep, allowed := s.scopeFor(team, caller)
	if !allowed {
		return rep
	}
	for _, ref := range s.opts.ImagesWithoutVM {
		s.imageFor(ref)
	}
	keys := make([]string, 0, len(s.res.images))
	for k, im := range s.res.images {
		if im.visibleTo(scope) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	data := []map[string]any{}
	for _, k := range keys[min(offset, len(keys)):min(offset+limit, len(keys))] {
		data = append(data, s.imageRows(s.res.images[k])...)
	}
	return ok(map[string]any{"data": data, "totalCount": len(keys), "offset": offset, "limit": limit})
}

func (s *Server) handleVMBuild(r *http.Request, caller string) reply {
	name, tag := r.PathValue("image_name"), r.PathValue("image_tag")
	var body struct {
		TeamID *string `json:"teamId"`
	}
	if raw, err := readBody(r); err == nil {
		_ = json.Unmarshal(raw, &body) // the body is optional
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	scope, rep, allowed := s.scopeFor(body.TeamID, caller)
	if !allowed {
		return rep
	}
	for _, ref := range s.opts.ImagesWithoutVM {
		s.imageFor(ref)
	}
	im := s.res.images[name+":"+tag]
	switch {
	case im == nil || !im.visibleTo(scope):
		return errorReply(http.StatusNotFound, "Image %s:%s not found", name, tag)
	case im.vmReady():
		return errorReply(http.StatusConflict, "Image %s:%s already has a VM artifact", name, tag)
	case im.build != nil && !prime.IsTerminalImageBuildStatus(im.build.status):
		// [I: vm-build-repeat] A build in progress is returned again.
		return ok(vmBuildAnswer(im.build, "a VM build is already in progress"))
	}
	now := s.now()
	b := &imageBuild{id: s.newResourceID("build"), artifactID: s.newResourceID("artifact"), image: im, status: prime.ImageBuildPending, createdAt: now}
	im.build = b
	s.res.builds[b.id] = b
	s.emit(Event{Type: EventImageBuild, Image: im.name + ":" + im.tag, BuildID: b.id, State: b.status})
	total := s.opts.vmBuildDelay()
	b.timer = time.AfterFunc(total/2, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.closed || s.res.builds[b.id] != b {
			return
		}
		t := s.now()
		b.status, b.startedAt = prime.ImageBuildBuilding, &t
		s.emit(Event{Type: EventImageBuild, Image: im.name + ":" + im.tag, BuildID: b.id, State: b.status})
		b.timer = time.AfterFunc(total-total/2, func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.closed || s.res.builds[b.id] != b {
				return
			}
			t := s.now()
			b.status, b.completedAt = prime.ImageBuildCompleted, &t
			if strings.Contains(im.name, MagicVMBuildFailName) {
				b.status, b.errMsg = prime.ImageBuildFailed, strPtr("VM conversion failed (simulated by prime-mock)")
			}
			s.emit(Event{Type: EventImageBuild, Image: im.name + ":" + im.tag, BuildID: b.id, State: b.status})
		})
	})
	// [I: vm-build-201] 201, as the image build create.
	return reply{status: http.StatusCreated, body: vmBuildAnswer(b, "VM build started")}
}

func vmBuildAnswer(b *imageBuild, msg string) map[string]any {
	return map[string]any{"success": true, "message": msg, "buildId": b.id, "artifactBuildId": b.artifactID}
}

func (s *Server) handleGetBuild(r *http.Request, caller string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.res.builds[r.PathValue("build_id")]
	if b == nil || !s.seesImage(caller, b.image) {
		return errorReply(http.StatusNotFound, "Build not found")
	}
	// [I: build-progress-shape] The build's progress: its schema is not published.
	return ok(map[string]any{
		"id": b.id, "status": b.status, "imageName": b.image.name, "imageTag": b.image.tag, "artifactType": prime.ArtifactVM,
		"createdAt": ts(b.createdAt), "startedAt": tsPtr(b.startedAt), "completedAt": tsPtr(b.completedAt),
		"errorMessage": b.errMsg,
	})
}

// seesImage reports whether any scope of the caller (its account or one of
// its teams) sees the image.
func (s *Server) seesImage(caller string, im *mockImage) bool {
	if im.fixture {
		return true
	}
	for scope := range im.scopes {
		if s.inScope(caller, scope) {
			return true
		}
	}
	return false
}
