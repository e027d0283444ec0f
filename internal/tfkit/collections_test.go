package tfkit

import (
	"context"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestWordingHelpers(t *testing.T) {
	for _, c := range []struct {
		keys []string
		want string
	}{{nil, ""}, {[]string{"a"}, `"a"`}, {[]string{"b", "a"}, `"b", "a"`}} {
		if got := QuoteKeys(c.keys); got != c.want {
			t.Errorf("QuoteKeys(%q) = %q, want %q", c.keys, got, c.want)
		}
	}
	if PluralVerb(1, "is", "are") != "is" || PluralVerb(0, "is", "are") != "are" || PluralVerb(2, "is", "are") != "are" {
		t.Error("PluralVerb")
	}
	if got := SortedKeys(SetOf([]string{"b", "a", "b"})); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("SortedKeys(SetOf) = %q", got)
	}
}

// The collection readers give nil while anything is unknown.
func TestStringCollections(t *testing.T) {
	ctx := context.Background()
	known := types.MapValueMust(types.StringType, map[string]attr.Value{"a": types.StringValue("1")})
	partly := types.MapValueMust(types.StringType, map[string]attr.Value{"a": types.StringUnknown()})
	for _, c := range []struct {
		v    types.Map
		want map[string]string
	}{{known, map[string]string{"a": "1"}}, {partly, nil}, {types.MapNull(types.StringType), nil}, {types.MapUnknown(types.StringType), nil}} {
		got, d := StringMap(ctx, c.v)
		if d.HasError() || len(got) != len(c.want) || got["a"] != c.want["a"] || (c.want == nil) != (got == nil) {
			t.Errorf("StringMap(%s) = %v, want %v", c.v, got, c.want)
		}
	}
	set := types.SetValueMust(types.StringType, []attr.Value{types.StringValue("b"), types.StringValue("a")})
	if got, _ := StringSet(ctx, set); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("StringSet = %q", got)
	}
	list := types.ListValueMust(types.StringType, []attr.Value{types.StringValue("b"), types.StringUnknown()})
	if got, _ := StringList(ctx, list); got != nil {
		t.Errorf("StringList with an unknown element = %q", got)
	}
}
