package primemock

// Pause, resume, and the platform ending a sandbox on its own (a lifetime
// timeout, an OOM kill, a cancellation): the transitions of a running VM
// that the 2026 contract documents, with test hooks to cause them.

import (
	"fmt"
	"net/http"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// Event types of these transitions (Status; ErrorType for an end).
const (
	EventSandboxPaused  = "sandbox_paused"
	EventSandboxResumed = "sandbox_resumed"
	// EventSandboxEnded is the platform ending a sandbox on its own
	// (TerminateSandbox): Status TIMEOUT, ERROR or TERMINATED, ErrorType.
	EventSandboxEnded = "sandbox_ended"
)

// handlePause is POST /sandbox/{id}/pause: a RUNNING VM becomes PAUSED.
// [guess] The answer is 200 with the sandbox object (the contract shows no
// schema; "returns once accepted"), and the status changes at once (the
// platform takes "a few seconds"); anything but a RUNNING VM is 409.
func (s *Server) handlePause(r *http.Request, _ string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb, rep, found := s.lookup(r)
	if !found {
		return rep
	}
	if err := s.pauseLocked(sb); err != nil {
		return errorReply(http.StatusConflict, "%v", err)
	}
	return ok(s.wire(sb))
}

// handleResume is POST /sandbox/{id}/resume: a PAUSED VM runs again, with
// the egress policy it holds now ([guess] 200 with the sandbox object;
// anything but a PAUSED sandbox is 409).
func (s *Server) handleResume(r *http.Request, _ string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb, rep, found := s.lookup(r)
	if !found {
		return rep
	}
	if err := s.resumeLocked(sb); err != nil {
		return errorReply(http.StatusConflict, "%v", err)
	}
	return ok(s.wire(sb))
}

// Pause pauses a RUNNING VM sandbox, as POST /sandbox/{id}/pause does.
func (s *Server) Pause(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb := s.sandboxes[id]
	if sb == nil {
		return fmt.Errorf("prime-mock: no sandbox %q", id)
	}
	return s.pauseLocked(sb)
}

// Resume resumes a PAUSED sandbox, as POST /sandbox/{id}/resume does.
func (s *Server) Resume(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb := s.sandboxes[id]
	if sb == nil {
		return fmt.Errorf("prime-mock: no sandbox %q", id)
	}
	return s.resumeLocked(sb)
}

// pauseLocked: the gateway stops serving the sandbox (its file and command
// routes answer 409 sandbox_not_ready, as while it boots), nothing is
// reachable, policies PUT meanwhile are accepted and wait for the resume,
// and [guess] its processes freeze at their next step until the resume
// (streams in flight stay open and stall; the platform drops them).
func (s *Server) pauseLocked(sb *sandbox) error {
	switch {
	case !sb.vm:
		return fmt.Errorf("sandbox %s is a container; only VM sandboxes can be paused", sb.id)
	case sb.status != prime.StatusRunning:
		return fmt.Errorf("sandbox %s is %s; only a RUNNING sandbox can be paused", sb.id, sb.status)
	}
	sb.status = prime.StatusPaused
	sb.updatedAt = s.now()
	sb.gatewayReady = false
	sb.frozen = make(chan struct{})
	sb.stopTimers()
	s.emit(Event{Type: EventSandboxPaused, SandboxID: sb.id, Status: sb.status})
	s.logf(sb, "paused")
	return nil
}

// resumeLocked runs a paused sandbox again: pending egress generations are
// applied ApplyDelay after the resume (the resume applies the policy the
// sandbox holds now), the gateway serves it again after GatewayLag, and its
// processes go on.
func (s *Server) resumeLocked(sb *sandbox) error {
	if sb.status != prime.StatusPaused {
		return fmt.Errorf("sandbox %s is %s; only a PAUSED sandbox can be resumed", sb.id, sb.status)
	}
	sb.status = prime.StatusRunning
	sb.updatedAt = s.now()
	sb.runningAt = time.Now()
	s.thaw(sb)
	s.emit(Event{Type: EventSandboxResumed, SandboxID: sb.id, Status: sb.status})
	s.logf(sb, "resumed")
	s.armApply(sb)
	s.armGateway(sb)
	return nil
}

// thaw lets a paused sandbox's processes go on (or end, when it ended).
func (s *Server) thaw(sb *sandbox) {
	if sb.frozen != nil {
		close(sb.frozen)
		sb.frozen = nil
	}
}

// Termination is how the platform ended a sandbox on its own.
type Termination struct {
	// Status is the final status: TIMEOUT, ERROR or TERMINATED (default
	// TERMINATED).
	Status string `json:"status"`
	// ErrorType is the error context's errorType and the sandbox's
	// terminationReason, e.g. TIMEOUT or OOM_KILLED (the SDK's names).
	ErrorType string `json:"error_type"`
	// ErrorMessage is the error context's errorMessage.
	ErrorMessage string `json:"error_message"`
}

// Terminations the platform is known for, by the names TerminateSandbox and
// POST /_mock/sandbox/{id}/terminate accept as "reason". [guess] The
// statuses and messages: the SDK names the error types (TIMEOUT,
// OOM_KILLED) and words its errors "exceeded its maximum runtime" and
// "terminated due to out-of-memory"; a cancellation has no error type.
var Terminations = map[string]Termination{
	"timeout": {Status: prime.StatusTimeout, ErrorType: "TIMEOUT", ErrorMessage: "Sandbox exceeded its maximum runtime (timeout_minutes) and was terminated"},
	"oom":     {Status: prime.StatusError, ErrorType: "OOM_KILLED", ErrorMessage: "Sandbox was killed: out of memory"},
	"cancel":  {Status: prime.StatusTerminated, ErrorMessage: "Sandbox was cancelled by the platform"},
}

// TerminateSandbox ends a live sandbox as the platform does on its own (a
// lifetime timeout, an OOM kill, a cancellation): its processes stop, its
// files go, the gateway stops serving it, and its error context, batch
// status and terminationReason carry t. A test ends a sandbox in the middle
// of a background job with it.
func (s *Server) TerminateSandbox(id string, t Termination) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb := s.sandboxes[id]
	switch {
	case sb == nil:
		return fmt.Errorf("prime-mock: no sandbox %q", id)
	case isTerminal(sb.status):
		return fmt.Errorf("prime-mock: sandbox %s is already %s", id, sb.status)
	}
	if t.Status == "" {
		t.Status = prime.StatusTerminated
	}
	if !isTerminal(t.Status) {
		return fmt.Errorf("prime-mock: %q is not a final status (TIMEOUT, ERROR or TERMINATED)", t.Status)
	}
	sb.stopTimers()
	now := s.now()
	sb.status = t.Status
	sb.updatedAt = now
	sb.terminated = &now
	sb.pendingBuild = nil
	sb.gatewayReady = false
	sb.errorType, sb.errorMsg, sb.terminationReason = nil, nil, nil
	if t.ErrorType != "" {
		sb.errorType, sb.terminationReason = strPtr(t.ErrorType), strPtr(t.ErrorType)
	}
	if t.ErrorMessage != "" {
		sb.errorMsg = strPtr(t.ErrorMessage)
	}
	s.thaw(sb)
	stopExecutionsLocked(sb)
	sb.m.fs.release()
	s.emit(Event{Type: EventSandboxEnded, SandboxID: sb.id, Status: sb.status, ErrorType: t.ErrorType})
	s.logf(sb, "ended by the platform: %s %s %s", t.Status, t.ErrorType, t.ErrorMessage)
	return nil
}

