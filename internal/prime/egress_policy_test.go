package prime

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestComposeEgressPolicy(t *testing.T) {
	routes := []string{"https://Intercept.Example.NET:8443/v1/chat", "http://mcp.example.org/sse", "https://intercept.example.net/other"}
	tests := []struct {
		name      string
		spec      EgressPolicySpec
		want      EgressPolicy
		wantErr   string // substring of an error finding, "attr: ..."
		wantWarn  string
		wantClean bool
	}{
		{name: "allow empty denies all but routes", spec: EgressPolicySpec{Allow: []string{}, Routes: routes},
			want: EgressPolicy{Allowlist: []string{"intercept.example.net", "mcp.example.org"}}, wantClean: true},
		{name: "allow empty without routes denies all", spec: EgressPolicySpec{Allow: []string{}},
			want: EgressPolicy{Allowlist: []string{}}, wantClean: true},
		{name: "routes first then allow, canonical", spec: EgressPolicySpec{Allow: []string{"Example.COM", "1.2.3.4", "bücher.de"}, Routes: routes[:1]},
			want: EgressPolicy{Allowlist: []string{"intercept.example.net", "example.com", "1.2.3.4/32", "xn--bcher-kva.de"}}, wantClean: true},
		{name: "route host repeated in allow is silent", spec: EgressPolicySpec{Allow: []string{"intercept.example.net"}, Routes: routes[:1]},
			want: EgressPolicy{Allowlist: []string{"intercept.example.net"}}, wantClean: true},
		{name: "block mode ignores route hosts", spec: EgressPolicySpec{Block: []string{"example.com"}, Routes: routes},
			want: EgressPolicy{Denylist: []string{"example.com"}}, wantClean: true},
		{name: "block empty is open", spec: EgressPolicySpec{Block: []string{}},
			want: EgressPolicy{Denylist: []string{}}, wantClean: true},
		{name: "neither", spec: EgressPolicySpec{}, wantErr: "allow: exactly one of allow and block"},
		{name: "both", spec: EgressPolicySpec{Allow: []string{}, Block: []string{}}, wantErr: "mutually exclusive"},
		{name: "lone star in allow", spec: EgressPolicySpec{Allow: []string{"*"}}, wantErr: `allow: "*" is not an entry. To deny all egress except the routes, use allow = []`},
		{name: "lone star in block", spec: EgressPolicySpec{Block: []string{" * "}}, wantErr: "block: \" * \" is not an entry"},
		{name: "bad entry names attribute and entry", spec: EgressPolicySpec{Allow: []string{"ok.com", "a b.com"}}, wantErr: `allow: "a b.com": inner whitespace`},
		{name: "bad block entry", spec: EgressPolicySpec{Block: []string{"256.1.1.1"}}, wantErr: `block: "256.1.1.1": not a valid IPv4 address`},
		{name: "route not http", spec: EgressPolicySpec{Allow: []string{}, Routes: []string{"ftp://x.com"}}, wantErr: `routes: "ftp://x.com" must be an http:// or https:// URL`},
		{name: "route without host", spec: EgressPolicySpec{Allow: []string{}, Routes: []string{"https:///path"}}, wantErr: "has no host"},
		{name: "route bare host", spec: EgressPolicySpec{Allow: []string{}, Routes: []string{"intercept.example.net"}}, wantErr: "must be an http:// or https:// URL"},
		{name: "route IPv6", spec: EgressPolicySpec{Allow: []string{}, Routes: []string{"http://[::1]:8080/"}}, wantErr: "IPv6 host; the platform's egress policies are IPv4-only"},
		{name: "route IPv4 is fine", spec: EgressPolicySpec{Allow: []string{}, Routes: []string{"http://10.0.0.5:8080/"}},
			want: EgressPolicy{Allowlist: []string{"10.0.0.5/32"}}, wantClean: true},
		{name: "block matches route host", spec: EgressPolicySpec{Block: []string{"*.example.net"}, Routes: routes[:1]},
			wantErr: `block: "*.example.net" blocks the framework route host intercept.example.net`},
		{name: "block CIDR matches route IP", spec: EgressPolicySpec{Block: []string{"10.0.0.0/8"}, Routes: []string{"http://10.0.0.5/"}},
			wantErr: `blocks the framework route host 10.0.0.5`},
		{name: "apex warning", spec: EgressPolicySpec{Allow: []string{"*.example.com"}},
			want: EgressPolicy{Allowlist: []string{"*.example.com"}}, wantWarn: `allow: "*.example.com" does not allow example.com itself`},
		{name: "apex present no warning", spec: EgressPolicySpec{Allow: []string{"*.example.com", "example.com"}},
			want: EgressPolicy{Allowlist: []string{"*.example.com", "example.com"}}, wantClean: true},
		{name: "apex warning in block mode", spec: EgressPolicySpec{Block: []string{"*.ads.com"}}, wantWarn: `does not block ads.com itself`,
			want: EgressPolicy{Denylist: []string{"*.ads.com"}}},
		{name: "duplicate warning", spec: EgressPolicySpec{Allow: []string{"example.com", "Example.COM."}},
			want: EgressPolicy{Allowlist: []string{"example.com"}}, wantWarn: `allow: "Example.COM." is the same destination as "example.com"`},
		{name: "ip and /32 are duplicates", spec: EgressPolicySpec{Allow: []string{"1.2.3.4", "1.2.3.4/32"}},
			want: EgressPolicy{Allowlist: []string{"1.2.3.4/32"}}, wantWarn: "same destination"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, findings := ComposeEgressPolicy(tt.spec)
			var errs, warns []string
			for _, f := range findings {
				if f.Severity == FindingError {
					errs = append(errs, f.String())
				} else {
					warns = append(warns, f.String())
				}
			}
			if tt.wantErr != "" {
				if !containsAny(errs, tt.wantErr) {
					t.Fatalf("errors %q, want one containing %q", errs, tt.wantErr)
				}
				return
			}
			if len(errs) > 0 {
				t.Fatalf("unexpected errors %q", errs)
			}
			if tt.wantWarn != "" && !containsAny(warns, tt.wantWarn) {
				t.Fatalf("warnings %q, want one containing %q", warns, tt.wantWarn)
			}
			if tt.wantClean && len(warns) > 0 {
				t.Fatalf("unexpected warnings %q", warns)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("policy = %#v, want %#v", got, tt.want)
			}
			if err := ValidateEgressPolicy(got); err != nil {
				t.Fatalf("composed policy fails the PUT check: %v", err)
			}
		})
	}
}

