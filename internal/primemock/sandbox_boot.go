package primemock

// A sandbox's way from PENDING to RUNNING (or ERROR): timers, boot, gateway.

import (
	"fmt"
	"strings"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

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
	sb.lastActive = now
	s.emit(Event{Type: EventSandboxRunning, SandboxID: sb.id, Status: sb.status})
	s.logf(sb, "running")
	s.armApply(sb)
	s.armGateway(sb)
	s.armLifetime(sb)
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
	sb.m.FS().Release()
	s.sandboxEnded(sb)
	s.emit(Event{Type: EventSandboxError, SandboxID: sb.id, Status: sb.status, ErrorType: *sb.errorType})
	s.logf(sb, "error: %s", *sb.errorMsg)
}
