package prime

// The egress grammar: the one definition of what an allow/block entry may be.
// Used by the provider's plan-time validators, by the mock's server-side checks
// and by the client before a PUT. The SDK's own check (_validate_egress_entry
// in prime-sandboxes) is looser; this one is deliberately stricter
// (see ParseEgressEntry).

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxEgressEntries is the platform's limit on entries in one list (the SDK's
// MAX_EGRESS_POLICY_ENTRIES). Duplicates count.
const MaxEgressEntries = 256

// EgressEntryKind says which form of the grammar an entry matched.
type EgressEntryKind int

const (
	// EgressHostname is an exact DNS name such as "api.example.com".
	EgressHostname EgressEntryKind = iota + 1
	// EgressWildcard is "*.example.com": every name under example.com, at any
	// depth, but not example.com itself.
	EgressWildcard
	// EgressIPv4 is a strict dotted-quad address; canonically its /32.
	EgressIPv4
	// EgressCIDR is an IPv4 network "a.b.c.d/n", 0 <= n <= 32.
	EgressCIDR
)

// EgressEntry is a parsed, valid entry.
type EgressEntry struct {
	// Raw is the entry exactly as given.
	Raw  string
	Kind EgressEntryKind
	// Domain is the canonical (lowercase, A-label, no trailing dot) name for
	// hostnames, and the name under the "*." for wildcards. Empty for IPs.
	Domain string
	// Prefix is the masked network for IPv4 and CIDR entries (a bare address
	// is its /32). Zero for names.
	Prefix netip.Prefix
}

// ErrInvalidEgressEntry is wrapped by every entry validation error.
var ErrInvalidEgressEntry = errors.New("invalid egress entry")

// Limits of a DNS name in its A-label (wire) form, RFC 1035 §2.3.4 and
// RFC 1123 §2.1; the name limit excludes the root's trailing dot.
const (
	maxLabelOctets = 63
	maxNameOctets  = 253
)

// maxRawEntryBytes bounds the input handed to IDNA processing, whose punycode
// step is quadratic in the label length. No valid entry comes close: even
// decomposed Hangul (9 UTF-8 bytes per A-label octet) stays under 2,300 bytes.
const maxRawEntryBytes = 4096

// egressEntryError is the error for one refused entry. Error() is a single
// line: the original entry quoted with %q (which also makes invisible and
// control characters visible as escapes) followed by the reason.
type egressEntryError struct {
	entry  string
	reason string
}

func (e *egressEntryError) Error() string { return fmt.Sprintf("%q: %s", e.entry, e.reason) }

func (e *egressEntryError) Unwrap() error { return ErrInvalidEgressEntry }

// invalid returns the zero entry and the error refusing entry for a reason.
func invalid(entry, format string, args ...any) (EgressEntry, error) {
	return EgressEntry{}, &egressEntryError{entry: entry, reason: fmt.Sprintf(format, args...)}
}

const badCharReason = "character %q is not allowed in a hostname (only letters, digits, hyphens and dots)"

