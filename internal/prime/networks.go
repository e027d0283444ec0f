package prime

// Private networks: running VM sandboxes of one owner that reach each other
// at <sandbox-id>.sandbox.internal over TCP under directed, allow-only
// rules. A member may open a connection when a rule's `from` selector
// matches its tags, the rule's `to` matches the peer's tags, and the port
// is listed; a selector is "*" (every member) or "tag:<name>". Bodies are
// snake_case. Only the request shapes and NetworkResponse's first keys (id,
// name) are published; the rest of the record is inferred [I].
//
// The published default for a network created without rules is
// contradictory (the API text: no member may reach another until PUT /rules
// allows it; the guide's example: every member reaches every other), so
// this client always sends rules, an empty list included.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// SelectorAll matches every member of a network.
const SelectorAll = "*"

// SelectorTagPrefix starts a tag selector, "tag:<name>".
const SelectorTagPrefix = "tag:"

// SandboxInternalDomain is the suffix of a member's address on its
// networks: <sandbox-id>.sandbox.internal.
const SandboxInternalDomain = "sandbox.internal"

// MemberHost is a sandbox's address on its private networks.
func MemberHost(sandboxID string) string { return sandboxID + "." + SandboxInternalDomain }

// tagPattern is what this client accepts as a tag [I: the platform's tag
// grammar is not published; this is the common label grammar, 1 to 63
// letters, digits, '-', '_' and '.', starting with a letter or digit].
var tagPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`)

// NetworkRule lets members matching From open TCP connections to members
// matching To on Ports.
type NetworkRule struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Ports []int  `json:"ports"`
}

// NetworkMember is one member with its tags [I: the member shape in
// NetworkResponse is not published].
type NetworkMember struct {
	SandboxID string   `json:"sandbox_id"`
	Tags      []string `json:"tags"`
}

// Network is a network with its rules and members.
type Network struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	TeamID    *string         `json:"team_id"`
	Rules     []NetworkRule   `json:"rules"`
	Members   []NetworkMember `json:"members"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
}

// UnmarshalJSON reads timestamps with or without a zone, and gives absent
// lists as empty ones.
func (n *Network) UnmarshalJSON(data []byte) error {
	type plain Network
	if err := decodeWithISOTimes(data, (*plain)(n)); err != nil {
		return err
	}
	if n.Rules == nil {
		n.Rules = []NetworkRule{}
	}
	if n.Members == nil {
		n.Members = []NetworkMember{}
	}
	return nil
}

// Member returns the member with sandbox id, if any.
func (n Network) Member(id string) (NetworkMember, bool) {
	for _, m := range n.Members {
		if m.SandboxID == id {
			return m, true
		}
	}
	return NetworkMember{}, false
}

// CreateNetworkRequest is the POST /sandbox/networks body. Rules is always
// sent ([] when there are none: see the package note on the default).
type CreateNetworkRequest struct {
	Name   string        `json:"name"`
	TeamID *string       `json:"team_id,omitempty"`
	Rules  []NetworkRule `json:"rules"`
}

// ReplaceRulesRequest is the PUT …/rules body: the whole rule set.
type ReplaceRulesRequest struct {
	Rules []NetworkRule `json:"rules"`
}

// PutMemberRequest is the PUT …/members/{sandbox_id} body.
type PutMemberRequest struct {
	Tags []string `json:"tags"`
}

// NetworkList is the list answer.
type NetworkList struct {
	Networks []Network `json:"networks"`
}

// ValidateSelector checks a rule selector: "*" or "tag:<name>".
func ValidateSelector(s string) error {
	if s == SelectorAll {
		return nil
	}
	tag, ok := strings.CutPrefix(s, SelectorTagPrefix)
	if !ok {
		return fmt.Errorf("selector %q: use %q (every member) or \"tag:<name>\"", s, SelectorAll)
	}
	if err := ValidateTag(tag); err != nil {
		return fmt.Errorf("selector %q: %w", s, err)
	}
	return nil
}

// ValidateTag checks one member tag.
func ValidateTag(tag string) error {
	if !tagPattern.MatchString(tag) {
		return fmt.Errorf("tag %q: use 1 to 63 letters, digits, '-', '_' and '.', starting with a letter or digit", tag)
	}
	return nil
}

// ValidateNetworkRules checks a rule set: valid selectors, and at least one
// port per rule, each 1 to 65535 [I: what an empty port list means, and the
// bounds, are not published; refusing an empty list keeps "all ports" from
// being granted by accident].
func ValidateNetworkRules(rules []NetworkRule) error {
	for i, r := range rules {
		for _, sel := range []struct{ name, v string }{{"from", r.From}, {"to", r.To}} {
			if err := ValidateSelector(sel.v); err != nil {
				return fmt.Errorf("%w: rule %d: %s: %w", ErrInvalidRequest, i+1, sel.name, err)
			}
		}
		if err := ValidateRulePorts(r.Ports); err != nil {
			return fmt.Errorf("%w: rule %d: %w", ErrInvalidRequest, i+1, err)
		}
	}
	return nil
}

