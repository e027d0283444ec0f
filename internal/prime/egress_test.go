package prime

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"testing"
)

func TestParseEgressEntryAccepts(t *testing.T) {
	label63 := strings.Repeat("a", 63)
	// 63+1+63+1+63+1+61 = 253 octets: the longest legal name.
	name253 := label63 + "." + label63 + "." + label63 + "." + strings.Repeat("b", 61)
	name251 := label63 + "." + label63 + "." + label63 + "." + strings.Repeat("b", 59)

	tests := []struct {
		in        string
		kind      EgressEntryKind
		canonical string
	}{
		// Hostnames: case, trailing dot, RFC 1123 shapes.
		{"example.com", EgressHostname, "example.com"},
		{"Example.COM", EgressHostname, "example.com"},
		{"example.com.", EgressHostname, "example.com"},
		{"API.Example.com.", EgressHostname, "api.example.com"},
		{"localhost", EgressHostname, "localhost"},
		{"3com.com", EgressHostname, "3com.com"},
		{"a-b.c-d.com", EgressHostname, "a-b.c-d.com"},
		// "--" in positions 3-4 is reserved for IDNA but valid RFC 1123, and
		// real CDN hosts use it.
		{"ab--cd.com", EgressHostname, "ab--cd.com"},
		{"R3---sn-abc.GoogleVideo.com", EgressHostname, "r3---sn-abc.googlevideo.com"},
		{"*.r3---sn-abc.googlevideo.com", EgressWildcard, "*.r3---sn-abc.googlevideo.com"},
		{"a.b.c.d.e.f.example", EgressHostname, "a.b.c.d.e.f.example"},
		{"1.2.3.example", EgressHostname, "1.2.3.example"},
		{"123.example.com", EgressHostname, "123.example.com"},
		{"0x10.example.com", EgressHostname, "0x10.example.com"},
		{"a.1com", EgressHostname, "a.1com"},
		{label63 + ".com", EgressHostname, label63 + ".com"},
		{name253, EgressHostname, name253},
		{name253 + ".", EgressHostname, name253},
		// Internationalised names become A-labels.
		{"bücher.de", EgressHostname, "xn--bcher-kva.de"},
		{"BÜCHER.de", EgressHostname, "xn--bcher-kva.de"},
		{"XN--BCHER-KVA.DE", EgressHostname, "xn--bcher-kva.de"},
		{"xn--bcher-kva.de", EgressHostname, "xn--bcher-kva.de"},
		{"ß.de", EgressHostname, "xn--zca.de"}, // non-transitional: ß stays ß
		{"例子。测试", EgressHostname, "xn--fsqu00a.xn--0zwm56d"},
		{"ＥＸＡＭＰＬＥ．com", EgressHostname, "example.com"},
		{"a.com。", EgressHostname, "a.com"}, // an ideographic full stop as the one trailing dot
		// Wildcards.
		{"*.example.com", EgressWildcard, "*.example.com"},
		{"*.Bücher.DE.", EgressWildcard, "*.xn--bcher-kva.de"},
		{"*.com", EgressWildcard, "*.com"},
		{"*." + name251, EgressWildcard, "*." + name251},
		// IPv4 addresses and networks.
		{"1.2.3.4", EgressIPv4, "1.2.3.4/32"},
		{"0.0.0.0", EgressIPv4, "0.0.0.0/32"},
		{"255.255.255.255", EgressIPv4, "255.255.255.255/32"},
		{"169.254.169.254", EgressIPv4, "169.254.169.254/32"},
		{"10.0.0.0/8", EgressCIDR, "10.0.0.0/8"},
		{"10.0.0.1/8", EgressCIDR, "10.0.0.0/8"},
		{"1.2.3.4/24", EgressCIDR, "1.2.3.0/24"},
		{"1.2.3.4/32", EgressCIDR, "1.2.3.4/32"},
		{"0.0.0.0/0", EgressCIDR, "0.0.0.0/0"},
		{"255.255.255.255/0", EgressCIDR, "0.0.0.0/0"},
		// Outer whitespace, Python str.strip() style (U+001C..U+001F included).
		{"  example.com  ", EgressHostname, "example.com"},
		{"\t\n\v\f\rexample.com\x1c\x1d\x1e\x1f", EgressHostname, "example.com"},
		{"\u00a0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000\u0085a.com\u3000", EgressHostname, "a.com"},
		{" 1.2.3.4 ", EgressIPv4, "1.2.3.4/32"},
		{"\t10.0.0.1/8\n", EgressCIDR, "10.0.0.0/8"},
		{" *.a.com ", EgressWildcard, "*.a.com"},
	}
	for _, tt := range tests {
		t.Run(strconv.Quote(shorten(tt.in)), func(t *testing.T) {
			e, err := ParseEgressEntry(tt.in)
			if err != nil {
				t.Fatalf("ParseEgressEntry(%q) = %v, want success", tt.in, err)
			}
			if e.Raw != tt.in {
				t.Errorf("Raw = %q, want the input %q", e.Raw, tt.in)
			}
			if e.Kind != tt.kind {
				t.Errorf("Kind = %d, want %d", e.Kind, tt.kind)
			}
			if got := e.Canonical(); got != tt.canonical {
				t.Errorf("Canonical() = %q, want %q", got, tt.canonical)
			}
			switch e.Kind {
			case EgressHostname, EgressWildcard:
				if e.Prefix.IsValid() || e.Domain == "" {
					t.Errorf("name entry has Prefix %v, Domain %q", e.Prefix, e.Domain)
				}
			default:
				if !e.Prefix.IsValid() || e.Domain != "" || e.Prefix != e.Prefix.Masked() {
					t.Errorf("IP entry has Prefix %v, Domain %q", e.Prefix, e.Domain)
				}
			}
			got, err := CanonicalEgressEntry(tt.in)
			if err != nil || got != tt.canonical {
				t.Errorf("CanonicalEgressEntry(%q) = %q, %v; want %q", tt.in, got, err, tt.canonical)
			}
		})
	}
}

