package sandbox

import (
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/memberkit"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

// Per-member values of the fleet resources are converted by hand, not with
// the framework's reflection (ObjectValueFrom, MapValueFrom, ElementsAs):
// reflection compiles a regular expression for every struct field it
// visits, so a 1000-member fleet paid for about 10 000 compilations on
// every refresh, plan and apply.

var fleetMemberAttrTypes = map[string]attr.Type{
	"id": types.StringType, "name": types.StringType, "status": types.StringType, "created_at": types.StringType,
	"egress_generation": types.Int64Type, "egress_applied": types.BoolType,
}

func fleetMemberType() types.ObjectType {
	return types.ObjectType{AttrTypes: fleetMemberAttrTypes}
}

// object is m as an entry of `sandboxes`.
func (m fleetMember) object() types.Object {
	return types.ObjectValueMust(fleetMemberAttrTypes, map[string]attr.Value{
		"id": m.ID, "name": m.Name, "status": m.Status, "created_at": m.CreatedAt,
		"egress_generation": m.EgressGeneration, "egress_applied": m.EgressApplied,
	})
}

// fleetMembersValue is the `sandboxes` map of members.
func fleetMembersValue(members map[string]fleetMember) types.Map {
	elems := make(map[string]attr.Value, len(members))
	for k, m := range members {
		elems[k] = m.object()
	}
	return types.MapValueMust(fleetMemberType(), elems)
}

// fleetMembersOfMap reads a `sandboxes` map.
func fleetMembersOfMap(v types.Map, diags *diag.Diagnostics) map[string]fleetMember {
	return memberkit.MembersOfMap(v, diags, func(_ string, a map[string]attr.Value) fleetMember {
		return fleetMember{
			ID: tfkit.StringAttr(a, "id"), Name: tfkit.StringAttr(a, "name"), Status: tfkit.StringAttr(a, "status"),
			CreatedAt: tfkit.StringAttr(a, "created_at"), EgressGeneration: tfkit.Int64Attr(a, "egress_generation"),
			EgressApplied: tfkit.BoolAttr(a, "egress_applied"),
		}
	})
}
