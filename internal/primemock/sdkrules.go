package primemock

// What the platform is known to enforce on egress entries and lists, written
// from the SDK's client-side mirror of the API contract (prime-sandboxes
// 0.2.39 models.py: _validate_egress_entry, validate_egress_lists,
// MAX_EGRESS_POLICY_ENTRIES). This file deliberately shares no code with the
// provider's grammar in internal/prime: the mock is a second, independent
// reading, so that a mistake in one is caught by the other (see
// differential_test.go).

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"net/netip"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// maxEgressEntries is the SDK's MAX_EGRESS_POLICY_ENTRIES: at most this many
// entries per list, duplicates counted.
const maxEgressEntries = 256

// pyIsSpace reports whether Python's str.isspace() is true for r, which is
// what str.strip() without arguments removes: the Unicode White_Space
// characters plus the information separators U+001C-U+001F, but not U+200B
// (zero width space) or U+FEFF.
func pyIsSpace(r rune) bool {
	switch {
	case r >= '\t' && r <= '\r', r >= 0x1C && r <= ' ':
		return true
	case r == 0x85, r == 0xA0, r == 0x1680, r >= 0x2000 && r <= 0x200A,
		r == 0x2028, r == 0x2029, r == 0x202F, r == 0x205F, r == 0x3000:
		return true
	}
	return false
}

// pyStrip is Python's str.strip().
func pyStrip(s string) string { return strings.TrimFunc(s, pyIsSpace) }

// pyIPv4 parses s the way Python's ipaddress.IPv4Address does: exactly four
// dot-separated octets of 1-3 ASCII digits, no leading zeros, each <= 255.
func pyIPv4(s string) (uint32, bool) {
	octets := strings.Split(s, ".")
	if len(octets) != 4 {
		return 0, false
	}
	var v uint32
	for _, o := range octets {
		if o == "" || len(o) > 3 || !asciiDigits(o) || (len(o) > 1 && o[0] == '0') {
			return 0, false
		}
		n, _ := strconv.Atoi(o)
		if n > 255 {
			return 0, false
		}
		v = v<<8 | uint32(n) //nolint:gosec // G115: n <= 255
	}
	return v, true
}

func asciiDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// pyIPv6 approximates Python's ipaddress.IPv6Address: no "/", an optional
// non-empty scope id after the first "%" without another "%", and an IPv6
// address (Go's parser) before it. Every string containing ':' is refused
// by the SDK whichever way this answers, so a difference in the address
// grammar could only change which message is given.
func pyIPv6(s string) bool {
	if strings.Contains(s, "/") {
		return false
	}
	addr, zone, hasZone := strings.Cut(s, "%")
	if hasZone && (zone == "" || strings.Contains(zone, "%")) {
		return false
	}
	a, err := netip.ParseAddr(addr)
	return err == nil && a.Is6() && a.Zone() == ""
}

// pyIPv4Network parses s the way Python's ipaddress.ip_network(s,
// strict=False) does for IPv4: one "/", a strict address, and a prefix that
// is either ASCII digits with a value 0-32 (leading zeros allowed) or a
// dotted netmask or hostmask. Host bits may be set; the result has them
// cleared.
func pyIPv4Network(s string) (addr uint32, prefix int, ok bool) {
	parts := strings.Split(s, "/")
	if len(parts) != 2 {
		return 0, 0, false
	}
	a, ok := pyIPv4(parts[0])
	if !ok {
		return 0, 0, false
	}
	p := parts[1]
	if asciiDigits(p) {
		t := strings.TrimLeft(p, "0")
		if len(t) > 2 {
			return 0, 0, false
		}
		n, _ := strconv.Atoi("0" + t)
		if n > 32 {
			return 0, 0, false
		}
		prefix = n
	} else {
		m, ok := pyIPv4(p)
		if !ok {
			return 0, 0, false
		}
		if prefix, ok = contiguousPrefix(m); !ok {
			if prefix, ok = contiguousPrefix(^m); !ok { // a hostmask
				return 0, 0, false
			}
		}
	}
	mask := uint32(0)
	if prefix > 0 {
		mask = ^uint32(0) << (32 - prefix)
	}
	return a & mask, prefix, true
}

// contiguousPrefix returns n when m is n one-bits followed by zero-bits.
func contiguousPrefix(m uint32) (int, bool) {
	n := bits.LeadingZeros32(^m)
	if m<<n != 0 {
		return 0, false
	}
	return n, true
}

