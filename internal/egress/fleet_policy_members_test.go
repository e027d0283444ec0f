package egress

import (
	"testing"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// A fleet policy's private state keeps only the baselines that are not
// open (68 bytes a member, a tenth of a fleet's state, went to writing
// "open" N times); a member without one restores open.
func TestMemberBaselinesLeaveOpenOnesOut(t *testing.T) {
	born := prime.EgressPolicy{Allowlist: []string{"pypi.org"}}
	in := map[string]prime.EgressPolicy{"0": prime.OpenEgressPolicy(), "1": born, "2": {}}
	b := encodeMemberBaselines(in)
	if got, want := string(b), `{"1":`+string(encodeBaseline(born))+`}`; got != want {
		t.Fatalf("encoded %s, want %s", got, want)
	}
	out := decodeMemberBaselines(b)
	if !prime.SamePolicy(out.of("1"), born) {
		t.Errorf("member 1 restores %+v, want %+v", out.of("1"), born)
	}
	for _, k := range []string{"0", "2", "absent"} {
		if p := out.of(k); !p.IsOpen() || !prime.SamePolicy(p, prime.OpenEgressPolicy()) {
			t.Errorf("member %s restores %+v, want open", k, p)
		}
	}
	// A baseline written before open ones were left out still reads.
	if old := decodeMemberBaselines([]byte(`{"0":{"allowlist":null,"denylist":[]}}`)); !old.of("0").IsOpen() {
		t.Errorf("an explicit open baseline reads %+v", old.of("0"))
	}
}
