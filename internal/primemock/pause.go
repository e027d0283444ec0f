package primemock

// Pause and resume of a VM sandbox. An accepted pause keeps the sandbox
// RUNNING for PauseDelay, then it is PAUSED: its command streams, background
// processes ([I: pause-stops-processes] a real pause keeps them in memory; the mock's shell
// cannot freeze them) and SSH sessions end, the gateway forgets it, and a
// pause checkpoint with memory starts uploading. An egress policy PUT while
// paused is accepted and applied ApplyDelay after the resume. An accepted
// resume keeps it PAUSED for ResumeDelay, then RUNNING again; the gateway
// learns of it GatewayLag later, as after a boot. Paused time counts toward
// timeout_minutes (lifetime.go).

import (
	"net/http"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

func (s *Server) handlePause(r *http.Request, caller string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb, rep, found := s.lookup(r, caller)
	if !found {
		return rep
	}
	switch {
	case sb.status == prime.StatusPaused || sb.x.pausing:
		// [I: pause-repeat] A repeated pause is accepted again: a retry after a lost
		// answer must not fail.
		return reply{status: http.StatusAccepted, body: s.wire(sb)}
	case sb.x.resuming:
		return errorReply(http.StatusConflict, "Sandbox %s is resuming; pause it once it is RUNNING", sb.id)
	case sb.status != prime.StatusRunning:
		return errorReply(http.StatusConflict, "Sandbox %s is %s; only a RUNNING sandbox can be paused", sb.id, sb.status)
	}
	sb.x.pausing = true
	sb.updatedAt = s.now()
	s.emit(Event{Type: EventPauseRequested, SandboxID: sb.id, Status: sb.status})
	s.logf(sb, "pause requested")
	s.after(sb, s.opts.pauseDelay(), func() { s.completePause(sb) })
	// [I: pause-202] 202 with the sandbox: the answer is not published.
	return reply{status: http.StatusAccepted, body: s.wire(sb)}
}

func (s *Server) completePause(sb *sandbox) {
	now := s.now()
	sb.x.pausing = false
	sb.x.pausedAt = time.Now()
	sb.status = prime.StatusPaused
	sb.updatedAt = now
	sb.gatewayReady = false
	if sb.gatewayTimer != nil {
		sb.gatewayTimer.Stop()
		sb.gatewayTimer = nil
	}
	if sb.applyTimer != nil {
		sb.applyTimer.Stop()
		sb.applyTimer = nil
	}
	stopExecutionsLocked(sb)
	s.closeSessionsOf(sb, "the sandbox was paused")
	s.emit(Event{Type: EventSandboxPaused, SandboxID: sb.id, Status: sb.status})
	s.logf(sb, "paused")
	s.armLifetime(sb) // paused time counts toward the lifetime, not the idle timeout
	// The pause's disk snapshot appears as a checkpoint, with memory.
	if snap, err := s.snapshotRoot(sb); err == nil {
		s.startCheckpoint(sb, snap, true, "")
	}
}

func (s *Server) handleResume(r *http.Request, caller string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb, rep, found := s.lookup(r, caller)
	if !found {
		return rep
	}
	switch {
	case sb.x.resuming || (sb.status == prime.StatusRunning && !sb.x.pausing):
		// [I: resume-repeat] Idempotent, as a pause is.
		return reply{status: http.StatusAccepted, body: s.wire(sb)}
	case sb.status != prime.StatusPaused:
		return errorReply(http.StatusConflict, "Sandbox %s is %s; only a PAUSED sandbox can be resumed", sb.id, describeStatus(sb))
	}
	// A resume is checked like a create. [I: resume-refused-409] It is refused with a 409
	// at once; the sandbox stays PAUSED.
	if limit := s.opts.ResumeLimit; limit > 0 && s.activeCount(sb.owner) >= limit {
		msg := "Resume refused: the account's limit of active sandboxes is reached"
		s.emit(Event{Type: EventResumeRefused, SandboxID: sb.id, Status: sb.status, Message: msg})
		s.logf(sb, "resume refused: active sandbox limit %d reached", limit)
		return errorReply(http.StatusConflict, "%s (%d active, limit %d); stop or pause another sandbox and try again", msg, s.activeCount(sb.owner), limit)
	}
	sb.x.resuming = true
	sb.updatedAt = s.now()
	s.emit(Event{Type: EventResumeRequested, SandboxID: sb.id, Status: sb.status})
	s.logf(sb, "resume requested")
	s.after(sb, s.opts.resumeDelay(), func() { s.completeResume(sb) })
	return reply{status: http.StatusAccepted, body: s.wire(sb)}
}

func (s *Server) completeResume(sb *sandbox) {
	sb.x.resuming = false
	sb.status = prime.StatusRunning
	sb.updatedAt = s.now()
	sb.runningAt = time.Now()
	sb.lastActive = sb.updatedAt
	s.emit(Event{Type: EventSandboxResumed, SandboxID: sb.id, Status: sb.status})
	s.logf(sb, "resumed")
	// Policies accepted while paused apply now (ApplyDelay after the
	// resume); the gateway learns of the sandbox again.
	s.armApply(sb)
	s.armGateway(sb)
	s.armLifetime(sb)
	s.startProcessLocked(sb)
}
