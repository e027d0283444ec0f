package primemock

// The platform ending a sandbox on its own (a lifetime timeout, an OOM
// kill, a cancellation), and Go hooks that pause and resume at once (the
// API's pause and resume are pause.go's), for tests.

import (
	"fmt"
	"net/http"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// EventSandboxEnded is the platform ending a sandbox on its own
// (TerminateSandbox): Status TIMEOUT, ERROR or TERMINATED, ErrorType.
const EventSandboxEnded = "sandbox_ended"

// Pause pauses a RUNNING VM sandbox at once, as POST /sandbox/{id}/pause
// does PauseDelay after accepting it (pause.go): a test's way to hold a
// sandbox PAUSED without waiting.
func (s *Server) Pause(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb := s.sandboxes[id]
	switch {
	case sb == nil:
		return fmt.Errorf("prime-mock: no sandbox %q", id)
	case sb.status != prime.StatusRunning || sb.x.pausing || sb.x.resuming:
		return fmt.Errorf("prime-mock: sandbox %s is %s; only a RUNNING sandbox can be paused", id, describeStatus(sb))
	}
	s.completePause(sb)
	return nil
}

// Resume resumes a PAUSED sandbox at once, as POST /sandbox/{id}/resume
// does ResumeDelay after accepting it.
func (s *Server) Resume(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb := s.sandboxes[id]
	switch {
	case sb == nil:
		return fmt.Errorf("prime-mock: no sandbox %q", id)
	case sb.status != prime.StatusPaused || sb.x.resuming:
		return fmt.Errorf("prime-mock: sandbox %s is %s; only a PAUSED sandbox can be resumed", id, describeStatus(sb))
	}
	s.completeResume(sb)
	return nil
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
// POST /_mock/sandbox/{id}/terminate accept as "reason". [I: termination-texts] The
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
	if sb == nil {
		return fmt.Errorf("prime-mock: no sandbox %q", id)
	}
	return s.terminateLocked(sb, t)
}

// terminateLocked is TerminateSandbox under the lock.
func (s *Server) terminateLocked(sb *sandbox, t Termination) error {
	if isTerminal(sb.status) {
		return fmt.Errorf("prime-mock: sandbox %s is already %s", sb.id, sb.status)
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
	stopExecutionsLocked(sb)
	sb.m.FS().Release()
	s.sandboxEnded(sb)
	s.emit(Event{Type: EventSandboxEnded, SandboxID: sb.id, Status: sb.status, ErrorType: t.ErrorType})
	s.logf(sb, "ended by the platform: %s %s %s", t.Status, t.ErrorType, t.ErrorMessage)
	return nil
}

// handleMockTerminate serves POST /_mock/sandbox/{id}/terminate (body
// {"reason": "timeout"|"oom"|"cancel"} or a Termination).
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
