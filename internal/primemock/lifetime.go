package primemock

import "github.com/primeintellect/terraform-provider-prime/internal/prime"

// TimeOut ends a live sandbox as its lifetime deadline (timeout_minutes)
// would: status TIMEOUT, its processes stopped and its files released. The
// mock runs no lifetime clock of its own ([guess]: the platform's status
// after the deadline is taken from the SDK's TIMEOUT), so tests call this
// to stand for an overnight run whose members expired. It reports false
// for an unknown or already ended sandbox.
func (s *Server) TimeOut(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb := s.sandboxes[id]
	if sb == nil || isTerminal(sb.status) {
		return false
	}
	sb.stopTimers()
	now := s.now()
	sb.status = prime.StatusTimeout
	sb.updatedAt = now
	sb.terminated = &now
	sb.terminationReason = strPtr("TIMEOUT")
	sb.pendingBuild = nil
	sb.gatewayReady = false
	stopExecutionsLocked(sb)
	sb.m.FS().Release()
	s.emit(Event{Type: EventSandboxError, SandboxID: sb.id, Status: sb.status, ErrorType: "TIMEOUT"})
	s.logf(sb, "sandbox reached its timeout_minutes and was stopped")
	return true
}