// ValidateRulePorts checks one rule's ports: at least one, each 1 to 65535
// [I: see ValidateNetworkRules].
func ValidateRulePorts(ports []int) error {
	if len(ports) == 0 {
		return errors.New("ports must list at least one port: what an empty list grants is not published, so it is refused rather than taken as every port")
	}
	for _, p := range ports {
		if p < 1 || p > 65535 {
			return fmt.Errorf("port %d is not between 1 and 65535", p)
		}
	}
	return nil
}

// RuleAllows evaluates rules as the platform describes them: a connection
// from a member with fromTags to one with toTags on port is allowed when
// any rule matches all three. The mock has its own reading; this one is
// for callers that explain a plan.
func RuleAllows(rules []NetworkRule, fromTags, toTags []string, port int) bool {
	for _, r := range rules {
		if selectorMatches(r.From, fromTags) && selectorMatches(r.To, toTags) && slices.Contains(r.Ports, port) {
			return true
		}
	}
	return false
}

func selectorMatches(sel string, tags []string) bool {
	if sel == SelectorAll {
		return true
	}
	tag, ok := strings.CutPrefix(sel, SelectorTagPrefix)
	if !ok {
		return false
	}
	return slices.Contains(tags, tag)
}

func networkPath(id string) string { return "/sandbox/networks/" + url.PathEscape(id) }

// CreateNetwork creates a network (201) with exactly the given rules (nil
// is sent as []). The configured team is used when the request names none.
// A create is not retried once it may have reached the server: no
// idempotency key is published for it.
func (c *Client) CreateNetwork(ctx context.Context, req CreateNetworkRequest) (*Network, error) {
	if req.Name == "" {
		return nil, fmt.Errorf("%w: a network needs a name", ErrInvalidRequest)
	}
	if req.Rules == nil {
		req.Rules = []NetworkRule{}
	}
	if err := ValidateNetworkRules(req.Rules); err != nil {
		return nil, err
	}
	if req.TeamID == nil && c.cfg.TeamID != nil && *c.cfg.TeamID != "" {
		team := *c.cfg.TeamID
		req.TeamID = &team
	}
	var out Network
	if err := c.do(ctx, call{method: http.MethodPost, path: "/sandbox/networks", body: req, out: &out, retry: retryUnsent}); err != nil {
		return nil, err
	}
	if out.ID == "" {
		return nil, fmt.Errorf("POST /sandbox/networks: the answer has no network id")
	}
	return &out, nil
}

// GetNetwork reads a network with its rules and members. Unknown wraps
// ErrNotFound.
func (c *Client) GetNetwork(ctx context.Context, id string) (*Network, error) {
	var out Network
	if err := c.do(ctx, call{method: http.MethodGet, path: networkPath(id), out: &out, retry: retryIdempotent}); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListNetworks lists the caller's personal networks, or team's (empty: the
// configured team, or the caller's own).
func (c *Client) ListNetworks(ctx context.Context, team string) ([]Network, error) {
	var q url.Values
	if team = c.teamOr(team); team != "" {
		q = url.Values{"team_id": {team}}
	}
	var out NetworkList
	if err := c.do(ctx, call{method: http.MethodGet, path: "/sandbox/networks", query: q, out: &out, retry: retryIdempotent}); err != nil {
		return nil, err
	}
	if out.Networks == nil {
		out.Networks = []Network{}
	}
	return out.Networks, nil
}

// DeleteNetwork deletes a network (204, no body); its members stop
// reaching each other. Unknown wraps ErrNotFound.
func (c *Client) DeleteNetwork(ctx context.Context, id string) error {
	return c.do(ctx, call{method: http.MethodDelete, path: networkPath(id), retry: retryIdempotent})
}

// ReplaceNetworkRules replaces a network's whole rule set (nil is sent as
// [], which allows nothing).
func (c *Client) ReplaceNetworkRules(ctx context.Context, id string, rules []NetworkRule) error {
	if rules == nil {
		rules = []NetworkRule{}
	}
	if err := ValidateNetworkRules(rules); err != nil {
		return err
	}
	return c.do(ctx, call{method: http.MethodPut, path: networkPath(id) + "/rules", body: ReplaceRulesRequest{Rules: rules}, retry: retryIdempotent})
}

// PutNetworkMember adds a running VM sandbox to a network, or replaces its
// tags (nil is sent as []).
func (c *Client) PutNetworkMember(ctx context.Context, networkID, sandboxID string, tags []string) error {
	if tags == nil {
		tags = []string{}
	}
	for _, t := range tags {
		if err := ValidateTag(t); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidRequest, err)
		}
	}
	p := networkPath(networkID) + "/members/" + url.PathEscape(sandboxID)
	return c.do(ctx, call{method: http.MethodPut, path: p, body: PutMemberRequest{Tags: tags}, retry: retryIdempotent})
}

// RemoveNetworkMember takes a sandbox off a network (204). Unknown wraps
// ErrNotFound; callers that only want it off treat that as success.
func (c *Client) RemoveNetworkMember(ctx context.Context, networkID, sandboxID string) error {
	p := networkPath(networkID) + "/members/" + url.PathEscape(sandboxID)
	return c.do(ctx, call{method: http.MethodDelete, path: p, retry: retryIdempotent})
}
