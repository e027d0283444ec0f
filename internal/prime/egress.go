package prime

// The egress grammar: the one definition of what an allow/block entry may be.
// Used by the provider's plan-time validators, by the mock's server-side checks
// and by the client before a PUT. The SDK's own check (_validate_egress_entry
// in prime-sandboxes) is looser; this one is deliberately stricter
// (see ParseEgressEntry).

import (
	"errors"
	"fmt"
	"math/bits"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"
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

// isPythonSpace reports whether Python's str.strip() would remove r: the
// characters for which str.isspace() is true. Unlike unicode.IsSpace it
// includes the information separators U+001C-U+001F.
func isPythonSpace(r rune) bool {
	switch {
	case r >= 0x09 && r <= 0x0D, r >= 0x1C && r <= 0x20, r == 0x85, r == 0xA0,
		r == 0x1680, r >= 0x2000 && r <= 0x200A, r == 0x2028, r == 0x2029,
		r == 0x202F, r == 0x205F, r == 0x3000:
		return true
	}
	return false
}

// isInvisible reports format characters (category Cf: zero-width space and
// joiners, soft hyphen, BOM, bidi controls, ...) and other default-ignorable
// code points such as variation selectors and Hangul fillers. IDNA mapping
// silently drops several of them, so a name could look like one host and
// resolve as another; refusing them keeps what the user sees what is sent.
func isInvisible(r rune) bool {
	return unicode.Is(unicode.Cf, r) ||
		unicode.Is(unicode.Variation_Selector, r) ||
		unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r)
}

// looksLikeIPv6 reports whether v is an IPv6 address or network in any of the
// forms a user might write: plain, with a zone ("fe80::1%eth0"), bracketed
// ("[::1]", "[::1]:443"), with a prefix ("2001:db8::/32"), or something made
// only of hex digits, colons and dots with at least two colons (a mistyped
// address such as "2001:db8:::1", which deserves this reason, not "ports").
func looksLikeIPv6(v string) bool {
	s := v
	if strings.HasPrefix(s, "[") {
		if end := strings.Index(s, "]"); end > 0 {
			s = s[1:end]
		}
	}
	s, _, _ = strings.Cut(s, "/")
	if a, err := netip.ParseAddr(s); err == nil && a.Is6() {
		return true
	}
	s, _, _ = strings.Cut(s, "%")
	if strings.Count(s, ":") < 2 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != ':' && c != '.' && !isHexDigit(c) {
			return false
		}
	}
	return true
}

// parseStrictIPv4 parses a dotted quad the way Python's ipaddress does:
// exactly four parts of 1-3 ASCII digits, each at most 255, without leading
// zeros ("0" itself is fine). No hex, octal or integer forms.
func parseStrictIPv4(s string) (netip.Addr, bool) {
	var b [4]byte
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return netip.Addr{}, false
	}
	for i, p := range parts {
		if p == "" || len(p) > 3 || !isDigits(p) || (len(p) > 1 && p[0] == '0') {
			return netip.Addr{}, false
		}
		n, _ := strconv.Atoi(p) // cannot fail: 1-3 ASCII digits
		if n > 255 {
			return netip.Addr{}, false
		}
		b[i] = byte(n) //nolint:gosec // G115: 0 <= n <= 255, checked above
	}
	return netip.AddrFrom4(b), true
}

// maskBits returns the prefix length of a contiguous dotted netmask
// ("255.0.0.0") or hostmask ("0.255.255.255"), so the error can suggest it.
func maskBits(s string) (int, bool) {
	a, ok := parseStrictIPv4(s)
	if !ok {
		return 0, false
	}
	b := a.As4()
	m := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	for _, mask := range []uint32{m, ^m} {
		// A netmask is ones then zeros: its complement plus one is a power of two.
		if inv := ^mask; inv&(inv+1) == 0 {
			// The prefix length is the number of leading ones.
			return bits.LeadingZeros32(inv), true
		}
	}
	return 0, false
}

// checkLabelShape checks what is wrong with a label regardless of its length:
// emptiness and hyphen placement (RFC 1123). "--" in the third and fourth
// positions is allowed: IDNA reserves it, but it is valid RFC 1123 and real
// hosts use it (r3---sn-abc.googlevideo.com); "xn--" labels are checked as
// punycode separately.
func checkLabelShape(label string) string {
	switch {
	case label == "":
		return "contains an empty label"
	case label[0] == '-' || label[len(label)-1] == '-':
		return fmt.Sprintf("label %q must not start or end with a hyphen", shorten(label))
	}
	return ""
}

// hostnameIDNA is UTS-46 lookup processing (mapping, STD3 rules, joiner and
// bidi rules, punycode validation) without the CheckHyphens rule, for the
// reason given at checkLabelShape; leading and trailing hyphens are still
// refused there.
var hostnameIDNA = idna.New(idna.MapForLookup(), idna.BidiRule(), idna.CheckHyphens(false))

// ipv4AttemptReason explains why a name ending in a numeric label is not an
// IPv4 address. v is the trimmed entry, name its A-label form.
func ipv4AttemptReason(v, name string, hadDot bool) string {
	const strict = "each part must be 0-255 without leading zeros"
	if _, ok := parseStrictIPv4(name); ok {
		// The A-label form is a strict address, so the input differed from it
		// only by IDNA mapping (fullwidth digits or dots) or a trailing dot.
		if !isASCII(v) {
			return "not a valid IPv4 address (use ASCII digits and dots)"
		}
		if hadDot {
			return "not a valid IPv4 address (remove the trailing dot)"
		}
	}
	if !isNumericName(name) {
		return "not a valid IPv4 address: a hostname cannot end with a numeric label"
	}
	parts := strings.Split(name, ".")
	if len(parts) == 4 && isDigits(strings.ReplaceAll(name, ".", "")) {
		return "not a valid IPv4 address (" + strict + ")"
	}
	return "not a valid IPv4 address (write it as a dotted quad a.b.c.d; " + strict + "; hex, octal and integer forms are not supported)"
}

// isNumericName reports whether every label of s is numeric (see
// isNumericLabel): an attempt at an IPv4 address in some non-strict form.
func isNumericName(s string) bool {
	for _, label := range strings.Split(s, ".") {
		if !isNumericLabel(label) {
			return false
		}
	}
	return true
}

// isNumericLabel reports whether a label is all ASCII digits or "0x" hex, the
// forms that inet_aton and URL parsers accept as IPv4 parts.
func isNumericLabel(label string) bool {
	if isDigits(label) {
		return true
	}
	if len(label) >= 2 && label[0] == '0' && (label[1] == 'x' || label[1] == 'X') {
		for i := 2; i < len(label); i++ {
			if !isHexDigit(label[i]) {
				return false
			}
		}
		return true
	}
	return false
}

func isDigits(s string) bool {
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

func isHexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// isLDH reports a letter, digit or hyphen: the characters of a DNS label.
func isLDH(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-'
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// asciiLower lowercases ASCII letters only: case folding of other letters is
// left to IDNA's UTS #46 mapping, which is what the server applies and which
// differs from Unicode lowercasing for some characters.
func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + ('a' - 'A')
		}
		return r
	}, s)
}

// shorten keeps quoted labels in messages readable, cutting on a rune
// boundary so the quoted text stays valid UTF-8.
func shorten(s string) string {
	const maxLen = 40
	if len(s) <= maxLen {
		return s
	}
	cut := maxLen
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
