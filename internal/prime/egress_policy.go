package prime

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// EgressPolicySpec is what a user declares: exactly one of Allow and Block
// (a nil slice is unset; an empty one is meaningful), plus framework routes
// (URLs) whose hosts must stay reachable in allow mode.
type EgressPolicySpec struct {
	Allow  []string
	Block  []string
	Routes []string
}

// FindingSeverity is an error (the plan fails) or a warning.
type FindingSeverity int

const (
	FindingError FindingSeverity = iota + 1
	FindingWarning
)

// Finding is one problem with a spec, attached to an attribute ("allow",
// "block" or "routes") and, when it concerns one, an entry.
type Finding struct {
	Severity  FindingSeverity
	Attribute string
	Entry     string
	Message   string
}

func (f Finding) String() string { return f.Attribute + ": " + f.Message }

// ComposeEgressPolicy turns a spec into the PUT body the platform gets and
// reports every problem found on the way. It is the single place where the
// provider's policy semantics live:
//
//   - allow mode: allowlist = route hosts, then allow entries, canonical and
//     deduplicated; denylist null. An empty result denies all egress.
//   - block mode: denylist = block entries, canonical and deduplicated;
//     allowlist null. Route hosts are not added, and a block entry that
//     matches a route host is an error (it would cut the framework off).
//
// Errors: invalid entries (with guidance for a lone "*"), invalid routes
// (not http(s), no host, IPv6), more than MaxEgressEntries entries to send,
// both or neither of allow/block. Warnings: a "*.x" entry without "x"
// itself (wildcards do not cover the apex), and entries that duplicate
// another after canonicalisation (sent once). The policy is meaningful only
// when no error was found.
func ComposeEgressPolicy(spec EgressPolicySpec) (EgressPolicy, []Finding) {
	var findings []Finding
	errf := func(attr, entry, format string, args ...any) {
		findings = append(findings, Finding{Severity: FindingError, Attribute: attr, Entry: entry, Message: fmt.Sprintf(format, args...)})
	}
	warnf := func(attr, entry, format string, args ...any) {
		findings = append(findings, Finding{Severity: FindingWarning, Attribute: attr, Entry: entry, Message: fmt.Sprintf(format, args...)})
	}

	switch {
	case spec.Allow == nil && spec.Block == nil:
		errf("allow", "", "exactly one of allow and block must be set (allow = [] denies all egress except the routes)")
		return EgressPolicy{}, findings
	case spec.Allow != nil && spec.Block != nil:
		errf("allow", "", "allow and block are mutually exclusive; set only one")
		return EgressPolicy{}, findings
	}

	routeHosts := routeHostEntries(spec.Routes, errf)

	attr, entries := "allow", spec.Allow
	if spec.Block != nil {
		attr, entries = "block", spec.Block
	}
	parsed := make([]EgressEntry, 0, len(entries))
	for _, raw := range entries {
		e, err := ParseEgressEntry(raw)
		if err != nil {
			if strings.TrimSpace(raw) == "*" {
				errf(attr, raw, "%q is not an entry. To deny all egress except the routes, use allow = []; "+
					"to leave egress open, use block = [] or no prime_egress_policy at all", raw)
				continue
			}
			errf(attr, raw, "%s", err.Error())
			continue
		}
		parsed = append(parsed, e)
	}

	var list []string
	seen := map[string]string{} // canonical -> first raw spelling
	add := func(attr string, e EgressEntry) {
		c := e.Canonical()
		if first, dup := seen[c]; dup {
			if attr != "routes" && first != "" {
				warnf(attr, e.Raw, "%q is the same destination as %q after canonicalisation (%s); it is sent once", e.Raw, first, c)
			}
			return
		}
		seen[c] = e.Raw
		list = append(list, c)
	}

	if spec.Allow != nil {
		for _, h := range routeHosts {
			c := h.Canonical()
			if _, dup := seen[c]; !dup {
				seen[c] = "" // a route host repeated in allow is not worth a warning
				list = append(list, c)
			}
		}
		for _, e := range parsed {
			add(attr, e)
		}
	} else {
		for _, e := range parsed {
			add(attr, e)
			for _, h := range routeHosts {
				if e.MatchesHost(hostOf(h)) {
					errf("block", e.Raw, "%q blocks the framework route host %s (from routes); remove the entry or the route", e.Raw, hostOf(h))
				}
			}
		}
	}
	warnUncoveredApex(attr, parsed, seen, warnf)

	if len(list) > MaxEgressEntries {
		detail := ""
		if len(routeHosts) > 0 && spec.Allow != nil {
			detail = " (route hosts included)"
		}
		errf(attr, "", "the policy would send %d entries%s; the platform accepts at most %d", len(list), detail, MaxEgressEntries)
	}
	if list == nil {
		list = []string{}
	}
	if spec.Allow != nil {
		return EgressPolicy{Allowlist: list}, findings
	}
	return EgressPolicy{Denylist: list}, findings
}

