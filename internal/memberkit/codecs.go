package memberkit

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

// Per-member values of the fleet resources are converted by hand, not with
// the framework's reflection (ObjectValueFrom, MapValueFrom, ElementsAs):
// reflection compiles a regular expression for every struct field it
// visits, so a 1000-member fleet paid for about 10 000 compilations on
// every refresh, plan and apply. These read the member maps every fleet
// resource keeps; each resource's own member type says which attributes.

// MemberAttrs are the attributes of entry key of a map of objects; an
// entry that is not a known object is an error, as it is for ElementsAs.
func MemberAttrs(key string, v attr.Value, diags *diag.Diagnostics) (map[string]attr.Value, bool) {
	obj, ok := v.(types.Object)
	if !ok || obj.IsNull() || obj.IsUnknown() {
		diags.AddError("Unexpected member value", fmt.Sprintf("Member %q is not a known object (%s); this is a bug in the provider.", key, v))
		return nil, false
	}
	return obj.Attributes(), true
}

// MembersOfMap reads a map of objects (known, from state) entry by entry.
func MembersOfMap[T any](v types.Map, diags *diag.Diagnostics, of func(key string, a map[string]attr.Value) T) map[string]T {
	out := make(map[string]T, len(v.Elements()))
	for k, e := range v.Elements() {
		if a, ok := MemberAttrs(k, e, diags); ok {
			out[k] = of(k, a)
		}
	}
	return out
}

// ObjectListsOfMap reads a map of lists of objects (known, from state).
func ObjectListsOfMap(v types.Map, diags *diag.Diagnostics) map[string][]types.Object {
	out := make(map[string][]types.Object, len(v.Elements()))
	for k, e := range v.Elements() {
		var objs []types.Object
		for i, o := range tfkit.ObjectsOf(e) {
			obj, ok := o.(types.Object)
			if !ok {
				diags.AddError("Unexpected member value", fmt.Sprintf("Member %q, item %d is not an object; this is a bug in the provider.", k, i+1))
				continue
			}
			objs = append(objs, obj)
		}
		out[k] = objs
	}
	return out
}