// handleMockPause, handleMockResume and handleMockTerminate serve
// POST /_mock/sandbox/{id}/pause, /resume and /terminate (body
// {"reason": "timeout"|"oom"|"cancel"} or a Termination).
func (s *Server) handleMockPause(w http.ResponseWriter, r *http.Request) {
	s.mockAction(w, s.Pause(r.PathValue("id")))
}

func (s *Server) handleMockResume(w http.ResponseWriter, r *http.Request) {
	s.mockAction(w, s.Resume(r.PathValue("id")))
}

func (s *Server) handleMockTerminate(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Reason string `json:"reason"`
		Termination
	}
	if r.ContentLength != 0 {
		if err := decodeBody(r, &body); err != nil {
			writeJSON(w, http.StatusUnprocessableEntity, detail(err.Error()))
			return
		}
	}
	t := body.Termination
	if body.Reason != "" {
		preset, known := Terminations[body.Reason]
		if !known {
			writeJSON(w, http.StatusUnprocessableEntity, detail(fmt.Sprintf("reason must be timeout, oom or cancel, got %q", body.Reason)))
			return
		}
		t = preset
	}
	s.mockAction(w, s.TerminateSandbox(r.PathValue("id"), t))
}

func (s *Server) mockAction(w http.ResponseWriter, err error) {
	if err != nil {
		writeJSON(w, http.StatusConflict, detail(err.Error()))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true})
}