func TestParseEgressEntryRejects(t *testing.T) {
	label64 := strings.Repeat("a", 64)
	label63 := strings.Repeat("a", 63)
	name254 := label63 + "." + label63 + "." + label63 + "." + strings.Repeat("b", 62)
	name252 := label63 + "." + label63 + "." + label63 + "." + strings.Repeat("b", 60)

	const (
		badIPv4   = "not a valid IPv4 address (each part must be 0-255 without leading zeros)"
		badIPv4x  = "not a valid IPv4 address (write it as a dotted quad"
		badCIDR   = "not a valid IPv4 CIDR"
		invisible = "invisible or format character"
		leftmost  = "wildcard is only supported as the leftmost label"
		urls      = "URLs are not supported; use the bare hostname"
		paths     = "URLs and paths are not supported; use the bare hostname"
		char      = "is not allowed in a hostname"
	)
	tests := []struct {
		in     string
		reason string
	}{
		// Empty.
		{"", "empty entry"},
		{"   ", "empty entry"},
		{"\t\n\x1c\u3000", "empty entry"},
		// IPv6 in every spelling.
		{"::1", "IPv6 is not supported"},
		{"::", "IPv6 is not supported"},
		{"2001:db8::1", "IPv6 is not supported"},
		{"::ffff:1.2.3.4", "IPv6 is not supported"},
		{"fe80::1%eth0", "IPv6 is not supported"},
		{"[::1]", "IPv6 is not supported"},
		{"[2001:db8::1]:443", "IPv6 is not supported"},
		{"::1/128", "IPv6 is not supported"},
		{"2001:db8::/32", "IPv6 is not supported"},
		{"2001:db8:::1", "IPv6 is not supported"},
		// URLs and paths (the SDK says "is not a valid IPv4 CIDR" for all of them).
		{"https://example.com", urls + ` "example.com"`},
		{"https://Example.com:8443/path?q=1", urls + ` "example.com"`},
		{"http://1.2.3.4/", urls + ` "1.2.3.4"`},
		{"ftp://", urls},
		{"example.com/path", paths},
		{"example.com/", paths},
		{"*.example.com/x", paths},
		{"http:/example.com", paths},
		// Malformed CIDRs.
		{"10.0.0.0/", badCIDR + ` (the prefix length after "/" is empty)`},
		{"10.0.0.0/33", badCIDR + " (the prefix length must be 0-32, got /33)"},
		{"10.0.0.0/99999999999999999999", badCIDR + " (the prefix length must be 0-32"},
		{"10.0.0.0/08", badCIDR + " (the prefix length must not have leading zeros; use /8)"},
		{"10.0.0.0/008", "use /8)"},
		{"10.0.0.0/00", "use /0)"},
		{"10.0.0.0/+8", badCIDR + " (the prefix length must be a decimal number 0-32)"},
		{"10.0.0.0/-1", badCIDR + " (the prefix length must be a decimal number 0-32)"},
		{"10.0.0.0/８", badCIDR + " (the prefix length must be a decimal number 0-32)"},
		{"10.0.0.0/8/8", badCIDR + ` (more than one "/")`},
		{"10.0.0.0/255.0.0.0", "netmask notation is not supported; use a prefix length (/8)"},
		{"10.0.0.0/255.255.255.0", "use a prefix length (/24)"},
		{"10.0.0.0/0.255.255.255", "use a prefix length (/8)"},
		{"10.0.0.0/255.0.255.0", "netmask notation is not supported; use a prefix length such as /24"},
		{"10.0.0.0/8.", "netmask notation is not supported"},
		{"256.0.0.0/8", badCIDR + " (the address must be a dotted quad"},
		{"010.0.0.0/8", badCIDR + " (the address must be a dotted quad"},
		{"10.0.0/8", badCIDR + " (the address must be a dotted quad"},
		{"0x0a.0.0.0/8", badCIDR + " (the address must be a dotted quad"},
		{"/8", badCIDR + ` (the address before "/" is missing)`},
		{"/", badCIDR},
		{"-1/8", badCIDR},
		// The SDK's forbidden substrings.
		{"user@example.com", "credentials are not supported"},
		{"user:pw@example.com", "credentials are not supported"},
		{"example.com:443", "ports are not supported"},
		{"1.2.3.4:80", "ports are not supported"},
		{"http:x", "ports are not supported"},
		{"example.com?x=1", "query strings are not supported"},
		// Empty domain.
		{".", "domain is empty"},
		{"..", "domain is empty"},
		{"*.", "domain is empty"},
		{"*..", "domain is empty"},
		{"。", "domain is empty"},
		// Misplaced wildcards.
		{"*", `a lone "*" is not an entry`},
		{"**", leftmost},
		{"**.a.com", leftmost},
		{"*.*.com", leftmost},
		{"a.*.com", leftmost},
		{"a.com.*", leftmost},
		{"*a.com", leftmost},
		{"a*.com", leftmost},
		// Empty labels.
		{".a.com", "contains an empty label"},
		{"a..com", "contains an empty label"},
		{"*..a.com", "contains an empty label"},
		{"*.a..com", "contains an empty label"},
		{"a。。com", "contains an empty label"},
		// Trailing dots: one is fine, more are not.
		{"a.com..", "more than one trailing dot is not allowed"},
		{"*.a..", "more than one trailing dot is not allowed"},
		{"a.com.。", "more than one trailing dot is not allowed"},
		// Inner whitespace (every Python whitespace character).
		{"a b.com", "inner whitespace is not allowed"},
		{"a\tb.com", "inner whitespace is not allowed"},
		{"a.com\n.b", "inner whitespace is not allowed"},
		{"a\x1fb.com", "inner whitespace is not allowed"},
		{"a\u00a0b.com", "inner whitespace is not allowed"},
		{"a\u3000b.com", "inner whitespace is not allowed"},
		{"* .a.com", "inner whitespace is not allowed"},
		{"10.0.0.0 /8", "inner whitespace is not allowed"},
		// Control characters.
		{"a\x00b.com", "control character U+0000 is not allowed"},
		{"a\x7fb.com", "control character U+007F is not allowed"},
		{"a\u0080b.com", "control character U+0080 is not allowed"},
		{"a.com\x7f", "control character U+007F is not allowed"},
		// Invisible and format characters (not trimmed: not whitespace to Python).
		{"a\u200bb.com", invisible + " U+200B is not allowed"},
		{"\u200bexample.com", invisible + " U+200B is not allowed"},
		{"a\u200cb.com", invisible + " U+200C is not allowed"},
		{"a\u200db.com", invisible + " U+200D is not allowed"},
		{"a\u2060b.com", invisible + " U+2060 is not allowed"},
		{"\ufeffexample.com", invisible + " U+FEFF is not allowed"},
		{"ex\u00adample.com", invisible + " U+00AD is not allowed"},
		{"a\u200eb.com", invisible + " U+200E is not allowed"},
		{"a\u180eb.com", invisible + " U+180E is not allowed"},
		{"ex\ufe0fample.com", invisible + " U+FE0F is not allowed"},
		{"a\u034fb.com", invisible + " U+034F is not allowed"},
		{"1.2.3.4\u200b", invisible + " U+200B is not allowed"},
		// Characters outside letters, digits, hyphens and dots.
		{"a_b.com", `character "_" ` + char},
		{"_dmarc.example.com", `character "_" ` + char},
		{"a#b.com", `character "#" ` + char},
		{"example.com#frag", `character "#" ` + char},
		{"a%b.com", `character "%" ` + char},
		{"a,b.com", `character "," ` + char},
		{"a;b.com", `character ";" ` + char},
		{"a!b.com", `character "!" ` + char},
		{`a"b.com`, `character "\"" ` + char},
		{"a'b.com", `character "'" ` + char},
		{"<a.com>", `character "<" ` + char},
		{"a>b.com", `character ">" ` + char},
		{"[a.com]", `character "[" ` + char},
		{"a]b.com", `character "]" ` + char},
		{"{a}.com", `character "{" ` + char},
		{"a}b.com", `character "}" ` + char},
		{"a|b.com", `character "|" ` + char},
		{`a\b.com`, `character "\\" ` + char},
		{"a^b.com", `character "^" ` + char},
		{"a~b.com", `character "~" ` + char},
		{"a=b.com", `character "=" ` + char},
		{"a+b.com", `character "+" ` + char},
		{"a$b.com", `character "$" ` + char},
		{"a&b.com", `character "&" ` + char},
		{"a(b).com", `character "(" ` + char},
		{"a`b.com", "character \"`\" " + char},
		{"a＿b.com", "not a valid internationalised hostname"}, // fullwidth low line maps to "_"
		{"a／b.com", "not a valid internationalised hostname"}, // fullwidth solidus maps to "/"
		{"＊.a.com", "not a valid internationalised hostname"}, // fullwidth asterisk maps to "*"
		// Hyphen placement.
		{"-a.com", `label "-a" must not start or end with a hyphen`},
		{"a-.com", `label "a-" must not start or end with a hyphen`},
		{"a.com-", `label "com-" must not start or end with a hyphen`},
		{"*.-a.com", `label "-a" must not start or end with a hyphen`},
		{"-", `label "-" must not start or end with a hyphen`},
		// Lengths, measured on the A-label form.
		{label64 + ".com", `label "` + label64[:40] + `..." is 64 octets long; at most 63 are allowed`},
		{"a." + label64, "is 64 octets long; at most 63 are allowed"},
		{strings.Repeat("ü", 60) + ".de", "octets long; at most 63 are allowed"},
		{name254, "name is 254 octets long in A-label form; at most 253 are allowed"},
		{name254 + ".", "name is 254 octets long"},
		{"*." + name252, "name is 254 octets long"},
		{strings.Repeat("a.", 3000) + "com", "entry is too long"},
		// IDNA: invalid punycode and disallowed code points.
		{"xn--zz", `label "xn--zz" is not a valid IDNA A-label ("xn--" punycode)`},
		{"xn--zz.com", `label "xn--zz" is not a valid IDNA A-label`},
		{"a.XN--ZZ.com", `label "xn--zz" is not a valid IDNA A-label`},
		{"xn--abc-.com", `must not start or end with a hyphen`},
		{"xn--abc-d.com", `is not a valid IDNA A-label`},
		{"xn--a-ecp.ru", `is not a valid IDNA A-label`}, // decodes to "a\u2488", disallowed
		{"xn--wca.de", `is not a valid IDNA A-label`},   // decodes to "Ü", which is not mapped
		{"\u0301a.com", "not a valid internationalised hostname"},
		{"a\ufffdb.com", "not a valid internationalised hostname"},
		{"\ue000.com", "not a valid internationalised hostname"},
		{"a\xffb.com", "not valid UTF-8"},
		// IPv4 look-alikes are refused as IPv4, not accepted as hostnames.
		{"256.1.1.1", badIPv4},
		{"1.2.3.256", badIPv4},
		{"01.2.3.4", badIPv4},
		{"1.2.3.04", badIPv4},
		{"1.2.3.0004", badIPv4},
		{"1.2.3", badIPv4x},
		{"1.2.3.4.5", badIPv4x},
		{"2130706433", badIPv4x},
		{"0x7f.0.0.1", badIPv4x},
		{"0x7f000001", badIPv4x},
		{"127.1", badIPv4x},
		{"１２３", badIPv4x},
		{"１.２.３.４", "not a valid IPv4 address (use ASCII digits and dots)"},
		{"1．2．3．4", "not a valid IPv4 address (use ASCII digits and dots)"},
		{"1.2.3.4.", "not a valid IPv4 address (remove the trailing dot)"},
		{"example.123", "not a valid IPv4 address: a hostname cannot end with a numeric label"},
		{"example.0x1f", "not a valid IPv4 address: a hostname cannot end with a numeric label"},
		{"example.com.1", "not a valid IPv4 address: a hostname cannot end with a numeric label"},
		// A wildcard over an IP address.
		{"*.1.2.3.4", "a wildcard cannot cover an IP address"},
		{"*.2.3.4", "a wildcard cannot cover an IP address"},
		{"*.example.1", "a wildcard cannot cover an IP address"},
		{"*.1.2.3.4/8", paths},
	}
	for _, tt := range tests {
		t.Run(strconv.Quote(shorten(tt.in)), func(t *testing.T) {
			e, err := ParseEgressEntry(tt.in)
			if err == nil {
				t.Fatalf("ParseEgressEntry(%q) = %q (kind %d), want an error containing %q", tt.in, e.Canonical(), e.Kind, tt.reason)
			}
			if e != (EgressEntry{}) {
				t.Errorf("ParseEgressEntry(%q) returned a non-zero entry with its error: %+v", tt.in, e)
			}
			checkEntryError(t, tt.in, err)
			if !strings.Contains(err.Error(), tt.reason) {
				t.Errorf("ParseEgressEntry(%q) error = %q, want it to contain %q", tt.in, err, tt.reason)
			}
			if c, cerr := CanonicalEgressEntry(tt.in); cerr == nil || c != "" {
				t.Errorf("CanonicalEgressEntry(%q) = %q, %v; want an error", tt.in, c, cerr)
			}
		})
	}
}

