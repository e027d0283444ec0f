package primemock

// Private networks. Members are running VM sandboxes of the network's
// owner scope; a member reaches another at <sandbox-id>.sandbox.internal
// when both are RUNNING members of one network and a rule of it matches the
// source's tags (from), the peer's tags (to) and the port. The egress
// policy does not govern this traffic [I: network-no-egress: a network exists so that
// locked-down agents can reach a tool server]. The shell's curl and probe
// go through it (curl http://ID.sandbox.internal:8080/ checks port 8080;
// without a port, 80 for http and 443 otherwise).

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock/shell"
)

type network struct {
	id, name, scope string
	teamID          *string
	rules           []prime.NetworkRule
	// allowAll: created without rules under NetworkDefaultAllow.
	allowAll    bool
	members     map[string][]string // sandbox id → tags
	memberOrder []string
	createdAt   time.Time
	updatedAt   time.Time
}

// mockTagPattern is the mock's tag grammar [I: tag-grammar: not published].
var mockTagPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`)

// wireNetwork is a network as the API answers it. [I: network-shape] Only
// NetworkResponse's id and name are published; the other keys are the
// mock's.
func (s *Server) wireNetwork(n *network) map[string]any {
	members := []prime.NetworkMember{}
	for _, id := range n.memberOrder {
		if tags, ok := n.members[id]; ok {
			members = append(members, prime.NetworkMember{SandboxID: id, Tags: slices.Clone(tags)})
		}
	}
	rules := slices.Clone(n.rules)
	if rules == nil {
		rules = []prime.NetworkRule{}
	}
	out := map[string]any{
		"id": n.id, "name": n.name, "team_id": cloneStrPtr(n.teamID), "rules": rules, "members": members,
		"created_at": ts(n.createdAt), "updated_at": ts(n.updatedAt),
	}
	if n.allowAll {
		out["allow_all"] = true // [I: network-allow-all] how the default-allow network shows
	}
	return out
}

// checkNetworkRules is the mock's rule check: selectors "*" or
// "tag:<name>", at least one port [I: rule-ports], each 1-65535.
func checkNetworkRules(rules []prime.NetworkRule) error {
	for i, r := range rules {
		for _, sel := range []string{r.From, r.To} {
			if sel == "*" {
				continue
			}
			tag, ok := strings.CutPrefix(sel, "tag:")
			if !ok || !mockTagPattern.MatchString(tag) {
				return fmt.Errorf("rules[%d]: selector %q must be \"*\" or \"tag:<name>\"", i, sel)
			}
		}
		if len(r.Ports) == 0 {
			return fmt.Errorf("rules[%d].ports: List should have at least 1 item", i)
		}
		for _, p := range r.Ports {
			if p < 1 || p > 65535 {
				return fmt.Errorf("rules[%d].ports: %d is not a port (1-65535)", i, p)
			}
		}
	}
	return nil
}

func (s *Server) handleCreateNetwork(r *http.Request, caller string) reply {
	raw, err := readBody(r)
	if err != nil {
		return errorReply(http.StatusUnprocessableEntity, "%v", err)
	}
	var req prime.CreateNetworkRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		return errorReply(http.StatusUnprocessableEntity, "invalid JSON body: %v", err)
	}
	var keys map[string]json.RawMessage
	_ = json.Unmarshal(raw, &keys)
	rulesGiven := keys["rules"] != nil && string(keys["rules"]) != "null"
	if strings.TrimSpace(req.Name) == "" {
		return errorReply(http.StatusUnprocessableEntity, "name: Field required")
	}
	if err := checkNetworkRules(req.Rules); err != nil {
		return errorReply(http.StatusUnprocessableEntity, "%v", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	scope, rep, allowed := s.scopeFor(req.TeamID, caller)
	if !allowed {
		return rep
	}
	now := s.now()
	n := &network{
		id: s.newResourceID("net"), name: req.Name, scope: scope, teamID: cloneStrPtr(req.TeamID),
		rules: slices.Clone(req.Rules), members: map[string][]string{}, createdAt: now, updatedAt: now,
	}
	if !rulesGiven {
		// The published default is contradictory; the knob picks one.
		n.allowAll = s.opts.NetworkDefaultAllow
	}
	s.res.networks[n.id] = n
	s.res.netOrder = append(s.res.netOrder, n)
	s.emit(Event{Type: EventNetworkCreated, NetworkID: n.id, Message: n.name})
	return reply{status: http.StatusCreated, body: s.wireNetwork(n)}
}

func (s *Server) networkOf(r *http.Request, caller string) (*network, reply, bool) {
	n := s.res.networks[r.PathValue("network_id")]
	if n == nil || !s.inScope(caller, n.scope) {
		return nil, errorReply(http.StatusNotFound, "Network not found"), false
	}
	return n, reply{}, true
}

func (s *Server) handleGetNetwork(r *http.Request, caller string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, rep, found := s.networkOf(r, caller)
	if !found {
		return rep
	}
	return ok(s.wireNetwork(n))
}

func (s *Server) handleListNetworks(r *http.Request, caller string) reply {
	var team *string
	if t := r.URL.Query().Get("team_id"); t != "" {
		team = &t
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	scope, rep, allowed := s.scopeFor(team, caller)
	if !allowed {
		return rep
	}
	out := []map[string]any{}
	for _, n := range s.res.netOrder {
		if n.scope == scope {
			out = append(out, s.wireNetwork(n))
		}
	}
	return ok(map[string]any{"networks": out})
}

func (s *Server) handleDeleteNetwork(r *http.Request, caller string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, rep, found := s.networkOf(r, caller)
	if !found {
		return rep
	}
	delete(s.res.networks, n.id)
	s.res.netOrder = slices.DeleteFunc(s.res.netOrder, func(x *network) bool { return x == n })
	s.emit(Event{Type: EventNetworkDeleted, NetworkID: n.id})
	return noContent()
}

func (s *Server) handleReplaceRules(r *http.Request, caller string) reply {
	var req prime.ReplaceRulesRequest
	if err := decodeBody(r, &req); err != nil {
		return errorReply(http.StatusUnprocessableEntity, "%v", err)
	}
	if req.Rules == nil {
		return errorReply(http.StatusUnprocessableEntity, "rules: Field required")
	}
	if err := checkNetworkRules(req.Rules); err != nil {
		return errorReply(http.StatusUnprocessableEntity, "%v", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n, rep, found := s.networkOf(r, caller)
	if !found {
		return rep
	}
	n.rules, n.allowAll, n.updatedAt = slices.Clone(req.Rules), false, s.now()
	s.emit(Event{Type: EventNetworkRules, NetworkID: n.id, Message: fmt.Sprintf("%d rules", len(n.rules))})
	return ok(s.wireNetwork(n))
}

func (s *Server) handlePutMember(r *http.Request, caller string) reply {
	var req prime.PutMemberRequest
	if err := decodeBody(r, &req); err != nil {
		return errorReply(http.StatusUnprocessableEntity, "%v", err)
	}
	for _, t := range req.Tags {
		if !mockTagPattern.MatchString(t) {
			return errorReply(http.StatusUnprocessableEntity, "tags: %q is not a tag", t)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n, rep, found := s.networkOf(r, caller)
	if !found {
		return rep
	}
	sb := s.sandboxes[r.PathValue("sandbox_id")]
	// [I: member-scope] A sandbox of another owner is not found; one that is not a
	// running VM is a conflict.
	if sb == nil || sandboxScope(sb) != n.scope {
		return errorReply(http.StatusNotFound, "Sandbox not found")
	}
	if sb.status != prime.StatusRunning {
		return errorReply(http.StatusConflict, "Sandbox %s is %s; only a running VM sandbox can join a network", sb.id, describeStatus(sb))
	}
	if _, member := n.members[sb.id]; !member {
		n.memberOrder = append(n.memberOrder, sb.id)
	}
	tags := slices.Clone(req.Tags)
	if tags == nil {
		tags = []string{}
	}
	n.members[sb.id], n.updatedAt = tags, s.now()
	s.emit(Event{Type: EventNetworkMemberPut, SandboxID: sb.id, NetworkID: n.id, Tags: slices.Clone(tags)})
	return ok(s.wireNetwork(n))
}

func (s *Server) handleRemoveMember(r *http.Request, caller string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, rep, found := s.networkOf(r, caller)
	if !found {
		return rep
	}
	id := r.PathValue("sandbox_id")
	if _, member := n.members[id]; !member {
		return errorReply(http.StatusNotFound, "Sandbox %s is not a member of network %s", id, n.id)
	}
	delete(n.members, id)
	n.memberOrder = slices.DeleteFunc(n.memberOrder, func(m string) bool { return m == id })
	n.updatedAt = s.now()
	s.emit(Event{Type: EventNetworkMemberGone, SandboxID: id, NetworkID: n.id})
	return noContent()
}

// peerReach decides whether from may open a TCP connection to the sandbox
// peerID on port: both RUNNING members of one network whose rules allow
// it. It returns the network that allows it, or why not.
func (s *Server) peerReach(from *sandbox, peerID string, port int) (allowed bool, networkID, why string) {
	to := s.sandboxes[peerID]
	switch {
	case from.status != prime.StatusRunning:
		return false, "", "the source is " + from.status
	case to == nil:
		return false, "", "no sandbox " + peerID
	case to.status != prime.StatusRunning:
		return false, "", "the peer is " + to.status
	}
	common := false
	for _, n := range s.res.netOrder {
		fromTags, a := n.members[from.id]
		toTags, b := n.members[to.id]
		if !a || !b {
			continue
		}
		common = true
		if n.allowAll || rulesAllow(n.rules, fromTags, toTags, port) {
			return true, n.id, ""
		}
	}
	if !common {
		return false, "", "they share no network"
	}
	return false, "", fmt.Sprintf("no rule of their networks lets it connect on port %d", port)
}

// rulesAllow is the mock's own reading of the rules: directed, allow-only;
// a rule matches when its from selector matches the source's tags, its to
// selector the peer's, and it lists the port.
func rulesAllow(rules []prime.NetworkRule, fromTags, toTags []string, port int) bool {
	matches := func(sel string, tags []string) bool {
		if sel == "*" {
			return true
		}
		tag, ok := strings.CutPrefix(sel, "tag:")
		return ok && slices.Contains(tags, tag)
	}
	for _, r := range rules {
		if matches(r.From, fromTags) && matches(r.To, toTags) && slices.Contains(r.Ports, port) {
			return true
		}
	}
	return false
}

// shellReach is the shell's reachability hook: a member address goes to the
// network (and is logged as network_connect), anything else to the egress
// policy.
func (s *Server) shellReach(sb *sandbox, host string) bool {
	peer, port, ok := shell.MemberAddress(host)
	if !ok {
		return s.reachable(sb, host)
	}
	allowed, netID, why := s.peerReach(sb, peer, port)
	s.emit(Event{Type: EventNetworkConnect, SandboxID: sb.id, Peer: peer, Port: port, NetworkID: netID, Allowed: allowed, Message: why})
	return allowed
}

// PeerReachable reports whether sandbox from can open a connection to
// sandbox to on port over their private networks, and why not.
func (s *Server) PeerReachable(from, to string, port int) (bool, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb := s.sandboxes[from]
	if sb == nil {
		return false, "no sandbox " + from
	}
	allowed, _, why := s.peerReach(sb, to, port)
	return allowed, why
}

// handleMockPeerReach serves GET /_mock/sandbox/{id}/peer?to=ID&port=N.
func (s *Server) handleMockPeerReach(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	port, err := strconv.Atoi(q.Get("port"))
	if err != nil || port < 1 || port > 65535 || q.Get("to") == "" {
		writeJSON(w, http.StatusUnprocessableEntity, detail("to (a sandbox id) and port (1-65535) are required"))
		return
	}
	s.mu.Lock()
	sb := s.sandboxes[r.PathValue("id")]
	if sb == nil {
		s.mu.Unlock()
		writeJSON(w, http.StatusNotFound, detail("Sandbox not found"))
		return
	}
	allowed, netID, why := s.peerReach(sb, q.Get("to"), port)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{
		"sandbox_id": sb.id, "to": q.Get("to"), "port": port, "reachable": allowed, "network_id": netID, "reason": why,
	})
}
