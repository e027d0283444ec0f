package primemock

import (
	"net/http"
	"slices"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

func clonePolicy(p prime.EgressPolicy) prime.EgressPolicy {
	return prime.EgressPolicy{Allowlist: slices.Clone(p.Allowlist), Denylist: slices.Clone(p.Denylist)}
}

// policyTarget finds a sandbox whose egress policy may be read or written:
// it must exist (404), be a VM (409) and not be terminal (409).
func (s *Server) policyTarget(r *http.Request) (*sandbox, reply, bool) {
	sb, rep, found := s.lookup(r)
	if !found {
		return nil, rep, false
	}
	if !sb.vm {
		return nil, errorReply(http.StatusConflict,
			"Egress policies need a VM sandbox; sandbox %s is a container (create it with vm = true)", sb.id), false
	}
	if prime.IsTerminalStatus(sb.status) {
		return nil, errorReply(http.StatusConflict, "Sandbox %s is %s; its egress policy can no longer be read or changed", sb.id, sb.status), false
	}
	return sb, reply{}, true
}

// policyReply answers with the policy status and, once delivered, records
// the first time the client is told about a newly applied generation.
func (s *Server) policyReply(sb *sandbox) reply {
	st := prime.EgressPolicyStatus{
		Policy:            clonePolicy(sb.desired),
		Generation:        sb.generation,
		AppliedGeneration: sb.appliedGen,
		Applied:           sb.appliedGen >= sb.generation,
	}
	rep := ok(st)
	rep.onSend = func() {
		if s.sandboxes[sb.id] == sb && st.AppliedGeneration > sb.observedGen {
			sb.observedGen = st.AppliedGeneration
			s.emit(Event{Type: EventPolicyObserved, SandboxID: sb.id, Generation: st.AppliedGeneration})
		}
	}
	return rep
}

func (s *Server) handleGetPolicy(r *http.Request, _ string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb, rep, found := s.policyTarget(r)
	if !found {
		return rep
	}
	return s.policyReply(sb)
}

func (s *Server) handlePutPolicy(r *http.Request, _ string) reply {
	// The body is validated first, as FastAPI does before a handler runs.
	var p prime.EgressPolicy
	if err := decodeBody(r, &p); err != nil {
		return errorReply(http.StatusUnprocessableEntity, "%v", err)
	}
	if err := prime.ValidateEgressPolicy(p); err != nil {
		return errorReply(http.StatusUnprocessableEntity, "%s", flatten(err))
	}
	allow, err := prime.CanonicalEgressList(p.Allowlist)
	if err != nil {
		return errorReply(http.StatusUnprocessableEntity, "allowlist: %s", flatten(err))
	}
	deny, err := prime.CanonicalEgressList(p.Denylist)
	if err != nil {
		return errorReply(http.StatusUnprocessableEntity, "denylist: %s", flatten(err))
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	sb, rep, found := s.policyTarget(r)
	if !found {
		return rep
	}
	// Every accepted PUT is a new generation, even an unchanged policy.
	sb.generation++
	sb.desired = prime.EgressPolicy{Allowlist: allow, Denylist: deny}
	sb.updatedAt = s.now()
	sb.pending = append(sb.pending, pendingPolicy{gen: sb.generation, policy: sb.desired, acceptedAt: time.Now(), delayed: true})
	pol := clonePolicy(sb.desired)
	s.emit(Event{Type: EventPolicyPut, SandboxID: sb.id, Generation: sb.generation, Policy: &pol})
	s.logf(sb, "egress policy generation %d accepted", sb.generation)
	s.armApply(sb)
	return s.policyReply(sb)
}

// armApply applies every pending generation that is due and arms a timer
// for the next one. It runs under the lock whenever something that affects
// the plan changes: RUNNING, a PUT, a knob.
func (s *Server) armApply(sb *sandbox) {
	if sb.applyTimer != nil {
		sb.applyTimer.Stop()
		sb.applyTimer = nil
	}
	if s.closed || !sb.vm || sb.status != prime.StatusRunning || s.opts.NeverApply || len(sb.pending) == 0 {
		return
	}
	now := time.Now()
	due := func(p pendingPolicy) time.Time {
		t := p.acceptedAt
		if sb.runningAt.After(t) {
			t = sb.runningAt
		}
		if p.delayed {
			t = t.Add(s.opts.applyDelay())
		}
		return t
	}
	// The newest due generation wins; older pending ones are superseded, so
	// applied_generation only ever moves forward.
	best := -1
	var next time.Time
	for i, p := range sb.pending {
		if d := due(p); !d.After(now) {
			if best < 0 || p.gen > sb.pending[best].gen {
				best = i
			}
		} else if next.IsZero() || d.Before(next) {
			next = d
		}
	}
	if best >= 0 {
		p := sb.pending[best]
		sb.appliedGen = p.gen
		sb.appliedPolicy = p.policy
		sb.pending = slices.DeleteFunc(sb.pending, func(q pendingPolicy) bool { return q.gen <= p.gen })
		s.emit(Event{Type: EventPolicyApplied, SandboxID: sb.id, Generation: p.gen})
		s.logf(sb, "egress policy generation %d applied", p.gen)
	}
	if len(sb.pending) == 0 || next.IsZero() {
		return
	}
	sb.applyTimer = time.AfterFunc(next.Sub(now), func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.sandboxes[sb.id] == sb {
			s.armApply(sb)
		}
	})
}

// reachable decides whether the sandbox can open a new connection to host
// under its APPLIED policy (see the package documentation).
func (s *Server) reachable(sb *sandbox, host string) bool {
	if sb.status != prime.StatusRunning {
		return false
	}
	if !sb.vm {
		return true
	}
	if sb.appliedGen < 0 {
		// Nothing applied: open, except that create-time lists fail closed
		// until the data plane applies them (the observed asymmetry).
		return !sb.createLists
	}
	return policyAllows(sb.appliedPolicy, host)
}

// policyAllows evaluates a policy for one destination host.
func policyAllows(p prime.EgressPolicy, host string) bool {
	matches := func(list []string) bool {
		for _, raw := range list {
			e, err := prime.ParseEgressEntry(raw)
			if err == nil && e.MatchesHost(host) {
				return true
			}
		}
		return false
	}
	if p.Allowlist != nil {
		return matches(p.Allowlist)
	}
	return !matches(p.Denylist)
}
