package prime

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// egressFuzzSeeds covers every branch of the grammar: each accepted form and
// each reason for refusal, plus the Unicode corners (mapped dots and digits,
// joiners, IDNA mapping) where canonicalisation is most likely to go wrong.
var egressFuzzSeeds = []string{
	// Accepted.
	"example.com", "Example.COM", "example.com.", "localhost", "a-b.c-d.com",
	"*.example.com", "*.Bücher.DE.", "*.com", "bücher.de", "XN--BCHER-KVA.de",
	"ß.de", "例子。测试", "ＥＸＡＭＰＬＥ．com", "a.com。", "☃.com", "ｘｎ--bcher-kva.de",
	"1.2.3.4", "0.0.0.0", "255.255.255.255", "10.0.0.1/8", "1.2.3.4/24",
	"0.0.0.0/0", "1.2.3.4/32", "  example.com\x1c", "\u3000*.a.com\u0085",
	"123.example.com", "0x10.example.com", "a.1com",
	strings.Repeat("a", 63) + ".com",
	// Refused.
	"", " ", "::1", "::ffff:1.2.3.4", "fe80::1%eth0", "[::1]", "[::1]:443",
	"::1/128", "2001:db8:::1", "https://example.com/path", "http://1.2.3.4:80/",
	"https://[::1]/", "example.com/path", "user@example.com", "example.com:443",
	"example.com?x=1", ".", "..", "*.", "*..", "*", "**", "*.*.com", "a.*.com",
	"*a.com", ".a.com", "a..com", "a.com..", "*.a..", "a.com.。", "a b.com",
	"a\tb.com", "a_b.com", "a#b.com", "a\x7fb.com", "a\x00b", "a\u200bb.com",
	"a\u200cb.com", "a\u200db.com", "\ufeffa.com", "a\u00adb.com", "ex\ufe0fample.com",
	"-a.com", "a-.com", "ab--cd.com", "xn--zz", "xn--zz.com", "xn--abc-.com",
	"xn--a-ecp.ru", "\u0301a.com", "a\xffb.com", "＊.a.com", "a＿b.com",
	strings.Repeat("a", 64) + ".com", strings.Repeat("abcdefghi.", 26) + "com",
	"256.1.1.1", "01.2.3.4", "1.2.3.04", "1.2.3", "2130706433", "0x7f.0.0.1",
	"１.２.３.４", "1.2.3.4.", "example.123", "*.1.2.3.4", "*.example.1",
	"10.0.0.0/33", "10.0.0.0/08", "10.0.0.0/+8", "10.0.0.0/255.0.0.0",
	"10.0.0.0/0.255.255.255", "10.0.0.0/", "10.0.0.0/8/8", "256.0.0.0/8", "/8",
	// Unicode corners: RTL labels (bidi rule), joiners in context, decomposed
	// Hangul (NFC), characters that map to ASCII hyphens, dots and digits.
	"مثال.إختبار", "a.مثال", "١٢٣.com", "क्\u200dष.com", "각.kr",
	"ab－－cd.com", "a－.com", "１２３", "ｘｎ--zz.com", "K.com", "İ.com", "ǅ.com",
	"xn--fsqu00a.xn--0zwm56d", "*.xn--bcher-kva.de", "a.b.c.d.e.f.g.h.i.j.k",
}

