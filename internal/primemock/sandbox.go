package primemock

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// Magic image substrings (see the package documentation).
const (
	MagicErrorImage = "prime-mock/error"
	MagicBuildImage = "prime-mock/build"
	// MagicOOMName in a sandbox's name makes that one sandbox fail while it
	// boots (OOM_KILLED), so one member of a fleet can fail while its
	// siblings, created from the same template, run.
	MagicOOMName = "prime-mock-oom"
)

// List paging limits, and the batch status limit (the SDK sends 1-100
// unique ids).
const (
	defaultPerPage    = 50
	maxPerPage        = 100
	maxBatchStatusIDs = 100
)

// isTerminal: the statuses the SDK's waiters treat as final.
func isTerminal(status string) bool {
	switch status {
	case prime.StatusError, prime.StatusTerminated, prime.StatusTimeout:
		return true
	}
	return false
}

// hasAllLabels is the list and bulk-delete label filter: ALL of want.
func hasAllLabels(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// sandbox is one record. All fields are guarded by Server.mu.
type sandbox struct {
	id     string
	owner  string // the API key that created it (idempotency scope)
	userID string
	req    prime.CreateSandboxRequest // as accepted, platform defaults filled in

	status                string
	createdAt, updatedAt  time.Time
	startedAt, terminated *time.Time
	exitCode              *int // the start process's, when its exit stopped the sandbox
	errorType, errorMsg   *string
	terminationReason     *string
	pendingBuild          *string
	logs                  []string
	lifecycle             *time.Timer

	// Egress.
	createLists   bool // created with network_allowlist/denylist
	desired       prime.EgressPolicy
	generation    int64
	appliedGen    int64
	appliedPolicy prime.EgressPolicy
	pending       []pendingPolicy
	runningAt     time.Time // real clock, for apply scheduling
	observedGen   int64     // highest applied_generation a client was told
	applyTimer    *time.Timer

	// Gateway.
	gatewayReady bool // RUNNING and past the gateway lag
	gatewayTimer *time.Timer
	execs        map[*execution]bool // running scripts, every transport
	// m is the sandbox's file system and process table; its files are
	// released when the sandbox ends.
	m *machine
	// x is its part in the resources: restore, volumes, pause (resources.go).
	x sandboxExtra
}

// pendingPolicy is an accepted generation the data plane has not applied.
type pendingPolicy struct {
	gen        int64
	policy     prime.EgressPolicy
	acceptedAt time.Time // real clock
	// delayed is false only for a fresh VM's open generation 0, which has
	// nothing to enforce and so counts as applied as soon as it runs.
	delayed bool
}

func (sb *sandbox) stopTimers() {
	if sb.lifecycle != nil {
		sb.lifecycle.Stop()
		sb.lifecycle = nil
	}
	if sb.applyTimer != nil {
		sb.applyTimer.Stop()
		sb.applyTimer = nil
	}
	if sb.gatewayTimer != nil {
		sb.gatewayTimer.Stop()
		sb.gatewayTimer = nil
	}
}

// jobID and userNS name the sandbox on the gateway.
func (sb *sandbox) jobID() string  { return "job-" + sb.id }
func (sb *sandbox) userNS() string { return "ns-" + sb.userID }

// ts makes a timestamp the SDK parses: UTC, at most microseconds.
func ts(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

func tsPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := ts(*t)
	return &v
}

func strPtr(s string) *string { return &s }

func cloneStrPtr(p *string) *string {
	if p == nil {
		return nil
	}
	return strPtr(*p)
}

// wire renders the sandbox as the camelCase object. Everything is copied:
// the answer is encoded after the lock is released.
func (s *Server) wire(sb *sandbox) prime.Sandbox {
	r := sb.req
	out := prime.Sandbox{
		ID:                  sb.id,
		Name:                r.Name,
		DockerImage:         r.DockerImage,
		CPUCores:            float64(*r.CPUCores),
		MemoryGB:            *r.MemoryGB,
		DiskSizeGB:          *r.DiskSizeGB,
		DiskMountPath:       defaultDiskMountPath,
		GPUCount:            *r.GPUCount,
		GPUType:             cloneStrPtr(r.GPUType),
		VM:                  true,
		Arch:                cloneStrPtr(r.Arch),
		Status:              sb.status,
		TimeoutMinutes:      *r.TimeoutMinutes,
		TerminationReason:   cloneStrPtr(sb.terminationReason),
		EnvironmentVars:     maps.Clone(r.EnvironmentVars),
		Labels:              slices.Clone(r.Labels),
		CreatedAt:           ts(sb.createdAt),
		UpdatedAt:           ts(sb.updatedAt),
		StartedAt:           tsPtr(sb.startedAt),
		TerminatedAt:        tsPtr(sb.terminated),
		ErrorType:           cloneStrPtr(sb.errorType),
		ErrorMessage:        cloneStrPtr(sb.errorMsg),
		UserID:              strPtr(sb.userID),
		TeamID:              cloneStrPtr(r.TeamID),
		Region:              cloneStrPtr(r.Region),
		PendingImageBuildID: cloneStrPtr(sb.pendingBuild),
	}
	if out.Labels == nil {
		out.Labels = []string{}
	}
	if sb.exitCode != nil {
		v := *sb.exitCode
		out.ExitCode = &v
	}
	if r.IdleTimeoutMinutes != nil {
		v := *r.IdleTimeoutMinutes
		out.IdleTimeoutMinutes = &v
	}
	if sc := r.StartCommand; sc != nil {
		c := *sc
		if c.Argv != nil {
			c.Argv = &prime.StartArgv{Executable: c.Argv.Executable, Args: slices.Clone(c.Argv.Args)}
		}
		out.StartCommand = &c
	}
	if r.Secrets != nil {
		// Secrets are write-only: the platform masks them.
		out.Secrets = make(map[string]string, len(r.Secrets))
		for k := range r.Secrets {
			out.Secrets[k] = "***"
		}
	}
	if r.AdvancedConfigs != nil {
		out.AdvancedConfigs = maps.Clone(r.AdvancedConfigs)
	}
	// The object mirrors the desired policy once there is one (create-time
	// lists or a PUT); a sandbox created without lists shows null for both,
	// as its create request did.
	if sb.createLists || sb.generation > 0 {
		out.NetworkAllowlist = slices.Clone(sb.desired.Allowlist)
		out.NetworkDenylist = slices.Clone(sb.desired.Denylist)
		if out.AdvancedConfigs == nil {
			out.AdvancedConfigs = map[string]any{}
		}
		out.AdvancedConfigs["vmEgressPolicy"] = map[string]any{
			"accepted":   true,
			"allowlist":  slices.Clone(sb.desired.Allowlist),
			"denylist":   slices.Clone(sb.desired.Denylist),
			"generation": sb.generation,
		}
	}
	return out
}

// lookup finds a sandbox by the request's {id}.
func (s *Server) lookup(r *http.Request) (*sandbox, reply, bool) {
	id := r.PathValue("id")
	sb := s.sandboxes[id]
	if sb == nil {
		return nil, errorReply(http.StatusNotFound, "Sandbox not found"), false
	}
	return sb, reply{}, true
}

func (s *Server) handleCreate(r *http.Request, caller string) reply {
	raw, err := readBody(r)
	if err != nil {
		return errorReply(http.StatusUnprocessableEntity, "%v", err)
	}
	req, err := decodeCreate(raw)
	if err != nil {
		return errorReply(refusalStatus(err), "%v", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()

	// [guess] Same key from the same caller → the original sandbox, in its
	// current state, even if the body differs (the simplest contract, and
	// the one that never creates a duplicate).
	idemKey := ""
	if req.IdempotencyKey != "" {
		idemKey = caller + "\x00" + req.IdempotencyKey
		if id, found := s.idem[idemKey]; found {
			if sb := s.sandboxes[id]; sb != nil {
				s.stats.IdempotentReplays++
				// [guess] A replay answers as the create did.
				return reply{status: http.StatusCreated, body: s.wire(sb)}
			}
		}
	}

	req, allow, deny, err := admitCreate(req)
	if err != nil {
		return errorReply(http.StatusUnprocessableEntity, "%v", err)
	}
	adm, rep, admitted := s.admitResources(&req, caller)
	if !admitted {
		return rep
	}
	fillDefaults(&req)

	now := s.now()
	sb := &sandbox{
		id:          s.newID(),
		owner:       caller,
		userID:      userIDOf(caller),
		req:         req,
		status:      prime.StatusPending,
		createdAt:   now,
		updatedAt:   now,
		appliedGen:  -1,
		observedGen: -1,
	}
	sb.m = s.newMachine(sb)
	s.attachResources(sb, adm)
	sb.desired = openPolicy()
	sb.createLists = allow != nil || deny != nil
	if sb.createLists {
		// [guess] Create-time lists are the first policy, generation 0
		// (no SDK fixture shows a sandbox created with lists).
		sb.desired = prime.EgressPolicy{Allowlist: allow, Denylist: deny}
		// An untouched VM's open generation 0 is never applied: the SDK's
		// fixture for it reads applied_generation -1, applied false (egress
		// is open all the same). Create-time lists are applied as any write.
		sb.pending = []pendingPolicy{{gen: 0, policy: sb.desired, acceptedAt: time.Now(), delayed: true}}
	}
	s.sandboxes[sb.id] = sb
	s.order = append(s.order, sb)
	if idemKey != "" {
		s.idem[idemKey] = sb.id
	}
	s.stats.SandboxesCreated++
	ev := Event{Type: EventSandboxCreated, SandboxID: sb.id, Status: sb.status}
	if sb.createLists {
		p := clonePolicy(sb.desired)
		ev.Policy = &p
	}
	s.emit(ev)
	s.logf(sb, "sandbox created (image %s, %s, %d vCPUs)", req.DockerImage, *req.Arch, *req.CPUCores)
	s.startLifecycle(sb)
	// The published contract answers a create with 201.
	return reply{status: http.StatusCreated, body: s.wire(sb)}
}

// idAlphabet and the length give CUID-like ids ("c" + 24 characters).
const idAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

func (s *Server) newID() string {
	for {
		b := make([]byte, 25)
		b[0] = 'c'
		for i := 1; i < len(b); i++ {
			b[i] = idAlphabet[s.rng.IntN(len(idAlphabet))]
		}
		if id := string(b); s.sandboxes[id] == nil {
			return id
		}
	}
}

func (s *Server) handleGet(r *http.Request, _ string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb, rep, found := s.lookup(r)
	if !found {
		return rep
	}
	return ok(s.wire(sb))
}

func (s *Server) handleList(r *http.Request, _ string) reply {
	q := r.URL.Query()
	page, err := intParam(q.Get("page"), 1)
	if err != nil || page < 1 {
		return errorReply(http.StatusUnprocessableEntity, "page must be an integer >= 1")
	}
	perPage, err := intParam(q.Get("per_page"), defaultPerPage)
	if err != nil || perPage < 1 {
		return errorReply(http.StatusUnprocessableEntity, "per_page must be an integer >= 1")
	}
	perPage = min(perPage, maxPerPage)
	activeOnly := false
	if v := q.Get("is_active"); v != "" {
		b, ok := parseBool(v)
		if !ok {
			return errorReply(http.StatusUnprocessableEntity, "is_active must be a boolean")
		}
		// [guess] false means "do not filter" (what the CLI's --all sends).
		activeOnly = b
	}
	team, user, status, labels := q.Get("team_id"), q.Get("user_id"), q.Get("status"), q["labels"]

	s.mu.Lock()
	defer s.mu.Unlock()
	var match []*sandbox
	// [guess] Oldest first: paging stays stable while sandboxes are created.
	for _, sb := range s.order {
		switch {
		case activeOnly && isTerminal(sb.status),
			team != "" && (sb.req.TeamID == nil || *sb.req.TeamID != team),
			user != "" && sb.userID != user,
			status != "" && sb.status != status,
			!hasAllLabels(sb.req.Labels, labels):
			continue
		}
		match = append(match, sb)
	}
	start := min((page-1)*perPage, len(match))
	end := min(start+perPage, len(match))
	items := make([]prime.Sandbox, 0, end-start)
	for _, sb := range match[start:end] {
		items = append(items, s.wire(sb))
	}
	return ok(prime.ListSandboxesResponse{
		Sandboxes: items, Total: len(match), Page: page, PerPage: perPage, HasNext: end < len(match),
	})
}

func intParam(v string, def int) (int, error) {
	if v == "" {
		return def, nil
	}
	return strconv.Atoi(v)
}

// parseBool reads the spellings FastAPI accepts for a bool query parameter.
func parseBool(v string) (bool, bool) {
	switch strings.ToLower(v) {
	case "true", "1", "yes", "on", "t", "y":
		return true, true
	case "false", "0", "no", "off", "f", "n":
		return false, true
	}
	return false, false
}

func (s *Server) handleDelete(r *http.Request, _ string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb, rep, found := s.lookup(r)
	if !found {
		return rep
	}
	if sb.status == prime.StatusTerminated {
		// [guess] A retried DELETE whose first attempt succeeded looks like
		// success here; a verifiers comment [C] says the platform answers
		// 404, so a client must take both (the provider does).
		return ok(map[string]any{"success": true, "message": fmt.Sprintf("Sandbox %s is already terminated", sb.id)})
	}
	s.terminate(sb)
	return ok(map[string]any{"success": true, "message": fmt.Sprintf("Sandbox %s deleted", sb.id)})
}

// terminate moves a sandbox to TERMINATED (a user delete).
func (s *Server) terminate(sb *sandbox) {
	sb.stopTimers()
	now := s.now()
	sb.status = prime.StatusTerminated
	sb.updatedAt = now
	sb.terminated = &now
	sb.pendingBuild = nil
	sb.gatewayReady = false
	stopExecutionsLocked(sb)
	sb.m.fs.release()
	s.sandboxEnded(sb)
	s.emit(Event{Type: EventSandboxDeleted, SandboxID: sb.id, Status: sb.status})
	s.logf(sb, "sandbox terminated by a delete request")
}

func (s *Server) handleBulkDelete(r *http.Request, caller string) reply {
	var req prime.BulkDeleteRequest
	if err := decodeBody(r, &req); err != nil {
		return errorReply(http.StatusUnprocessableEntity, "%v", err)
	}
	if len(req.SandboxIDs) == 0 && len(req.Labels) == 0 && !req.AllUsers {
		return errorReply(http.StatusUnprocessableEntity, "provide sandbox_ids or labels (or all_users)")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := prime.BulkDeleteResponse{Succeeded: []string{}, Failed: []prime.BulkDeleteFailure{}}
	if len(req.SandboxIDs) > 0 {
		// Explicit ids: each one is reported; labels and scope are not
		// consulted. An already terminated sandbox counts as deleted, so a
		// retried bulk delete reads as success.
		for _, id := range req.SandboxIDs {
			sb := s.sandboxes[id]
			if sb == nil {
				out.Failed = append(out.Failed, prime.BulkDeleteFailure{SandboxID: id, Error: "Sandbox not found"})
				continue
			}
			if sb.status != prime.StatusTerminated {
				s.terminate(sb)
			}
			out.Succeeded = append(out.Succeeded, id)
		}
	} else {
		// [guess] By labels (ALL-of), within the team/user scope; without
		// all_users and user_id the scope is the caller's own sandboxes.
		user := ""
		switch {
		case req.UserID != nil:
			user = *req.UserID
		case !req.AllUsers:
			user = userIDOf(caller)
		}
		for _, sb := range s.order {
			switch {
			case isTerminal(sb.status),
				user != "" && sb.userID != user,
				req.TeamID != nil && (sb.req.TeamID == nil || *sb.req.TeamID != *req.TeamID),
				!hasAllLabels(sb.req.Labels, req.Labels):
				continue
			}
			s.terminate(sb)
			out.Succeeded = append(out.Succeeded, sb.id)
		}
	}
	out.Message = fmt.Sprintf("Deleted %d sandbox(es); %d failed", len(out.Succeeded), len(out.Failed))
	return ok(out)
}

func (s *Server) handleBatchStatus(r *http.Request, _ string) reply {
	var req prime.BatchStatusRequest
	if err := decodeBody(r, &req); err != nil {
		return errorReply(http.StatusUnprocessableEntity, "%v", err)
	}
	// Bad requests get 422, never 404/405: either would make the SDK drop
	// the batch endpoint for the client's lifetime.
	if n := len(req.SandboxIDs); n < 1 || n > maxBatchStatusIDs {
		return errorReply(http.StatusUnprocessableEntity, "sandbox_ids must hold 1 to %d ids, got %d", maxBatchStatusIDs, n)
	}
	seen := make(map[string]bool, len(req.SandboxIDs))
	for _, id := range req.SandboxIDs {
		if seen[id] {
			return errorReply(http.StatusUnprocessableEntity, "sandbox_ids must be unique; %q is repeated", id)
		}
		seen[id] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := prime.BatchStatusResponse{Statuses: []prime.SandboxStatus{}, Errors: []prime.SandboxStatusError{}}
	for _, id := range req.SandboxIDs {
		sb := s.sandboxes[id]
		if sb == nil {
			out.Errors = append(out.Errors, prime.SandboxStatusError{SandboxID: id, Code: prime.BatchCodeNotFound, Message: "Sandbox not found"})
			continue
		}
		out.Statuses = append(out.Statuses, prime.SandboxStatus{
			SandboxID: id, Status: sb.status, ErrorType: cloneStrPtr(sb.errorType),
			ErrorMessage: cloneStrPtr(sb.errorMsg), PendingImageBuildID: cloneStrPtr(sb.pendingBuild),
		})
	}
	return ok(out)
}

func (s *Server) handleLogs(r *http.Request, _ string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb, rep, found := s.lookup(r)
	if !found {
		return rep
	}
	return ok(prime.SandboxLogs{Logs: strings.Join(sb.logs, "")})
}

func (s *Server) handleErrorContext(r *http.Request, _ string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb, rep, found := s.lookup(r)
	if !found {
		return rep
	}
	return ok(prime.SandboxErrorContext{Status: sb.status, ErrorType: cloneStrPtr(sb.errorType), ErrorMessage: cloneStrPtr(sb.errorMsg)})
}

// logf appends a line to the sandbox's log.
func (s *Server) logf(sb *sandbox, format string, args ...any) {
	sb.logs = append(sb.logs, s.now().Format(time.RFC3339Nano)+" "+fmt.Sprintf(format, args...)+"\n")
}

// after runs f under the lock after d, unless the sandbox has meanwhile
// ended, been forgotten by Reset, or the server was closed.
func (s *Server) after(sb *sandbox, d time.Duration, f func()) {
	sb.lifecycle = time.AfterFunc(d, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.closed || s.sandboxes[sb.id] != sb || isTerminal(sb.status) {
			return
		}
		f()
	})
}

func (s *Server) startLifecycle(sb *sandbox) {
	if strings.Contains(sb.req.DockerImage, MagicBuildImage) {
		sb.pendingBuild = strPtr("build-" + sb.id)
		s.logf(sb, "building a VM image from %s", sb.req.DockerImage)
		s.after(sb, s.opts.buildDelay(), func() {
			sb.pendingBuild = nil
			sb.updatedAt = s.now()
			s.logf(sb, "image build finished")
			s.boot(sb)
		})
		return
	}
	s.boot(sb)
}

func (s *Server) boot(sb *sandbox) {
	total := s.bootDelayOf(sb)
	half := total / 2
	s.after(sb, half, func() {
		sb.status = prime.StatusProvisioning
		sb.updatedAt = s.now()
		s.emit(Event{Type: EventSandboxProvisioning, SandboxID: sb.id, Status: sb.status})
		s.logf(sb, "provisioning")
		s.after(sb, total-half, func() {
			switch {
			case strings.Contains(sb.req.DockerImage, MagicErrorImage):
				s.fail(sb, "IMAGE_PULL_FAILED", fmt.Sprintf("Failed to pull image %q: simulated pull failure (the image name contains %q)", sb.req.DockerImage, MagicErrorImage))
				return
			case strings.Contains(sb.req.Name, MagicOOMName):
				s.fail(sb, "OOM_KILLED", fmt.Sprintf("Sandbox was killed: out of memory (simulated: the sandbox name contains %q)", MagicOOMName))
				return
			}
			s.run(sb)
		})
	})
}

func (s *Server) run(sb *sandbox) {
	now := s.now()
	sb.status = prime.StatusRunning
	sb.updatedAt = now
	sb.startedAt = &now
	sb.runningAt = time.Now()
	s.emit(Event{Type: EventSandboxRunning, SandboxID: sb.id, Status: sb.status})
	s.logf(sb, "running")
	s.armApply(sb)
	s.armGateway(sb)
	s.startProcessLocked(sb)
}

// armGateway makes a RUNNING sandbox known to the gateway once the gateway
// lag has passed since RUNNING (at once when it already has). It runs again
// when a knob changes, so a shorter lag takes effect for waiting sandboxes.
func (s *Server) armGateway(sb *sandbox) {
	if sb.gatewayTimer != nil {
		sb.gatewayTimer.Stop()
		sb.gatewayTimer = nil
	}
	if s.closed || sb.status != prime.StatusRunning || sb.gatewayReady {
		return
	}
	wait := time.Until(sb.runningAt.Add(s.opts.gatewayLag()))
	if wait <= 0 {
		sb.gatewayReady = true
		s.emit(Event{Type: EventGatewayReady, SandboxID: sb.id, Status: sb.status})
		return
	}
	sb.gatewayTimer = time.AfterFunc(wait, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.sandboxes[sb.id] == sb {
			s.armGateway(sb)
		}
	})
}

// fail moves a booting sandbox to ERROR with the platform's error type (the
// SDK knows OOM_KILLED, TIMEOUT and IMAGE_PULL_FAILED) and a message.
func (s *Server) fail(sb *sandbox, errorType, msg string) {
	now := s.now()
	sb.status = prime.StatusError
	sb.updatedAt = now
	sb.terminated = &now
	sb.errorType = strPtr(errorType)
	sb.errorMsg = strPtr(msg)
	sb.terminationReason = strPtr(errorType)
	stopExecutionsLocked(sb)
	sb.m.fs.release()
	s.sandboxEnded(sb)
	s.emit(Event{Type: EventSandboxError, SandboxID: sb.id, Status: sb.status, ErrorType: *sb.errorType})
	s.logf(sb, "error: %s", *sb.errorMsg)
}
