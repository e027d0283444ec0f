package memberkit

import (
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func stringMap(kv ...string) types.Map {
	elems := map[string]attr.Value{}
	for i := 0; i+1 < len(kv); i += 2 {
		elems[kv[i]] = types.StringValue(kv[i+1])
	}
	return types.MapValueMust(types.StringType, elems)
}

// One trigger lookup for every fleet resource. The drifted copy in
// prime_fleet_artifact read an unknown map as null ("no trigger"), which
// would keep a member whose trigger may still change; the unknown case
// below fails against it.
func TestTriggerOf(t *testing.T) {
	withNull := types.MapValueMust(types.StringType, map[string]attr.Value{"a": types.StringNull()})
	for _, c := range []struct {
		name     string
		triggers types.Map
		key      string
		want     types.String
	}{
		{"unknown map: unknown, not null", types.MapUnknown(types.StringType), "a", types.StringUnknown()},
		{"null map: no trigger", types.MapNull(types.StringType), "a", types.StringNull()},
		{"entry", stringMap("a", "1", "b", "2"), "b", types.StringValue("2")},
		{"no entry", stringMap("a", "1"), "b", types.StringNull()},
		{"null entry", withNull, "a", types.StringNull()},
		{"unknown entry", types.MapValueMust(types.StringType, map[string]attr.Value{"a": types.StringUnknown()}), "a", types.StringUnknown()},
	} {
		if got := TriggerOf(c.triggers, c.key); !got.Equal(c.want) {
			t.Errorf("%s: TriggerOf(%s, %q) = %s, want %s", c.name, c.triggers, c.key, got, c.want)
		}
	}
}

// One stray-key check for member_env, member_triggers and members.
func TestStrayKeys(t *testing.T) {
	ids := stringMap("0", "sb-0", "1", "sb-1")
	for _, c := range []struct {
		name              string
		perMember, member types.Map
		want              []string
	}{
		{"none", stringMap("0", "x"), ids, nil},
		{"sorted strays", stringMap("9", "x", "0", "x", "10", "x"), ids, []string{"10", "9"}},
		{"per-member map null", types.MapNull(types.StringType), ids, nil},
		{"per-member map unknown", types.MapUnknown(types.StringType), ids, nil},
		{"members null", stringMap("9", "x"), types.MapNull(types.StringType), nil},
		{"members unknown", stringMap("9", "x"), types.MapUnknown(types.StringType), nil},
		{"empty members", stringMap("0", "x"), stringMap(), []string{"0"}},
	} {
		if got := StrayKeys(c.perMember, c.member); !slices.Equal(got, c.want) {
			t.Errorf("%s: StrayKeys = %q, want %q", c.name, got, c.want)
		}
	}
	if got := StrayKeysOf(map[string]int{"b": 1, "a": 2, "c": 3}, map[string]bool{"c": true}); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("StrayKeysOf = %q, want [a b]", got)
	}
}

// The sandbox_ids builder: one type and requiredness in every form.
func TestSandboxIDsAttributes(t *testing.T) {
	in := SandboxIDsAttribute("doc")
	if !in.Required || in.Computed || !in.ElementType.Equal(types.StringType) || in.MarkdownDescription != "doc" {
		t.Errorf("argument: %+v", in)
	}
	ds := SandboxIDsDataSourceAttribute("doc")
	if !ds.Required || !ds.ElementType.Equal(types.StringType) || ds.MarkdownDescription != "doc" {
		t.Errorf("data source argument: %+v", ds)
	}
	out := SandboxIDsOutputAttribute("doc")
	if out.Required || !out.Computed || out.Optional || !out.ElementType.Equal(types.StringType) {
		t.Errorf("output: %+v", out)
	}
}