// pyIPv6Network reports whether s would parse as a Python IPv6 network
// (only the message depends on it, as for pyIPv6).
func pyIPv6Network(s string) bool {
	addr, p, found := strings.Cut(s, "/")
	if !found || !pyIPv6(addr) || !asciiDigits(p) {
		return false
	}
	t := strings.TrimLeft(p, "0")
	if len(t) > 3 {
		return false
	}
	n, _ := strconv.Atoi("0" + t)
	return n <= 128
}

func ipv4String(a uint32) string {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], a)
	return netip.AddrFrom4(b).String()
}

// sdkEntryError is the SDK's ValueError for one entry. Its text follows the
// SDK's wording, quoting the entry as given (untrimmed) in single quotes.
type sdkEntryError struct{ msg string }

func (e *sdkEntryError) Error() string { return e.msg }

func entryErr(format string, args ...any) error { return &sdkEntryError{fmt.Sprintf(format, args...)} }

// checkEgressEntry is the SDK's _validate_egress_entry, step by step: the
// same verdict for every input, and the same messages.
func checkEgressEntry(entry string) error {
	value := pyStrip(entry)
	if value == "" {
		return entryErr("empty entry")
	}
	if _, ok := pyIPv4(value); ok {
		return nil
	}
	if pyIPv6(value) {
		return entryErr("'%s': IPv6 is not supported", entry)
	}
	if strings.Contains(value, "/") {
		if _, _, ok := pyIPv4Network(value); ok {
			return nil
		}
		if pyIPv6Network(value) {
			return entryErr("'%s': IPv6 is not supported", entry)
		}
		return entryErr("'%s' is not a valid IPv4 CIDR", entry)
	}
	for _, f := range []struct{ sub, reason string }{
		{"://", "schemes are not supported"},
		{"@", "credentials are not supported"},
		{":", "ports are not supported"},
		{"?", "query strings are not supported"},
	} {
		if strings.Contains(value, f.sub) {
			return entryErr("'%s': %s", entry, f.reason)
		}
	}
	domain := strings.TrimRight(strings.TrimPrefix(value, "*."), ".")
	if domain == "" {
		return entryErr("'%s': domain is empty", entry)
	}
	if strings.Contains(domain, "*") {
		return entryErr("'%s': wildcard is only supported as the leftmost label", entry)
	}
	for _, label := range strings.Split(domain, ".") {
		if label == "" {
			return entryErr("'%s' contains an empty label", entry)
		}
	}
	return nil
}

// checkEgressLists is the SDK's validate_egress_lists: at most one list,
// then per list the count (before any entry) and every entry, the first
// failure winning. Names are the create request's keys.
func checkEgressLists(allow, deny []string, allowSet, denySet bool) error {
	if allowSet && denySet {
		return fmt.Errorf("network_allowlist and network_denylist are mutually exclusive; provide at most one")
	}
	for _, l := range []struct {
		name    string
		entries []string
		set     bool
	}{{"network_allowlist", allow, allowSet}, {"network_denylist", deny, denySet}} {
		if !l.set {
			continue
		}
		if len(l.entries) > maxEgressEntries {
			return fmt.Errorf("%s supports at most %d entries", l.name, maxEgressEntries)
		}
		for _, e := range l.entries {
			if err := checkEgressEntry(e); err != nil {
				return fmt.Errorf("%s: %w", l.name, err)
			}
		}
	}
	return nil
}

// canonicalIDNA maps internationalised names to A-labels for storage. [I: idna-canonical]
// The profile (UTS #46 lookup mapping, non-transitional, without the STD3
// ASCII restrictions or the hyphen rules) is chosen to refuse as little as
// possible of what the SDK lets through: the platform is only known to
// "IDNA-encode".
var canonicalIDNA = idna.New(idna.MapForLookup(), idna.StrictDomainName(false),
	idna.CheckHyphens(false), idna.Transitional(false))