func TestComposeEgressPolicyCountsRouteHosts(t *testing.T) {
	allow := make([]string, MaxEgressEntries)
	for i := range allow {
		allow[i] = fmt.Sprintf("h%d.example.com", i)
	}
	if _, f := ComposeEgressPolicy(EgressPolicySpec{Allow: allow}); len(f) != 0 {
		t.Fatalf("256 entries: %v", f)
	}
	_, f := ComposeEgressPolicy(EgressPolicySpec{Allow: allow, Routes: []string{"https://intercept.example.net"}})
	if len(f) != 1 || !strings.Contains(f[0].String(), "would send 257 entries (route hosts included); the platform accepts at most 256") {
		t.Fatalf("findings = %v", f)
	}
}

func TestSamePolicy(t *testing.T) {
	tests := []struct {
		a, b EgressPolicy
		want bool
	}{
		{EgressPolicy{Denylist: []string{}}, EgressPolicy{}, true},
		{EgressPolicy{Allowlist: []string{}}, EgressPolicy{}, false},
		{EgressPolicy{Allowlist: []string{}}, EgressPolicy{Denylist: []string{}}, false},
		{EgressPolicy{Allowlist: []string{"A.com", "1.2.3.4"}}, EgressPolicy{Allowlist: []string{"1.2.3.4/32", "a.com", "a.com"}}, true},
		{EgressPolicy{Allowlist: []string{"a.com"}}, EgressPolicy{Denylist: []string{"a.com"}}, false},
		{EgressPolicy{Allowlist: []string{"a.com"}}, EgressPolicy{Allowlist: []string{"b.com"}}, false},
	}
	for _, tt := range tests {
		if got := SamePolicy(tt.a, tt.b); got != tt.want {
			t.Errorf("SamePolicy(%+v, %+v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
		// The digest follows SamePolicy: it names what a policy lets
		// through, however it is spelled.
		if same := tt.a.Digest() == tt.b.Digest(); same != tt.want {
			t.Errorf("Digest(%+v) == Digest(%+v) is %v, want %v", tt.a, tt.b, same, tt.want)
		}
	}
}

// The digest is a fixed text's SHA-256, so that a reader can recompute it.
func TestEgressPolicyDigest(t *testing.T) {
	for _, c := range []struct {
		p    EgressPolicy
		text string
	}{
		{OpenEgressPolicy(), "open"},
		{EgressPolicy{}, "open"},
		{EgressPolicy{Allowlist: []string{}}, "allow\n"},
		{EgressPolicy{Allowlist: []string{"intercept.example.net", "Example.COM.", "10.0.0.5"}}, "allow\n10.0.0.5/32\nexample.com\nintercept.example.net"},
		{EgressPolicy{Denylist: []string{"b.com", "a.com"}}, "block\na.com\nb.com"},
	} {
		sum := sha256.Sum256([]byte(c.text))
		if got, want := c.p.Digest(), hex.EncodeToString(sum[:]); got != want {
			t.Errorf("Digest(%+v) = %s, want the SHA-256 of %q (%s)", c.p, got, c.text, want)
		}
	}
}

func containsAny(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
