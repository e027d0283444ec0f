package primemock

// Differential tests: the provider (internal/prime) and the mock read the
// SDK's rules independently. Everything the provider accepts must be
// accepted by the mock, and stored in the same canonical form; the provider
// may be stricter. A disagreement is reported as a FINDING and fails the
// test: it means one of the two readings is wrong.

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// sdkVerdict is one line of testdata/sdk_egress_verdicts.json: an entry and
// what prime-sandboxes 0.2.39's own _validate_egress_entry (models.py, run
// under CPython 3.11) answered, with its ValueError text.
type sdkVerdict struct {
	Entry string `json:"entry"`
	OK    bool   `json:"ok"`
	Error string `json:"error"`
}

func sdkVerdicts(t testing.TB) []sdkVerdict {
	t.Helper()
	raw, err := os.ReadFile("testdata/sdk_egress_verdicts.json")
	if err != nil {
		t.Fatal(err)
	}
	var vs []sdkVerdict
	if err := json.Unmarshal(raw, &vs); err != nil {
		t.Fatal(err)
	}
	return vs
}

// TestEgressEntryMatchesTheSDK: the mock's port of the SDK's entry check
// gives the SDK's verdict and message for every recorded entry.
func TestEgressEntryMatchesTheSDK(t *testing.T) {
	vs := sdkVerdicts(t)
	if len(vs) < 100 {
		t.Fatalf("only %d recorded verdicts", len(vs))
	}
	for _, v := range vs {
		err := checkEgressEntry(v.Entry)
		switch {
		case v.OK && err != nil:
			t.Errorf("%q: the SDK accepts it, the mock says %v", v.Entry, err)
		case !v.OK && err == nil:
			t.Errorf("%q: the SDK refuses it (%s), the mock accepts it", v.Entry, v.Error)
		case !v.OK && err.Error() != v.Error:
			t.Errorf("%q: message %q, the SDK's is %q", v.Entry, err, v.Error)
		}
	}
}