// canonicalEgressEntry is how the mock stores an entry the SDK accepts.
// [C: the SDK says the server canonicalises further: lowercase, IDNA, /32.]
// Everything beyond those three words is a guess:
//   - a strict IPv4 address becomes "a.b.c.d/32" [C];
//   - a CIDR is printed as Python's ip_network(v, strict=False) prints it:
//     host bits cleared, a prefix length even when a netmask was given [I: cidr-canonical];
//   - names are lowercased (ASCII) or IDNA-mapped to A-labels when they
//     contain anything else [C], and lose all trailing dots and the
//     whitespace those uncover [I: canonical-whitespace];
//   - "*." stays in front of a wildcard's canonical name;
//   - a name that is a strict IPv4 address once its trailing dots are gone or
//     IDNA has mapped it ("1.2.3.4.", fullwidth digits) is stored as that
//     address's /32 [I: name-as-ipv4];
//   - the result must itself be an entry the SDK accepts, of the same kind
//     (a name does not become a wildcard); otherwise, or when IDNA refuses
//     the name, the entry is refused [I: canonical-kind].
func canonicalEgressEntry(entry string) (string, error) {
	if err := checkEgressEntry(entry); err != nil {
		return "", err
	}
	value := pyStrip(entry)
	if a, ok := pyIPv4(value); ok {
		return ipv4String(a) + "/32", nil
	}
	if strings.Contains(value, "/") {
		a, p, _ := pyIPv4Network(value)
		return fmt.Sprintf("%s/%d", ipv4String(a), p), nil
	}
	wild := strings.HasPrefix(value, "*.")
	domain := value
	if wild {
		domain = domain[2:]
	}
	domain = trimName(domain)
	if isASCIIString(domain) {
		domain = strings.ToLower(domain)
	} else {
		mapped, err := canonicalIDNA.ToASCII(domain)
		if err != nil {
			return "", entryErr("'%s': not a valid internationalised domain name (%s)", entry, strings.TrimPrefix(err.Error(), "idna: "))
		}
		domain = trimName(mapped)
	}
	if a, ok := pyIPv4(domain); ok && !wild {
		return ipv4String(a) + "/32", nil
	}
	out := domain
	if wild {
		out = "*." + domain
	}
	if err := checkEgressEntry(out); err != nil || strings.Contains(out, "/") || (!wild && strings.Contains(out, "*")) {
		return "", entryErr("'%s': its canonical form %q is not an entry of the same kind", entry, out)
	}
	return out, nil
}

// trimName removes trailing dots and the whitespace they uncover ("a. ."),
// so that a canonical form is a fixed point.
func trimName(d string) string {
	for {
		t := pyStrip(strings.TrimRight(d, "."))
		if t == d {
			return d
		}
		d = t
	}
}

// canonicalEgressList canonicalises a list the SDK accepted, keeping the
// order and dropping later duplicates of a canonical form [I: canonical-duplicates: the
// platform treats a list as a set]. nil stays nil and [] stays [].
func canonicalEgressList(entries []string) ([]string, error) {
	if entries == nil {
		return nil, nil
	}
	out := make([]string, 0, len(entries))
	seen := make(map[string]bool, len(entries))
	for _, e := range entries {
		c, err := canonicalEgressEntry(e)
		if err != nil {
			return nil, err
		}
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out, nil
}

func isASCIIString(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// destination is a host a sandbox connects to, as the mock's matcher sees it:
// an IPv4 address or a name in canonical form.
type destination struct {
	ip     uint32
	isIP   bool
	name   string
	parsed bool
}

// parseDestination reads a host: a strict IPv4 address, or a name that is
// lowercased (IDNA-mapped when not ASCII) and loses one trailing dot. A host
// that is neither matches nothing.
func parseDestination(host string) destination {
	host = strings.TrimSpace(host)
	if a, ok := pyIPv4(host); ok {
		return destination{ip: a, isIP: true, parsed: true}
	}
	name := strings.TrimSuffix(host, ".")
	if isASCIIString(name) {
		name = strings.ToLower(name)
	} else if m, err := canonicalIDNA.ToASCII(name); err == nil {
		name = m
	} else {
		return destination{}
	}
	if name == "" || strings.ContainsAny(name, "/:@?*") {
		return destination{}
	}
	return destination{name: name, parsed: true}
}

// matchesDestination decides whether a stored (canonical) entry covers a
// destination. No DNS: names never match address entries or the reverse.
// "*.x" covers every name under x at any depth, not x itself.
func matchesDestination(entry string, d destination) bool {
	if !d.parsed {
		return false
	}
	if strings.Contains(entry, "/") {
		a, p, ok := pyIPv4Network(entry)
		if !ok || !d.isIP {
			return false
		}
		mask := uint32(0)
		if p > 0 {
			mask = ^uint32(0) << (32 - p)
		}
		return d.ip&mask == a
	}
	if d.isIP {
		return false
	}
	if rest, ok := strings.CutPrefix(entry, "*."); ok {
		return strings.HasSuffix(d.name, "."+rest)
	}
	return d.name == entry
}