// hostOf returns the host an IP or hostname entry stands for.
func hostOf(e EgressEntry) string {
	if e.Kind == EgressIPv4 || e.Kind == EgressCIDR {
		return e.Prefix.Addr().String()
	}
	return e.Domain
}

// routeHostEntries parses route URLs and returns their hosts as entries, in
// order. Route problems are reported through errf.
func routeHostEntries(routes []string, errf func(attr, entry, format string, args ...any)) []EgressEntry {
	var out []EgressEntry
	for _, r := range routes {
		u, err := url.Parse(strings.TrimSpace(r))
		switch {
		case err != nil:
			errf("routes", r, "%q is not a valid URL: %v", r, err)
			continue
		case u.Scheme != "http" && u.Scheme != "https":
			errf("routes", r, "%q must be an http:// or https:// URL", r)
			continue
		case u.Hostname() == "":
			errf("routes", r, "%q has no host", r)
			continue
		case strings.Contains(u.Hostname(), ":"):
			errf("routes", r, "%q has an IPv6 host; the platform's egress policies are IPv4-only", r)
			continue
		}
		e, err := ParseEgressEntry(u.Hostname())
		if err != nil {
			errf("routes", r, "the host of %q is not a valid egress entry: %v", r, err)
			continue
		}
		out = append(out, e)
	}
	return out
}

// warnUncoveredApex warns about "*.x" without "x": a wildcard never covers
// its apex, which surprises people who expect *.example.com to include
// example.com.
func warnUncoveredApex(attr string, entries []EgressEntry, canon map[string]string, warnf func(attr, entry, format string, args ...any)) {
	for _, e := range entries {
		if e.Kind != EgressWildcard {
			continue
		}
		if _, ok := canon[e.Domain]; ok {
			continue
		}
		verb := "allow"
		if attr == "block" {
			verb = "block"
		}
		warnf(attr, e.Raw, "%q does not %s %s itself (a wildcard matches names under it, not the apex); add %q if that is intended",
			e.Raw, verb, e.Domain, e.Domain)
	}
}

// CanonicalListsEqual reports whether two lists hold the same destinations,
// ignoring order, spelling and duplicates. A nil list equals only nil: unset
// and empty mean different things on the platform.
func CanonicalListsEqual(a, b []string) bool {
	if (a == nil) != (b == nil) {
		return false
	}
	ca, errA := canonicalSet(a)
	cb, errB := canonicalSet(b)
	if errA != nil || errB != nil {
		return false
	}
	if len(ca) != len(cb) {
		return false
	}
	for k := range ca {
		if !cb[k] {
			return false
		}
	}
	return true
}

func canonicalSet(list []string) (map[string]bool, error) {
	out := make(map[string]bool, len(list))
	for _, raw := range list {
		c, err := CanonicalEgressEntry(raw)
		if err != nil {
			return nil, err
		}
		out[c] = true
	}
	return out, nil
}

// SamePolicy reports whether two policies mean the same thing. Both open
// forms (denylist [] and both lists null) are the same.
func SamePolicy(a, b EgressPolicy) bool {
	if a.IsOpen() && b.IsOpen() {
		return true
	}
	return CanonicalListsEqual(a.Allowlist, b.Allowlist) && CanonicalListsEqual(a.Denylist, b.Denylist)
}

// Digest names what a policy lets through, as lowercase hex SHA-256: of
// "open" for an unrestricted policy, else of "allow" or "block" and the
// canonical entries, sorted and deduplicated, one per line. Two policies
// have the same digest exactly when SamePolicy holds, however their entries
// are spelled or ordered, so the digest of the lists a configuration sends
// (effective_allow/effective_block) equals the digest of what the platform
// reports back, and a run's record can name its lists in one value.
// Entries that are not valid are taken as written.
func (p EgressPolicy) Digest() string {
	text := "open"
	if !p.IsOpen() {
		mode, list := "block", p.Denylist
		if p.Allowlist != nil {
			mode, list = "allow", p.Allowlist
		}
		entries := make([]string, 0, len(list))
		seen := map[string]bool{}
		for _, raw := range list {
			c, err := CanonicalEgressEntry(raw)
			if err != nil {
				c = raw
			}
			if !seen[c] {
				seen[c] = true
				entries = append(entries, c)
			}
		}
		sort.Strings(entries)
		text = mode + "\n" + strings.Join(entries, "\n")
	}
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}
