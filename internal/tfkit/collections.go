package tfkit

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// StringList, StringSet and StringMap read a collection of strings; nil
// when the collection or any element is unknown (or it is null). StringSet's
// elements come sorted.
func StringList(ctx context.Context, v types.List) ([]string, diag.Diagnostics) {
	if v.IsUnknown() || v.IsNull() {
		return nil, nil
	}
	for _, e := range v.Elements() {
		if e.IsUnknown() {
			return nil, nil
		}
	}
	out := []string{}
	diags := v.ElementsAs(ctx, &out, false)
	return out, diags
}

func StringSet(ctx context.Context, v types.Set) ([]string, diag.Diagnostics) {
	if v.IsUnknown() || v.IsNull() {
		return nil, nil
	}
	for _, e := range v.Elements() {
		if e.IsUnknown() {
			return nil, nil
		}
	}
	out := []string{}
	diags := v.ElementsAs(ctx, &out, false)
	sort.Strings(out)
	return out, diags
}

func StringMap(ctx context.Context, v types.Map) (map[string]string, diag.Diagnostics) {
	if v.IsUnknown() || v.IsNull() {
		return nil, nil
	}
	for _, e := range v.Elements() {
		if e.IsUnknown() {
			return nil, nil
		}
	}
	out := map[string]string{}
	diags := v.ElementsAs(ctx, &out, false)
	return out, diags
}

// StringMapOf is StringMap with its diagnostics appended to diags.
func StringMapOf(ctx context.Context, v types.Map, diags *diag.Diagnostics) map[string]string {
	m, d := StringMap(ctx, v)
	diags.Append(d...)
	return m
}

// SortedKeys returns a map's keys in order.
func SortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// SetOf is keys as a set.
func SetOf(keys []string) map[string]bool {
	out := make(map[string]bool, len(keys))
	for _, k := range keys {
		out[k] = true
	}
	return out
}

// PointersOf is a map of values as a map of pointers to copies (the member
// maps' constructors take nil for a planned, unknown entry).
func PointersOf[V any](m map[string]V) map[string]*V {
	out := make(map[string]*V, len(m))
	for k := range m {
		v := m[k]
		out[k] = &v
	}
	return out
}

// QuoteKeys lists keys in an error, each quoted, comma-separated, in the
// order given.
func QuoteKeys(keys []string) string {
	quoted := make([]string, len(keys))
	for i, k := range keys {
		quoted[i] = fmt.Sprintf("%q", k)
	}
	return strings.Join(quoted, ", ")
}

// PluralVerb is one when n is 1, else many: "is"/"are", "member"/"members".
func PluralVerb(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