// ParseEgressEntry validates one entry and returns its parsed form. The error,
// if any, is one line that quotes the entry and says why it is refused.
//
// The grammar accepts, after trimming outer whitespace the way Python's
// str.strip() does (as the SDK does):
//
//   - an exact hostname: RFC 1123 labels of 1-63 octets, at most 253 octets in
//     all, one optional trailing dot, any case; internationalised names are
//     converted to A-labels with the IDNA (UTS #46) lookup profile;
//   - "*." followed by such a hostname (a wildcard for every name under it);
//   - a strict dotted-quad IPv4 address (four 0-255 decimal parts without
//     leading zeros);
//   - an IPv4 CIDR "a.b.c.d/n" with 0 <= n <= 32 in plain decimal; host bits
//     may be set and are cleared in the canonical form.
//
// Everything the SDK refuses is refused, and so is much that the SDK lets
// through by accident: inner whitespace, control and invisible characters,
// punctuation and underscores, over-long labels and names, dotted numbers that
// are not strict IPv4 addresses, wildcards over IP addresses, several trailing
// dots, and netmask or zero-padded CIDR prefixes.
func ParseEgressEntry(entry string) (EgressEntry, error) {
	reject := func(format string, args ...any) (EgressEntry, error) { return invalid(entry, format, args...) }

	v := strings.TrimFunc(entry, isPythonSpace)
	if v == "" {
		return reject("empty entry")
	}
	if !utf8.ValidString(v) {
		return reject("not valid UTF-8")
	}
	if len(v) > maxRawEntryBytes {
		return reject("entry is too long (%d bytes; a hostname has at most %d octets)", len(v), maxNameOctets)
	}
	// Characters that are wrong anywhere come first, so that the reason names
	// the real problem rather than a structural symptom of it.
	for _, r := range v {
		switch {
		case isPythonSpace(r):
			return reject("inner whitespace is not allowed")
		case unicode.IsControl(r):
			return reject("control character %U is not allowed", r)
		case isInvisible(r):
			return reject("invisible or format character %U is not allowed", r)
		}
	}

	if looksLikeIPv6(v) {
		return reject("IPv6 is not supported")
	}
	if strings.Contains(v, "/") {
		return parseCIDR(entry, v)
	}
	if addr, ok := parseStrictIPv4(v); ok {
		return EgressEntry{Raw: entry, Kind: EgressIPv4, Prefix: netip.PrefixFrom(addr, 32)}, nil
	}

	// The SDK's forbidden substrings, in its order and close to its wording.
	switch {
	case strings.Contains(v, "@"):
		return reject("credentials are not supported (remove the \"user@\" part)")
	case strings.Contains(v, ":"):
		return reject("ports are not supported; use the bare hostname")
	case strings.Contains(v, "?"):
		return reject("query strings are not supported")
	}

	kind, domain := EgressHostname, v
	if rest, ok := strings.CutPrefix(v, "*."); ok {
		kind, domain = EgressWildcard, rest
	}
	if strings.Trim(domain, ".") == "" {
		return reject("domain is empty")
	}
	if strings.HasSuffix(domain, "..") {
		return reject("more than one trailing dot is not allowed")
	}
	domain, hadDot := strings.CutSuffix(domain, ".")
	if strings.Contains(domain, "*") {
		if v == "*" {
			return reject(`a lone "*" is not an entry; a wildcard is written "*.example.com"`)
		}
		return reject(`wildcard is only supported as the leftmost label ("*.example.com")`)
	}
	domain = asciiLower(domain)

	// Structural checks on the name as written, before IDNA mapping, so that
	// the common mistakes get precise reasons instead of an IDNA error.
	for _, r := range domain {
		if r < utf8.RuneSelf && !isLDH(byte(r)) && r != '.' { //nolint:gosec // G115: r < utf8.RuneSelf fits in a byte
			return reject(badCharReason, string(r))
		}
	}
	for _, label := range strings.Split(domain, ".") {
		if reason := checkLabelShape(label); reason != "" {
			return reject("%s", reason)
		}
		// An ASCII "xn--" label must be valid punycode of a valid U-label;
		// checked per label so the reason can name the culprit.
		if strings.HasPrefix(label, "xn--") && isASCII(label) {
			if _, err := hostnameIDNA.ToASCII(label); err != nil {
				return reject("label %q is not a valid IDNA A-label (\"xn--\" punycode)", label)
			}
		}
	}

	name, err := hostnameIDNA.ToASCII(domain)
	if err != nil {
		return reject("not a valid internationalised hostname (%s)", strings.TrimPrefix(err.Error(), "idna: "))
	}
	// Mapping can introduce dots (U+3002 and U+FF0E map to "."), so the
	// structure is checked again on the A-label form, which is authoritative.
	if strings.Trim(name, ".") == "" {
		return reject("domain is empty")
	}
	trimmed := strings.TrimRight(name, ".")
	if len(name)-len(trimmed)+boolInt(hadDot) > 1 {
		return reject("more than one trailing dot is not allowed")
	}
	name = trimmed
	labels := strings.Split(name, ".")
	for _, label := range labels {
		for i := 0; i < len(label); i++ {
			if !isLDH(label[i]) {
				return reject(badCharReason, string(label[i]))
			}
		}
		if reason := checkLabelShape(label); reason != "" {
			return reject("%s", reason)
		}
		if len(label) > maxLabelOctets {
			return reject("label %q is %d octets long; at most %d are allowed", shorten(label), len(label), maxLabelOctets)
		}
	}
	// A wildcard counts as one more label: "*." + name must itself be a valid
	// name length, or the wildcard could not match any host at all.
	if full := len(name) + 2*boolInt(kind == EgressWildcard); full > maxNameOctets {
		return reject("name is %d octets long in A-label form; at most %d are allowed", full, maxNameOctets)
	}
	// A name ending in a numeric label is what resolvers and URL parsers
	// (WHATWG's "ends in a number") read as an IPv4 address, so it is an
	// IPv4 attempt that failed the strict check above, not a hostname.
	if isNumericLabel(labels[len(labels)-1]) {
		if kind == EgressWildcard {
			return reject("a wildcard cannot cover an IP address (use a CIDR for a range of addresses)")
		}
		return reject("%s", ipv4AttemptReason(v, name, hadDot))
	}
	return EgressEntry{Raw: entry, Kind: kind, Domain: name}, nil
}

