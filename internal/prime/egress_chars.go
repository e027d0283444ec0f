package prime

// Character and label classes of the egress grammar (ParseEgressEntry).

import (
	"fmt"
	"math/bits"
	"net/netip"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

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
