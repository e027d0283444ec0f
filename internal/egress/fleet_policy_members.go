package egress

import (
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/fleet"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

// A fleet policy's `members` are converted by hand, not with the
// framework's reflection, which compiles a regular expression for every
// struct field it visits (about 10 000 for a 1000-member fleet's refresh).

var fleetPolicyMemberAttrTypes = map[string]attr.Type{
	"sandbox_id": types.StringType, "generation": types.Int64Type, "applied_generation": types.Int64Type,
	"applied": types.BoolType,
}

func fleetPolicyMemberType() types.ObjectType {
	return types.ObjectType{AttrTypes: fleetPolicyMemberAttrTypes}
}

// object is p as an entry of `members`.
func (p fleetPolicyMember) object() types.Object {
	return types.ObjectValueMust(fleetPolicyMemberAttrTypes, map[string]attr.Value{
		"sandbox_id": p.SandboxID, "generation": p.Generation, "applied_generation": p.AppliedGeneration,
		"applied": p.Applied,
	})
}

// fleetPolicyMembersValue is the `members` map of a fleet policy.
func fleetPolicyMembersValue(members map[string]fleetPolicyMember) types.Map {
	elems := make(map[string]attr.Value, len(members))
	for k, p := range members {
		elems[k] = p.object()
	}
	return types.MapValueMust(fleetPolicyMemberType(), elems)
}

// fleetPolicyMembersOfMap reads a `members` map.
func fleetPolicyMembersOfMap(v types.Map, diags *diag.Diagnostics) map[string]fleetPolicyMember {
	return fleet.MembersOfMap(v, diags, func(_ string, a map[string]attr.Value) fleetPolicyMember {
		return fleetPolicyMember{
			SandboxID: tfkit.StringAttr(a, "sandbox_id"), Generation: tfkit.Int64Attr(a, "generation"),
			AppliedGeneration: tfkit.Int64Attr(a, "applied_generation"), Applied: tfkit.BoolAttr(a, "applied"),
		}
	})
}