// checkEntryError asserts the error contract: errors.Is works, and the
// message is one line that starts with the original entry quoted by %q.
func checkEntryError(t *testing.T, entry string, err error) {
	t.Helper()
	if !errors.Is(err, ErrInvalidEgressEntry) {
		t.Errorf("error %q does not wrap ErrInvalidEgressEntry", err)
	}
	msg := err.Error()
	if want := fmt.Sprintf("%q: ", entry); !strings.HasPrefix(msg, want) {
		t.Errorf("error %q does not start with the quoted entry %s", msg, want)
	}
	if strings.ContainsAny(msg, "\n\r") {
		t.Errorf("error %q is not one line", msg)
	}
}

func TestEgressEntriesEqual(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"1.2.3.4", "1.2.3.4/32", true},
		{"1.2.3.4/32", "1.2.3.4", true},
		{"10.0.0.1/8", "10.0.0.0/8", true},
		{"Example.COM", "example.com.", true},
		{" example.com ", "example.com", true},
		{"bücher.de", "xn--bcher-kva.de", true},
		{"*.Bücher.DE.", "*.xn--bcher-kva.de", true},
		{"a.com", "*.a.com", false},
		{"a.com", "b.com", false},
		{"1.2.3.4", "1.2.3.0/24", false},
		{"10.0.0.0/8", "10.0.0.0/16", false},
		// Invalid entries are equal only to themselves.
		{"a b.com", "a b.com", true},
		{"a b.com", "a  b.com", false},
		{"a b.com", "ab.com", false},
		{"256.1.1.1", "256.1.1.1", true},
		{"*", "*", true},
		{"", "", true},
		{"", " ", false},
	}
	for _, tt := range tests {
		if got := EgressEntriesEqual(tt.a, tt.b); got != tt.want {
			t.Errorf("EgressEntriesEqual(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
		if got := EgressEntriesEqual(tt.b, tt.a); got != tt.want {
			t.Errorf("EgressEntriesEqual(%q, %q) = %v, want %v (symmetry)", tt.b, tt.a, got, tt.want)
		}
	}
}

func TestValidateEgressList(t *testing.T) {
	many := func(n int, entry string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = entry
		}
		return out
	}

	t.Run("valid lists", func(t *testing.T) {
		for _, entries := range [][]string{
			nil,
			{},
			{"example.com", "*.example.com", "1.2.3.4", "10.0.0.0/8"},
			many(MaxEgressEntries, "example.com"), // duplicates are allowed
		} {
			if err := ValidateEgressList("network_allowlist", entries); err != nil {
				t.Errorf("ValidateEgressList(%d entries) = %v, want nil", len(entries), err)
			}
		}
	})

	t.Run("count is checked first and duplicates count", func(t *testing.T) {
		// 257 invalid entries: only the count is reported, as the SDK does.
		err := ValidateEgressList("network_allowlist", many(MaxEgressEntries+1, "a b.com"))
		if err == nil {
			t.Fatal("257 entries accepted")
		}
		if want := "network_allowlist: at most 256 entries are supported, got 257"; err.Error() != want {
			t.Errorf("error = %q, want %q", err, want)
		}
		err = ValidateEgressList("network_denylist", many(300, "example.com"))
		if err == nil || !strings.Contains(err.Error(), "network_denylist: at most 256 entries are supported, got 300") {
			t.Errorf("300 duplicate entries: error = %v", err)
		}
	})

	t.Run("every bad entry is reported", func(t *testing.T) {
		entries := []string{"ok.com", "a b.com", "1.2.3.4", "*", "256.1.1.1", "fine.example", "::1"}
		err := ValidateEgressList("allowlist", entries)
		if err == nil {
			t.Fatal("invalid list accepted")
		}
		if !errors.Is(err, ErrInvalidEgressEntry) {
			t.Errorf("error %q does not wrap ErrInvalidEgressEntry", err)
		}
		lines := strings.Split(err.Error(), "\n")
		want := []string{
			`allowlist: "a b.com": inner whitespace is not allowed`,
			`allowlist: "*": a lone "*" is not an entry`,
			`allowlist: "256.1.1.1": not a valid IPv4 address`,
			`allowlist: "::1": IPv6 is not supported`,
		}
		if len(lines) != len(want) {
			t.Fatalf("got %d error lines, want %d:\n%s", len(lines), len(want), err)
		}
		for i := range want {
			if !strings.HasPrefix(lines[i], want[i]) {
				t.Errorf("line %d = %q, want prefix %q", i, lines[i], want[i])
			}
		}
	})

	t.Run("no list name, no prefix", func(t *testing.T) {
		err := ValidateEgressList("", []string{"a b.com"})
		if err == nil || err.Error() != `"a b.com": inner whitespace is not allowed` {
			t.Errorf("error = %v", err)
		}
	})
}

