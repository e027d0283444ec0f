package egress

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

func TestSortByCanonical(t *testing.T) {
	got := sortByCanonical([]string{"Zeta.com", "1.2.3.4", "alpha.com", "a b"})
	want := []string{"1.2.3.4", "alpha.com", "Zeta.com", "a b"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("got %v, want %v", got, want)
	}
	if sortByCanonical(nil) != nil {
		t.Fatal("nil (unset) must stay nil")
	}
}

func TestApplyPlatformPolicy(t *testing.T) {
	ctx := context.Background()
	state := egressPolicyModel{
		Lists: Lists{
			Allow:  entrySet([]string{"Example.COM"}),
			Block:  types.SetNull(egressEntryType{}),
			Routes: types.ListValueMust(types.StringType, []attr.Value{types.StringValue("https://intercept.example.net/v1")}),
		},
		Effective: Effective{
			EffectiveAllow: types.ListValueMust(types.StringType, []attr.Value{types.StringValue("intercept.example.net"), types.StringValue("example.com")}),
			EffectiveBlock: types.ListNull(types.StringType),
		},
		Generation: types.Int64Value(1),
	}

	// Same destinations in the platform's spelling: the user's spelling
	// stays, the generations follow the platform.
	same := state
	applyPlatformPolicy(ctx, &same, "sbx", &prime.EgressPolicyStatus{
		Policy: prime.EgressPolicy{Allowlist: []string{"example.com", "intercept.example.net"}}, Generation: 2, AppliedGeneration: 2, Applied: true,
	})
	if !same.Allow.Equal(state.Allow) || same.Generation.ValueInt64() != 2 || !same.Applied.ValueBool() {
		t.Fatalf("kept state wrong: allow=%v gen=%v applied=%v", same.Allow, same.Generation, same.Applied)
	}

	// Drift from another writer: the platform's lists become the state,
	// route hosts taken out of allow.
	drift := state
	applyPlatformPolicy(ctx, &drift, "sbx", &prime.EgressPolicyStatus{
		Policy: prime.EgressPolicy{Allowlist: []string{"intercept.example.net", "evil.example.org"}}, Generation: 3, AppliedGeneration: 2, Applied: false,
	})
	if got := drift.Allow.Elements(); len(got) != 1 || got[0].(egressEntryValue).ValueString() != "evil.example.org" {
		t.Fatalf("drifted allow = %v", drift.Allow)
	}
	if drift.Applied.ValueBool() {
		t.Fatal("an unapplied generation read as applied")
	}

	// Import (nothing written before) of an open policy reads as block = [].
	imported := egressPolicyModel{
		Lists: Lists{
			Allow: types.SetNull(egressEntryType{}), Block: types.SetNull(egressEntryType{}),
			Routes: types.ListNull(types.StringType),
		},
		Effective:  Effective{EffectiveAllow: types.ListNull(types.StringType), EffectiveBlock: types.ListNull(types.StringType)},
		Generation: types.Int64Null(),
	}
	applyPlatformPolicy(ctx, &imported, "sbx", &prime.EgressPolicyStatus{Generation: 0, AppliedGeneration: 0, Applied: true})
	if imported.Block.IsNull() || len(imported.Block.Elements()) != 0 || !imported.Allow.IsNull() {
		t.Fatalf("imported open policy: allow=%v block=%v", imported.Allow, imported.Block)
	}
}

func TestEgressEntrySemanticEquality(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"Example.COM", "example.com", true},
		{"1.2.3.4", "1.2.3.4/32", true},
		{"bücher.de", "xn--bcher-kva.de", true},
		{"a.com", "*.a.com", false},
	} {
		got, d := newEgressEntry(tc.a).StringSemanticEquals(ctx, newEgressEntry(tc.b))
		if d.HasError() || got != tc.want {
			t.Errorf("%q ~ %q = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestFailClosedMessage(t *testing.T) {
	err := &prime.EgressNotAppliedError{SandboxID: "sbx", Want: 3, Last: prime.EgressPolicyStatus{Generation: 3, AppliedGeneration: 2}}
	msg := FailClosedMessage("sbx", time.Minute, "update", err)
	for _, want := range []string{"accepted (generation 3) but is not enforced after 1m0s", "applied_generation 2",
		"nothing that depends on it was started", "timeouts.update"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
}

func TestFleetPolicyMemberValuesRoundTrip(t *testing.T) {
	var diags diag.Diagnostics
	policy := map[string]fleetPolicyMember{
		"0": {SandboxID: types.StringValue("sb-0"), Generation: types.Int64Value(2), Applied: types.BoolValue(true)},
		"1": {SandboxID: types.StringValue("sb-1"), Generation: types.Int64Unknown(), Applied: types.BoolValue(true)},
	}
	pv := fleetPolicyMembersValue(policy)
	pwant, d := types.MapValueFrom(context.Background(), fleetPolicyMemberType(), policy)
	if d.HasError() || !pv.Equal(pwant) {
		t.Fatalf("hand-built %s, reflection %s (%v)", pv, pwant, d)
	}
	pback := fleetPolicyMembersOfMap(pv, &diags)
	if diags.HasError() || pback["0"] != policy["0"] || pback["1"] != policy["1"] {
		t.Fatalf("round trip: %+v %v", pback, diags)
	}
}

// A state recorded before lists_sha256 existed gets it from its recorded
// lists at refresh; a recorded digest and a block without lists stay.
func TestBlockWithDigest(t *testing.T) {
	ctx := context.Background()
	allow := types.ListValueMust(types.StringType, []attr.Value{types.StringValue("example.com")})
	block := func(digest types.String) types.Object {
		v, d := BlockValue(ctx, &BlockModel{
			Lists:     Lists{Allow: entrySet([]string{"example.com"}), Block: types.SetNull(egressEntryType{}), Routes: types.ListNull(types.StringType)},
			Effective: Effective{EffectiveAllow: allow, EffectiveBlock: types.ListNull(types.StringType), ListsSHA256: digest},
		})
		if d.HasError() {
			t.Fatal(d)
		}
		return v
	}
	var diags diag.Diagnostics
	want := prime.EgressPolicy{Allowlist: []string{"example.com"}}.Digest()
	got, _ := BlockModelOf(ctx, BlockWithDigest(ctx, block(types.StringNull()), &diags))
	if diags.HasError() || got.ListsSHA256.ValueString() != want {
		t.Fatalf("lists_sha256 = %s (%v), want %s", got.ListsSHA256, diags, want)
	}
	if kept := BlockWithDigest(ctx, block(types.StringValue("recorded")), &diags); !kept.Equal(block(types.StringValue("recorded"))) {
		t.Fatalf("a recorded digest changed: %v", kept)
	}
	if none := BlockWithDigest(ctx, types.ObjectNull(BlockObjectType().AttrTypes), &diags); !none.IsNull() {
		t.Fatalf("no block became %v", none)
	}
}
