package primemock

// Lifetimes and idle timeouts, on the mock clock (clock.go). A sandbox's
// lifetime (timeout_minutes, default 60, negative: none) runs from its
// creation [I: lifetime-start] and counts paused time too [G: paused time
// counts toward timeout_minutes]; when it ends the sandbox is TIMEOUT
// (errorType TIMEOUT, the SDK's name), its processes stop and its files go.
// The idle timeout (idle_timeout_minutes) runs while the sandbox is RUNNING
// and no command the gateway started is running: a command, upload,
// download or file read restarts it, a running command keeps it pinned
// [G: G/lifecycle], status reads do not. [I: idle-scope] Background
// processes and the start process do not pin it, the end of a command
// counts as activity, and a paused sandbox does not idle out (its idle
// clock restarts at the resume).

import (
	"fmt"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// The two ways a sandbox's time runs out, as Terminations.
var (
	lifetimeEnded = Terminations["timeout"]
	// [I: idle-timeout-status] An idle timeout ends the sandbox as its
	// lifetime does (TIMEOUT, errorType TIMEOUT); only the message differs.
	idleEnded = Termination{Status: prime.StatusTimeout, ErrorType: "TIMEOUT",
		ErrorMessage: "Sandbox was idle for longer than its idle_timeout_minutes and was terminated"}
)

// lifetimeDeadline is when a sandbox's lifetime ends (zero: never).
func lifetimeDeadline(sb *sandbox) time.Time {
	if sb.req.TimeoutMinutes == nil || *sb.req.TimeoutMinutes <= 0 {
		return time.Time{}
	}
	return sb.createdAt.Add(time.Duration(*sb.req.TimeoutMinutes) * time.Minute)
}

// idleDeadline is when a sandbox idles out (zero: not now): it must be
// RUNNING, have an idle timeout, and run no gateway command.
func idleDeadline(sb *sandbox) time.Time {
	if sb.req.IdleTimeoutMinutes == nil || sb.status != prime.StatusRunning || sb.lastActive.IsZero() || pinned(sb) {
		return time.Time{}
	}
	return sb.lastActive.Add(time.Duration(*sb.req.IdleTimeoutMinutes) * time.Minute)
}

// pinned reports a running command the gateway started.
func pinned(sb *sandbox) bool {
	for x := range sb.execs {
		if x.transport == TransportConnect {
			return true
		}
	}
	return false
}

// touch is activity on a sandbox (a command, upload, download or file
// read): its idle clock starts again.
func (s *Server) touch(sb *sandbox) {
	sb.lastActive = s.now()
	s.armLifetime(sb)
}

// touchID is touch for a sandbox id, from outside the lock.
func (s *Server) touchID(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sb := s.sandboxes[id]; sb != nil {
		s.touch(sb)
	}
}

// armLifetime ends a sandbox whose lifetime or idle timeout has passed on
// the mock clock, or arms a real timer for the earlier of the two. It runs
// under the lock whenever one of them may have moved: creation, RUNNING,
// activity, a command's end, pause, resume, and the clock itself.
func (s *Server) armLifetime(sb *sandbox) {
	if sb.lifeTimer != nil {
		sb.lifeTimer.Stop()
		sb.lifeTimer = nil
	}
	if s.closed || s.sandboxes[sb.id] != sb || isTerminal(sb.status) {
		return
	}
	life, idle := lifetimeDeadline(sb), idleDeadline(sb)
	next, end := life, lifetimeEnded
	if !idle.IsZero() && (next.IsZero() || idle.Before(next)) {
		next, end = idle, idleEnded
	}
	if next.IsZero() {
		return
	}
	now := s.now()
	if !now.Before(next) {
		_ = s.terminateLocked(sb, end)
		s.logf(sb, "%s", end.ErrorMessage)
		return
	}
	sb.lifeTimer = time.AfterFunc(s.clk.realWait(next.Sub(now)), func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.sandboxes[sb.id] == sb {
			s.armLifetime(sb)
		}
	})
}

// armLifetimes re-plans every live sandbox (the clock moved or changed
// pace), ending those whose time has come.
func (s *Server) armLifetimes() {
	for _, sb := range s.order {
		s.armLifetime(sb)
	}
}

// TimeOut ends a live sandbox as its lifetime deadline does, now, whatever
// its timeout_minutes: a test's way to stand for an overnight run whose
// members expired. It reports false for an unknown or already ended
// sandbox.
func (s *Server) TimeOut(id string) bool {
	return s.TerminateSandbox(id, lifetimeEnded) == nil
}

// describeLifetime is a log line of a sandbox's limits.
func describeLifetime(r prime.CreateSandboxRequest) string {
	life := "no lifetime limit"
	if r.TimeoutMinutes != nil && *r.TimeoutMinutes > 0 {
		life = fmt.Sprintf("a lifetime of %d min", *r.TimeoutMinutes)
	}
	if r.IdleTimeoutMinutes != nil {
		life += fmt.Sprintf(", idle timeout %d min", *r.IdleTimeoutMinutes)
	}
	return life
}