func TestCanonicalEgressList(t *testing.T) {
	got, err := CanonicalEgressList([]string{
		"Example.COM", "10.0.0.1/8", "example.com.", "1.2.3.4", "*.a.com",
		"10.0.0.0/8", "1.2.3.4/32", " example.com ", "bücher.de", "xn--bcher-kva.de",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"example.com", "10.0.0.0/8", "1.2.3.4/32", "*.a.com", "xn--bcher-kva.de"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("CanonicalEgressList = %q, want %q", got, want)
	}

	// null and [] mean different policies, so they must survive.
	if got, err := CanonicalEgressList(nil); got != nil || err != nil {
		t.Errorf("CanonicalEgressList(nil) = %#v, %v; want nil, nil", got, err)
	}
	if got, err := CanonicalEgressList([]string{}); got == nil || len(got) != 0 || err != nil {
		t.Errorf("CanonicalEgressList([]) = %#v, %v; want an empty non-nil slice", got, err)
	}

	got, err = CanonicalEgressList([]string{"ok.com", "a_b.com", "a..com"})
	if err == nil || got != nil {
		t.Fatalf("CanonicalEgressList with bad entries = %q, %v; want nil and an error", got, err)
	}
	if !errors.Is(err, ErrInvalidEgressEntry) || strings.Count(err.Error(), "\n") != 1 {
		t.Errorf("error should report both bad entries and wrap ErrInvalidEgressEntry: %q", err)
	}
}

func TestEgressEntryMatchesHost(t *testing.T) {
	tests := []struct {
		entry string
		host  string
		want  bool
	}{
		// Exact names, case and trailing dot insensitive on both sides.
		{"example.com", "example.com", true},
		{"example.com", "EXAMPLE.com.", true},
		{"Example.COM.", "example.com", true},
		{"example.com", "api.example.com", false},
		{"api.example.com", "example.com", false},
		{"example.com", "example.org", false},
		{"example.com", "notexample.com", false},
		{"bücher.de", "xn--bcher-kva.de", true},
		{"xn--bcher-kva.de", "BÜCHER.de", true},
		// Wildcards: strictly under the domain, at any depth.
		{"*.example.com", "a.example.com", true},
		{"*.example.com", "b.a.example.com", true},
		{"*.example.com", "A.Example.COM.", true},
		{"*.example.com", "example.com", false},
		{"*.example.com", "badexample.com", false},
		{"*.example.com", "example.com.evil.net", false},
		{"*.example.com", "*.example.com", false}, // a wildcard is not a host
		{"*.com", "example.com", true},
		// IPv4 and CIDR entries.
		{"1.2.3.4", "1.2.3.4", true},
		{"1.2.3.4", "1.2.3.5", false},
		{"1.2.3.4/32", "1.2.3.4", true},
		{"10.0.0.1/8", "10.255.255.255", true},
		{"10.0.0.0/8", "10.0.0.0", true},
		{"10.0.0.0/8", "11.0.0.0", false},
		{"10.0.0.0/8", "9.255.255.255", false},
		{"192.168.1.0/24", "192.168.1.77", true},
		{"192.168.1.0/24", "192.168.2.1", false},
		{"0.0.0.0/0", "8.8.8.8", true},
		{"10.0.0.0/8", "10.0.0.0/8", false}, // a network is not a host
		// Names never match IP entries and vice versa.
		{"0.0.0.0/0", "example.com", false},
		{"1.2.3.4", "1.2.3.4.example.com", false},
		{"example.com", "1.2.3.4", false},
		{"*.example.com", "1.2.3.4", false},
		// Invalid hosts match nothing.
		{"0.0.0.0/0", "010.0.0.1", false},
		{"0.0.0.0/0", "::1", false},
		{"example.com", "example.com:443", false},
		{"example.com", "example.com..", false},
		{"*.example.com", "a b.example.com", false},
		{"*.example.com", "", false},
	}
	for _, tt := range tests {
		e, err := ParseEgressEntry(tt.entry)
		if err != nil {
			t.Fatalf("ParseEgressEntry(%q): %v", tt.entry, err)
		}
		if got := e.MatchesHost(tt.host); got != tt.want {
			t.Errorf("%q.MatchesHost(%q) = %v, want %v", tt.entry, tt.host, got, tt.want)
		}
	}

	if (EgressEntry{}).MatchesHost("example.com") {
		t.Error("the zero EgressEntry matched a host")
	}
}

func TestEgressEntryCanonicalZero(t *testing.T) {
	if got := (EgressEntry{}).Canonical(); got != "" {
		t.Errorf("zero EgressEntry Canonical() = %q, want empty", got)
	}
	// A hand-built, unmasked prefix is still rendered canonically.
	e := EgressEntry{Kind: EgressCIDR, Prefix: netip.MustParsePrefix("10.1.2.3/8")}
	if got := e.Canonical(); got != "10.0.0.0/8" {
		t.Errorf("Canonical() = %q, want 10.0.0.0/8", got)
	}
}

func TestEgressPythonSpace(t *testing.T) {
	// The exact set of str.strip(); U+180E, U+200B and U+FEFF are not in it.
	want := map[rune]bool{0x85: true, 0xA0: true, 0x1680: true, 0x2028: true, 0x2029: true,
		0x202F: true, 0x205F: true, 0x3000: true, ' ': true}
	for r := rune(0x09); r <= 0x0D; r++ {
		want[r] = true
	}
	for r := rune(0x1C); r <= 0x1F; r++ {
		want[r] = true
	}
	for r := rune(0x2000); r <= 0x200A; r++ {
		want[r] = true
	}
	for r := rune(0); r <= 0x10FFFF; r++ {
		if got := isPythonSpace(r); got != want[r] {
			t.Errorf("isPythonSpace(%U) = %v, want %v", r, got, want[r])
		}
	}
}
