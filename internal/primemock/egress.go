package primemock

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// openPolicy is a fresh VM's policy: nothing denied [T: the SDK's fixture
// for an untouched VM is {allowlist: null, denylist: []}].
func openPolicy() prime.EgressPolicy { return prime.EgressPolicy{Denylist: []string{}} }

func clonePolicy(p prime.EgressPolicy) prime.EgressPolicy {
	return prime.EgressPolicy{Allowlist: slices.Clone(p.Allowlist), Denylist: slices.Clone(p.Denylist)}
}

// policyTarget finds a sandbox whose egress policy may be read or written:
// it must exist (404), be a VM (409) and not be terminal (409).
func (s *Server) policyTarget(r *http.Request, caller string) (*sandbox, reply, bool) {
	sb, rep, found := s.lookup(r, caller)
	if !found {
		return nil, rep, false
	}
	if isTerminal(sb.status) {
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

func (s *Server) handleGetPolicy(r *http.Request, caller string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb, rep, found := s.policyTarget(r, caller)
	if !found {
		return rep
	}
	return s.policyReply(sb)
}

// decodePolicyBody reads a PUT body. [I: egress-put-both-keys] Both keys must be present (the SDK
// always sends both, one of them null); anything else is 422. The body's
// "rules" (new in the 2026 contract, its shape not published) may be absent,
// null or an object [I: egress-rules-object: anything else is 422]; the mock does not
// interpret what it holds.
func decodePolicyBody(raw []byte) (prime.EgressPolicy, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return prime.EgressPolicy{}, fmt.Errorf("invalid JSON body: %w", err)
	}
	if rules, found := keys["rules"]; found {
		var obj map[string]json.RawMessage
		if strings.TrimSpace(string(rules)) != "null" && json.Unmarshal(rules, &obj) != nil {
			return prime.EgressPolicy{}, fmt.Errorf("rules: Input should be a valid dictionary")
		}
	}
	var p prime.EgressPolicy
	for _, k := range []struct {
		name string
		dst  *[]string
	}{{"allowlist", &p.Allowlist}, {"denylist", &p.Denylist}} {
		v, found := keys[k.name]
		if !found {
			return p, fmt.Errorf("%s: Field required (send both allowlist and denylist, one of them null)", k.name)
		}
		if strings.TrimSpace(string(v)) == "null" {
			continue
		}
		if err := json.Unmarshal(v, k.dst); err != nil {
			return p, fmt.Errorf("%s: Input should be a valid list of strings", k.name)
		}
		if *k.dst == nil {
			*k.dst = []string{}
		}
	}
	return p, nil
}

// checkPolicy applies the PUT rules to a decoded body (nil is null) and
// returns the policy to store: [I: egress-exactly-one] exactly one list non-null; [C] the SDK's
// count and entry rules, which it calls a mirror of the API's contract;
// entries canonicalised (see canonicalEgressEntry).
func checkPolicy(p prime.EgressPolicy) (prime.EgressPolicy, error) {
	if (p.Allowlist == nil) == (p.Denylist == nil) {
		return p, fmt.Errorf("exactly one of allowlist and denylist must be a list, the other null")
	}
	name, list := "allowlist", p.Allowlist
	if p.Denylist != nil {
		name, list = "denylist", p.Denylist
	}
	if len(list) > maxEgressEntries {
		return p, fmt.Errorf("%s supports at most %d entries", name, maxEgressEntries)
	}
	for _, e := range list {
		if err := checkEgressEntry(e); err != nil {
			return p, fmt.Errorf("%s: %w", name, err)
		}
	}
	c, err := canonicalEgressList(list)
	if err != nil {
		return p, fmt.Errorf("%s: %w", name, err)
	}
	if p.Allowlist != nil {
		return prime.EgressPolicy{Allowlist: c}, nil
	}
	return prime.EgressPolicy{Denylist: c}, nil
}

func (s *Server) handlePutPolicy(r *http.Request, caller string) reply {
	// The body is validated first, as FastAPI does before a handler runs.
	raw, err := readBody(r)
	if err != nil {
		return errorReply(http.StatusUnprocessableEntity, "%v", err)
	}
	p, err := decodePolicyBody(raw)
	if err != nil {
		return errorReply(http.StatusUnprocessableEntity, "%v", err)
	}
	policy, err := checkPolicy(p)
	if err != nil {
		return errorReply(http.StatusUnprocessableEntity, "%v", err)
	}
	allow, deny := policy.Allowlist, policy.Denylist

	s.mu.Lock()
	defer s.mu.Unlock()
	sb, rep, found := s.policyTarget(r, caller)
	if !found {
		return rep
	}
	// [OA] "Replace the egress policy of a running or paused VM sandbox":
	// [I: egress-put-409] a booting one is a conflict.
	if sb.status != prime.StatusRunning && sb.status != prime.StatusPaused {
		return errorReply(http.StatusConflict, "Sandbox %s is %s; its egress policy can be replaced once it is RUNNING (or while it is PAUSED)", sb.id, sb.status)
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
	// 202 once the desired generation is persisted; the data plane applies
	// it later (on a paused sandbox, after the resume).
	rep = s.policyReply(sb)
	rep.status = http.StatusAccepted
	switch s.opts.EgressPutAnswer {
	case EgressPutMinimal:
		rep.body, rep.onSend = map[string]any{"generation": sb.generation}, nil
	case EgressPutEmpty:
		rep.body, rep.onSend = nil, nil
	}
	return rep
}

// armApply applies every pending generation that is due and arms a timer
// for the next one. It runs under the lock whenever something that affects
// the plan changes: RUNNING, a PUT, a knob.
func (s *Server) armApply(sb *sandbox) {
	if sb.applyTimer != nil {
		sb.applyTimer.Stop()
		sb.applyTimer = nil
	}
	if s.closed || sb.status != prime.StatusRunning || s.opts.NeverApply || len(sb.pending) == 0 {
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
	if sb.appliedGen < 0 {
		// Nothing applied: open, except that create-time lists fail closed
		// until the data plane applies them (the observed asymmetry).
		return !sb.createLists
	}
	return policyAllows(sb.appliedPolicy, host)
}

// policyAllows evaluates a policy for one destination host with the mock's
// own matcher (matchesDestination).
func policyAllows(p prime.EgressPolicy, host string) bool {
	d := parseDestination(host)
	matches := func(list []string) bool {
		for _, e := range list {
			if matchesDestination(e, d) {
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