// parseCIDR handles every trimmed value v that contains a "/": IPv4 CIDRs are
// accepted, everything else (URLs, paths, malformed prefixes) is refused.
func parseCIDR(entry, v string) (EgressEntry, error) {
	reject := func(format string, args ...any) (EgressEntry, error) { return invalid(entry, format, args...) }
	if strings.Contains(v, "://") {
		// Suggest the URL's host when it is itself a valid entry.
		if u, err := url.Parse(v); err == nil && u.Hostname() != "" {
			if c, err := CanonicalEgressEntry(u.Hostname()); err == nil {
				return reject("URLs are not supported; use the bare hostname %q", strings.TrimSuffix(c, "/32"))
			}
		}
		return reject("URLs are not supported; use the bare hostname")
	}
	addrPart, bits, _ := strings.Cut(v, "/")
	addr, ok := parseStrictIPv4(addrPart)
	if !ok {
		switch {
		case addrPart == "":
			return reject("not a valid IPv4 CIDR (the address before \"/\" is missing)")
		case isNumericName(addrPart):
			return reject("not a valid IPv4 CIDR (the address must be a dotted quad with each part 0-255 without leading zeros)")
		case strings.ContainsFunc(addrPart, func(r rune) bool { return r == '*' || unicode.IsLetter(r) }):
			return reject("URLs and paths are not supported; use the bare hostname")
		default:
			return reject("not a valid IPv4 CIDR")
		}
	}
	switch {
	case bits == "":
		return reject("not a valid IPv4 CIDR (the prefix length after \"/\" is empty)")
	case strings.Contains(bits, "/"):
		return reject("not a valid IPv4 CIDR (more than one \"/\")")
	case strings.Contains(bits, "."):
		if n, ok := maskBits(bits); ok {
			return reject("netmask notation is not supported; use a prefix length (/%d)", n)
		}
		return reject("netmask notation is not supported; use a prefix length such as /24")
	case !isDigits(bits):
		return reject("not a valid IPv4 CIDR (the prefix length must be a decimal number 0-32)")
	case len(bits) > 1 && bits[0] == '0':
		n := strings.TrimLeft(bits, "0")
		if n == "" {
			n = "0"
		}
		return reject("not a valid IPv4 CIDR (the prefix length must not have leading zeros; use /%s)", n)
	}
	n, err := strconv.Atoi(bits)
	if err != nil || n > 32 {
		return reject("not a valid IPv4 CIDR (the prefix length must be 0-32, got /%s)", shorten(bits))
	}
	return EgressEntry{Raw: entry, Kind: EgressCIDR, Prefix: netip.PrefixFrom(addr, n).Masked()}, nil
}