// FuzzEgressEntry checks the grammar's invariants on arbitrary input: it never
// panics; every refusal is a one-line error that quotes the entry and wraps
// ErrInvalidEgressEntry; every accepted entry has a canonical form that is a
// fixed point (it re-validates to itself), is equal to the raw entry, is well
// formed, matches the hosts it should, and would also pass the SDK's own,
// looser validator (so the provider never accepts what the SDK refuses).
func FuzzEgressEntry(f *testing.F) {
	for _, s := range egressFuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, entry string) {
		e, err := ParseEgressEntry(entry)
		if err != nil {
			if !errors.Is(err, ErrInvalidEgressEntry) {
				t.Fatalf("error %q does not wrap ErrInvalidEgressEntry", err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, fmt.Sprintf("%q: ", entry)) || strings.ContainsAny(msg, "\r\n") {
				t.Fatalf("error %q is not one line starting with the quoted entry", msg)
			}
			if e != (EgressEntry{}) {
				t.Fatalf("non-zero entry returned with an error: %+v", e)
			}
			if EgressEntriesEqual(entry, entry+"x") {
				t.Fatalf("invalid %q equals a different string", entry)
			}
			return
		}

		if e.Raw != entry {
			t.Fatalf("Raw = %q, want %q", e.Raw, entry)
		}
		c := e.Canonical()
		e2, err := ParseEgressEntry(c)
		if err != nil {
			t.Fatalf("canonical form %q of %q does not re-validate: %v", c, entry, err)
		}
		if c2 := e2.Canonical(); c2 != c {
			t.Fatalf("Canonical() is not idempotent: %q -> %q -> %q", entry, c, c2)
		}
		if e2.Kind != e.Kind && !(e.Kind == EgressIPv4 && e2.Kind == EgressCIDR) {
			t.Fatalf("kind changed from %d to %d when re-parsing %q", e.Kind, e2.Kind, c)
		}
		if !EgressEntriesEqual(entry, c) || !EgressEntriesEqual(c, entry) {
			t.Fatalf("EgressEntriesEqual(%q, %q) is false", entry, c)
		}
		if !sdkAcceptsEgressEntry(entry) {
			t.Fatalf("accepted %q (as %q), which the SDK refuses", entry, c)
		}

		switch e.Kind {
		case EgressHostname, EgressWildcard:
			checkCanonicalName(t, c, e)
			if e.Kind == EgressHostname && !e.MatchesHost(entry) {
				t.Fatalf("%q does not match itself as a host", entry)
			}
			if e.Kind == EgressWildcard {
				if e.MatchesHost(e.Domain) {
					t.Fatalf("%q matches its own apex", entry)
				}
				if !e.MatchesHost("x." + e.Domain) {
					t.Fatalf("%q does not match x.%s", entry, e.Domain)
				}
			}
		case EgressIPv4, EgressCIDR:
			if !e.Prefix.IsValid() || !e.Prefix.Addr().Is4() || e.Prefix != e.Prefix.Masked() || e.Domain != "" {
				t.Fatalf("bad IP entry %+v", e)
			}
			if e.Kind == EgressIPv4 && e.Prefix.Bits() != 32 {
				t.Fatalf("bare address %q has prefix %v", entry, e.Prefix)
			}
			if !e.MatchesHost(e.Prefix.Addr().String()) {
				t.Fatalf("%q does not match its network address", entry)
			}
		default:
			t.Fatalf("unknown kind %d", e.Kind)
		}
	})
}

// checkCanonicalName asserts that a canonical name entry is lowercase LDH
// labels of 1-63 octets, at most 253 octets in all, with no trailing dot.
func checkCanonicalName(t *testing.T, c string, e EgressEntry) {
	t.Helper()
	if e.Prefix.IsValid() || e.Domain == "" {
		t.Fatalf("bad name entry %+v", e)
	}
	if len(c) > maxNameOctets {
		t.Fatalf("canonical %q is %d octets", c, len(c))
	}
	for i, label := range strings.Split(e.Domain, ".") {
		if label == "" || len(label) > maxLabelOctets || label[0] == '-' || label[len(label)-1] == '-' {
			t.Fatalf("bad label %d %q in %q", i, label, c)
		}
		for j := 0; j < len(label); j++ {
			if !isLDH(label[j]) || label[j] >= 'A' && label[j] <= 'Z' {
				t.Fatalf("bad character %q in %q", label[j], c)
			}
		}
	}
}

// sdkAcceptsEgressEntry is the SDK's _validate_egress_entry (prime-sandboxes
// 0.2.39), condensed: true when the SDK would let the entry through.
func sdkAcceptsEgressEntry(entry string) bool {
	v := strings.TrimFunc(entry, isPythonSpace)
	if v == "" {
		return false
	}
	if _, ok := parseStrictIPv4(v); ok {
		return true
	}
	if strings.Contains(v, "/") {
		addr, bits, _ := strings.Cut(v, "/")
		if _, ok := parseStrictIPv4(addr); !ok {
			return false
		}
		if _, ok := maskBits(bits); ok {
			return true
		}
		n := 0
		for i := 0; i < len(bits); i++ {
			if bits[i] < '0' || bits[i] > '9' || n > 32 {
				return false
			}
			n = n*10 + int(bits[i]-'0')
		}
		return bits != "" && n <= 32
	}
	if strings.ContainsAny(v, "@:?") {
		return false
	}
	v = strings.TrimRight(strings.TrimPrefix(v, "*."), ".")
	if v == "" || strings.Contains(v, "*") {
		return false
	}
	for _, label := range strings.Split(v, ".") {
		if label == "" {
			return false
		}
	}
	return true
}