func TestEgressListsMatchTheSDK(t *testing.T) {
	many := make([]string, maxEgressEntries+1)
	for i := range many {
		many[i] = "a.com" // duplicates count
	}
	for _, tc := range []struct {
		allow, deny []string
		aSet, dSet  bool
		want        string
	}{
		{nil, nil, false, false, ""},
		{[]string{}, nil, true, false, ""},
		{nil, []string{}, false, true, ""},
		{[]string{}, []string{}, true, true, "network_allowlist and network_denylist are mutually exclusive; provide at most one"},
		{many[:maxEgressEntries], nil, true, false, ""},
		{many, nil, true, false, "network_allowlist supports at most 256 entries"},
		// The count comes before the entries.
		{append(slices.Clone(many), "::1"), nil, true, false, "network_allowlist supports at most 256 entries"},
		{nil, []string{"ok.com", "*"}, false, true, "network_denylist: '*': wildcard is only supported as the leftmost label"},
	} {
		err := checkEgressLists(tc.allow, tc.deny, tc.aSet, tc.dSet)
		if got := errString(err); got != tc.want {
			t.Errorf("lists %d/%d: %q, want %q", len(tc.allow), len(tc.deny), got, tc.want)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestCanonicalAndMatcher pins the mock's storage form and its own matcher.
func TestCanonicalAndMatcher(t *testing.T) {
	for in, want := range map[string]string{
		"Example.COM": "example.com", "\texample.com..\u3000": "example.com", "1.2.3.4": "1.2.3.4/32",
		"10.0.0.1/8": "10.0.0.0/8", "10.1.2.3/255.255.0.0": "10.1.0.0/16", "10.1.2.3/0.0.255.255": "10.1.0.0/16",
		"1.2.3.4/008": "1.0.0.0/8", "*.Bücher.DE.": "*.xn--bcher-kva.de", "ß.de": "xn--zca.de",
		"ＥＸＡＭＰＬＥ．com": "example.com", "１.２.３.４": "1.2.3.4/32", "a_b.com": "a_b.com", "256.1.1.1": "256.1.1.1",
		"1.2.3.4.": "1.2.3.4/32", "a\u200bb.com": "ab.com",
	} {
		if got, err := canonicalEgressEntry(in); err != nil || got != want {
			t.Errorf("canonical(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"a。。b", "＊.a.com"} {
		if got, err := canonicalEgressEntry(in); err == nil {
			t.Errorf("canonical(%q) = %q; want a refusal (its IDNA form is no valid entry)", in, got)
		}
	}
	for _, tc := range []struct {
		entry, host string
		want        bool
	}{
		{"example.com", "EXAMPLE.com.", true}, {"example.com", "www.example.com", false},
		{"*.example.com", "a.b.example.com", true}, {"*.example.com", "example.com", false},
		{"*.example.com", "badexample.com", false}, {"10.0.0.0/8", "10.255.0.1", true},
		{"10.0.0.0/8", "11.0.0.1", false}, {"1.2.3.4/32", "1.2.3.4", true}, {"0.0.0.0/0", "8.8.8.8", true},
		{"0.0.0.0/0", "example.com", false}, {"example.com", "1.2.3.4", false},
		{"xn--bcher-kva.de", "bücher.de", true}, {"256.1.1.1", "256.1.1.1", true},
	} {
		if got := matchesDestination(tc.entry, parseDestination(tc.host)); got != tc.want {
			t.Errorf("%q covers %q = %v, want %v", tc.entry, tc.host, got, tc.want)
		}
	}
}

// diffEntry compares the provider's verdict on one entry with the mock's.
func diffEntry(t *testing.T, entry string) {
	t.Helper()
	e, err := prime.ParseEgressEntry(entry)
	if err != nil {
		return // the provider refuses it: the mock may do as it likes
	}
	if err := checkEgressEntry(entry); err != nil {
		t.Errorf("FINDING: the provider accepts %q, the mock (the SDK's rule) refuses it: %v", entry, err)
		return
	}
	c, err := canonicalEgressEntry(entry)
	if err != nil {
		t.Errorf("FINDING: the provider accepts %q, the mock cannot canonicalise it: %v", entry, err)
		return
	}
	if c != e.Canonical() {
		t.Errorf("FINDING: %q is stored as %q by the mock, the provider expects %q", entry, c, e.Canonical())
	}
	// What the mock stores, the provider must read back as the same entry.
	if back, err := prime.CanonicalEgressEntry(c); err != nil || back != e.Canonical() {
		t.Errorf("FINDING: the mock stores %q as %q, which the provider reads as %q (%v)", entry, c, back, err)
	}
}

func TestDifferentialEgressEntries(t *testing.T) {
	for _, v := range sdkVerdicts(t) {
		diffEntry(t, v.Entry)
	}
}

// FuzzDifferentialEgressEntry: go test -fuzz FuzzDifferentialEgressEntry
// ./internal/primemock/. The unit run replays the recorded SDK verdicts'
// entries as the seed corpus.
func FuzzDifferentialEgressEntry(f *testing.F) {
	for _, v := range sdkVerdicts(f) {
		f.Add(v.Entry)
	}
	f.Fuzz(func(t *testing.T, entry string) {
		if err := checkEgressEntry(entry); err == nil {
			// The mock's own invariants: a canonical form, when there is
			// one, is a fixed point the SDK accepts.
			if c, err := canonicalEgressEntry(entry); err == nil {
				if c2, err := canonicalEgressEntry(c); err != nil || c2 != c {
					t.Fatalf("canonical %q of %q is not a fixed point: %q %v", c, entry, c2, err)
				}
			}
		}
		diffEntry(t, entry)
	})
}

// diffPolicy composes a policy with the provider and sends it, as JSON, to
// the mock's PUT rules.
func diffPolicy(t *testing.T, block bool, entries, routes []string) {
	t.Helper()
	spec := prime.EgressPolicySpec{Routes: routes}
	if block {
		spec.Block = entries
	} else {
		spec.Allow = entries
	}
	policy, findings := prime.ComposeEgressPolicy(spec)
	for _, f := range findings {
		if f.Severity == prime.FindingError {
			return
		}
	}
	body, err := json.Marshal(policy)
	if err != nil {
		t.Fatal(err)
	}
	p, err := decodePolicyBody(body)
	if err != nil {
		t.Errorf("FINDING: the provider composes %s, the mock refuses the body: %v", body, err)
		return
	}
	stored, err := checkPolicy(p)
	if err != nil {
		t.Errorf("FINDING: the provider composes %s, the mock refuses it: %v", body, err)
		return
	}
	if !slices.Equal(stored.Allowlist, policy.Allowlist) || !slices.Equal(stored.Denylist, policy.Denylist) ||
		(stored.Allowlist == nil) != (policy.Allowlist == nil) {
		t.Errorf("FINDING: the provider composes %s, the mock stores %+v", body, stored)
	}
}

func TestDifferentialComposedPolicies(t *testing.T) {
	var accepted []string
	for _, v := range sdkVerdicts(t) {
		if _, err := prime.ParseEgressEntry(v.Entry); err == nil {
			accepted = append(accepted, v.Entry)
		}
	}
	routes := []string{"https://api.example.com/v1", "http://10.1.2.3:8080/x"}
	for _, block := range []bool{false, true} {
		diffPolicy(t, block, []string{}, nil)
		diffPolicy(t, block, accepted, nil)
		diffPolicy(t, block, accepted, routes)
		for _, e := range accepted {
			diffPolicy(t, block, []string{e}, routes[:1])
		}
	}
}

// FuzzDifferentialPolicy: entries and routes are newline-separated.
func FuzzDifferentialPolicy(f *testing.F) {
	f.Add(false, "example.com\n*.example.com\n10.0.0.0/8", "https://api.example.com/")
	f.Add(true, "ads.example.com\n1.2.3.4", "")
	f.Add(false, "", "")
	f.Add(false, "Bücher.de\nbücher.de.\nxn--bcher-kva.de", "http://例子.测试/")
	f.Add(true, strings.Repeat("a.com\n", 300), "")
	f.Fuzz(func(t *testing.T, block bool, entries, routes string) {
		split := func(s string) []string {
			if s == "" {
				return []string{}
			}
			return strings.Split(s, "\n")
		}
		r := split(routes)
		if len(r) == 0 {
			r = nil
		}
		diffPolicy(t, block, split(entries), r)
	})
}
