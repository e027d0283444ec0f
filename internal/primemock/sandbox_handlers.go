package primemock

// The sandbox endpoints: create, get, list, delete, bulk delete, batch status, logs.

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

func (s *Server) handleCreate(r *http.Request, caller string) reply {
	raw, err := readBody(r)
	if err != nil {
		return errorReply(http.StatusUnprocessableEntity, "%v", err)
	}
	req, err := decodeCreate(raw)
	if err != nil {
		return refusalReply(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()

	// [I: idempotency-replay] Same key from the same caller → the original sandbox, in its
	// current state, even if the body differs (the simplest contract, and
	// the one that never creates a duplicate).
	idemKey := ""
	if req.IdempotencyKey != "" {
		idemKey = caller + "\x00" + req.IdempotencyKey
		if id, found := s.idem[idemKey]; found {
			if sb := s.sandboxes[id]; sb != nil {
				s.stats.IdempotentReplays++
				// [I: idempotency-replay] A replay answers as the create did.
				return reply{status: http.StatusCreated, body: s.wire(sb)}
			}
		}
	}

	req, allow, deny, err := admitCreate(req)
	if err != nil {
		return refusalReply(err)
	}
	if _, rep, ok := s.scopeFor(req.TeamID, caller); !ok {
		return rep
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
		// [I: create-lists-generation-0] Create-time lists are the first policy, generation 0
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
	s.logf(sb, "sandbox created (image %s, %s, %d vCPUs, %s)", req.DockerImage, *req.Arch, *req.CPUCores, describeLifetime(req))
	s.startLifecycle(sb)
	s.armLifetime(sb)
	// The published contract answers a create with 201.
	return reply{status: http.StatusCreated, body: s.wire(sb)}
}

func (s *Server) handleGet(r *http.Request, caller string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb, rep, found := s.lookup(r, caller)
	if !found {
		return rep
	}
	rep = ok(s.wire(sb))
	rep.onSend = s.noteRunningTold([]*sandbox{sb})
	return rep
}

// noteRunningTold returns an onSend that records the first answer telling
// a client that each RUNNING one of sbs was RUNNING (EventRunningObserved).
func (s *Server) noteRunningTold(sbs []*sandbox) func() {
	var running []*sandbox
	for _, sb := range sbs {
		if sb.status == prime.StatusRunning && !sb.toldRunning {
			running = append(running, sb)
		}
	}
	if len(running) == 0 {
		return nil
	}
	return func() {
		for _, sb := range running {
			if s.sandboxes[sb.id] == sb && !sb.toldRunning {
				sb.toldRunning = true
				s.emit(Event{Type: EventRunningObserved, SandboxID: sb.id, Status: sb.status})
			}
		}
	}
}

func (s *Server) handleList(r *http.Request, caller string) reply {
	q := r.URL.Query()
	page, err := intParam(q.Get("page"), 1)
	if msg := paramRange(err, page, 1, 0); msg != "" {
		return errorReply(http.StatusUnprocessableEntity, "page: %s", msg)
	}
	// [OLD] per_page is 1 to 1,000: beyond it is refused, never cut.
	perPage, err := intParam(q.Get("per_page"), defaultPerPage)
	if msg := paramRange(err, perPage, 1, maxPerPage); msg != "" {
		return errorReply(http.StatusUnprocessableEntity, "per_page: %s", msg)
	}
	activeOnly := false
	if v := q.Get("is_active"); v != "" {
		b, ok := parseBool(v)
		if !ok {
			return errorReply(http.StatusUnprocessableEntity, "is_active must be a boolean")
		}
		// [I: is-active-false] false means "do not filter" (what the CLI's --all sends).
		activeOnly = b
	}
	team, user, status, labels := q.Get("team_id"), q.Get("user_id"), q.Get("status"), q["labels"]

	s.mu.Lock()
	defer s.mu.Unlock()
	if team != "" {
		if _, rep, ok := s.scopeFor(&team, caller); !ok {
			return rep
		}
	}
	var match []*sandbox
	// [I: list-order] Oldest first: paging stays stable while sandboxes
	// are created.
	for _, sb := range s.order {
		switch {
		// The caller's own sandboxes, or with team_id the team's [OA].
		case team == "" && sb.owner != caller,
			activeOnly && isTerminal(sb.status),
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

// paramRange is pydantic's verdict on an integer query parameter: a
// parse error, or a value outside [lo, hi] (hi 0: no maximum); "" when it
// is fine.
func paramRange(err error, v, lo, hi int) string {
	switch {
	case err != nil:
		return "Input should be a valid integer, unable to parse string as an integer"
	case v < lo:
		return fmt.Sprintf("Input should be greater than or equal to %d", lo)
	case hi > 0 && v > hi:
		return fmt.Sprintf("Input should be less than or equal to %d", hi)
	}
	return ""
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

func (s *Server) handleDelete(r *http.Request, caller string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb, rep, found := s.lookup(r, caller)
	if !found {
		return rep
	}
	if sb.status == prime.StatusTerminated {
		// [I: repeat-delete] A retried DELETE whose first attempt succeeded looks like
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
	sb.m.FS().Release()
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
	if n := len(req.SandboxIDs); n > maxBulkDeleteIDs {
		return errorReply(http.StatusUnprocessableEntity, "sandbox_ids must hold 1 to %d ids, got %d", maxBulkDeleteIDs, n)
	}
	if n := len(req.Labels); n > maxBulkDeleteLabels {
		return errorReply(http.StatusUnprocessableEntity, "labels must hold 1 to %d labels, got %d", maxBulkDeleteLabels, n)
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
			if sb == nil || !s.mayAct(caller, sb) {
				out.Failed = append(out.Failed, prime.BulkDeleteFailure{SandboxID: id, Error: "Sandbox not found"})
				continue
			}
			if sb.status != prime.StatusTerminated {
				s.terminate(sb)
			}
			out.Succeeded = append(out.Succeeded, id)
		}
	} else {
		// [I: bulk-delete-labels] By labels (ALL-of), within the team/user scope; without
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
			case isTerminal(sb.status), !s.mayAct(caller, sb),
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

func (s *Server) handleBatchStatus(r *http.Request, caller string) reply {
	var req prime.BatchStatusRequest
	if err := decodeBody(r, &req); err != nil {
		return errorReply(http.StatusUnprocessableEntity, "%v", err)
	}
	// Bad requests get 422, never 404/405: either would make the SDK drop
	// the batch endpoint for the client's lifetime.
	if n := len(req.SandboxIDs); n < 1 || n > maxBatchStatusIDs {
		return errorReply(http.StatusUnprocessableEntity, "sandbox_ids must hold 1 to %d ids, got %d", maxBatchStatusIDs, n)
	}
	// [I: batch-duplicates-422] The SDK's client refuses repeated ids; the
	// mock's server does too.
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
	var answered []*sandbox
	for _, id := range req.SandboxIDs {
		sb := s.sandboxes[id]
		if sb == nil {
			out.Errors = append(out.Errors, prime.SandboxStatusError{SandboxID: id, Code: prime.BatchCodeNotFound, Message: "Sandbox not found"})
			continue
		}
		if !s.mayAct(caller, sb) {
			// [I: foreign-batch-forbidden] The batch's codes name FORBIDDEN;
			// the mock answers it for another owner's sandbox.
			out.Errors = append(out.Errors, prime.SandboxStatusError{SandboxID: id, Code: prime.BatchCodeForbidden, Message: "Sandbox belongs to another user or team"})
			continue
		}
		out.Statuses = append(out.Statuses, prime.SandboxStatus{
			SandboxID: id, Status: sb.status, ErrorType: cloneStrPtr(sb.errorType),
			ErrorMessage: cloneStrPtr(sb.errorMsg), PendingImageBuildID: cloneStrPtr(sb.pendingBuild),
		})
		answered = append(answered, sb)
	}
	rep := ok(out)
	rep.onSend = s.noteRunningTold(answered)
	return rep
}

func (s *Server) handleLogs(r *http.Request, caller string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb, rep, found := s.lookup(r, caller)
	if !found {
		return rep
	}
	return ok(prime.SandboxLogs{Logs: strings.Join(sb.logs, "")})
}

func (s *Server) handleErrorContext(r *http.Request, caller string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb, rep, found := s.lookup(r, caller)
	if !found {
		return rep
	}
	return ok(prime.SandboxErrorContext{Status: sb.status, ErrorType: cloneStrPtr(sb.errorType), ErrorMessage: cloneStrPtr(sb.errorMsg)})
}