// Canonical is the entry's canonical string: lowercase A-label names without a
// trailing dot, "*." + domain for wildcards, and "a.b.c.d/n" with host bits
// cleared for every IPv4 form (a bare address becomes its /32). The zero
// EgressEntry has the empty string.
func (e EgressEntry) Canonical() string {
	switch e.Kind {
	case EgressHostname:
		return e.Domain
	case EgressWildcard:
		return "*." + e.Domain
	case EgressIPv4, EgressCIDR:
		return e.Prefix.Masked().String()
	}
	return ""
}

// CanonicalEgressEntry validates entry and returns its canonical string.
func CanonicalEgressEntry(entry string) (string, error) {
	e, err := ParseEgressEntry(entry)
	if err != nil {
		return "", err
	}
	return e.Canonical(), nil
}

// EgressEntriesEqual reports whether two entries mean the same destination
// (equal canonical forms). Invalid entries are equal only when identical.
func EgressEntriesEqual(a, b string) bool {
	if a == b {
		return true
	}
	ca, errA := CanonicalEgressEntry(a)
	cb, errB := CanonicalEgressEntry(b)
	return errA == nil && errB == nil && ca == cb
}

// MatchesHost reports whether the entry covers a destination host (a DNS name
// or a dotted-quad IPv4 address). Rules: a hostname entry matches that name
// only; "*.x" matches names under x at any depth but not x itself; IPv4 and
// CIDR entries match IPv4 hosts inside the network. Names never match IP
// entries and vice versa (no DNS resolution). The host is canonicalised with
// the entry grammar (so case and one trailing dot do not matter); a host that
// is not a valid name or strict IPv4 address matches nothing.
func (e EgressEntry) MatchesHost(host string) bool {
	h, err := ParseEgressEntry(host)
	if err != nil {
		return false
	}
	switch e.Kind {
	case EgressHostname:
		return h.Kind == EgressHostname && h.Domain == e.Domain
	case EgressWildcard:
		return h.Kind == EgressHostname && strings.HasSuffix(h.Domain, "."+e.Domain)
	case EgressIPv4, EgressCIDR:
		return h.Kind == EgressIPv4 && e.Prefix.Contains(h.Prefix.Addr())
	}
	return false
}

// ValidateEgressList checks a whole list the way the platform does: the count
// first (at most MaxEgressEntries, duplicates counted), then every entry. The
// error names the list, e.g. `allowlist: "a b.com": ...`. All invalid entries
// are reported, joined with errors.Join, so a user fixes them in one pass.
// Entry errors wrap ErrInvalidEgressEntry; the count error does not.
func ValidateEgressList(listName string, entries []string) error {
	prefix := ""
	if listName != "" {
		prefix = listName + ": "
	}
	if len(entries) > MaxEgressEntries {
		return fmt.Errorf("%sat most %d entries are supported, got %d", prefix, MaxEgressEntries, len(entries))
	}
	var errs []error
	for _, entry := range entries {
		if _, err := ParseEgressEntry(entry); err != nil {
			errs = append(errs, fmt.Errorf("%s%w", prefix, err))
		}
	}
	return errors.Join(errs...)
}

// CanonicalEgressList validates entries and returns their canonical strings,
// deduplicated (first occurrence wins), in their original order. A nil list
// stays nil and an empty one stays empty, because the platform gives null and
// [] different meanings. The count limit is ValidateEgressList's business.
func CanonicalEgressList(entries []string) ([]string, error) {
	if entries == nil {
		return nil, nil
	}
	out := make([]string, 0, len(entries))
	seen := make(map[string]bool, len(entries))
	var errs []error
	for _, entry := range entries {
		c, err := CanonicalEgressEntry(entry)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}
