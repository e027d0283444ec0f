package sandbox

import (
	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// sandboxFleetModel is prime_sandbox_fleet's state: the template (the same
// arguments as prime_sandbox, embedded from the same types), the members,
// and what the platform reports per member.
type sandboxFleetModel struct {
	ID             types.String `tfsdk:"id"`
	Size           types.Int64  `tfsdk:"size"`
	Members        types.Set    `tfsdk:"members"`
	MemberTriggers types.Map    `tfsdk:"member_triggers"`
	NamePrefix     types.String `tfsdk:"name_prefix"`
	sandboxSpec
	sandboxInputs
	// Paused pauses or resumes every member; null is not managed.
	Paused     types.Bool     `tfsdk:"paused"`
	SandboxIDs types.Map      `tfsdk:"sandbox_ids"`
	Sandboxes  types.Map      `tfsdk:"sandboxes"`
	Timeouts   timeouts.Value `tfsdk:"timeouts"`
}

// template is what each member is created from.
func (f sandboxFleetModel) template() sandboxTemplate {
	return sandboxTemplate{sandboxSpec: f.sandboxSpec, sandboxInputs: f.sandboxInputs}
}

// fleetMember is one entry of `sandboxes`.
type fleetMember struct {
	ID               types.String `tfsdk:"id"`
	Name             types.String `tfsdk:"name"`
	Status           types.String `tfsdk:"status"`
	CreatedAt        types.String `tfsdk:"created_at"`
	EgressGeneration types.Int64  `tfsdk:"egress_generation"`
	EgressApplied    types.Bool   `tfsdk:"egress_applied"`
}

// sandboxFleetMembers reads the `sandboxes` map of a state.
func sandboxFleetMembers(f sandboxFleetModel, diags *diag.Diagnostics) map[string]fleetMember {
	if f.Sandboxes.IsNull() || f.Sandboxes.IsUnknown() {
		return map[string]fleetMember{}
	}
	return fleetMembersOfMap(f.Sandboxes, diags)
}

// setFleetMembers writes members into the state's maps.
func setFleetMembers(f *sandboxFleetModel, members map[string]fleetMember) {
	ids := make(map[string]attr.Value, len(members))
	for k, m := range members {
		ids[k] = types.StringValue(m.ID.ValueString())
	}
	f.SandboxIDs = types.MapValueMust(types.StringType, ids)
	f.Sandboxes = fleetMembersValue(members)
}

// memberFromSandbox is a member entry from a sandbox object.
func memberFromSandbox(sb *prime.Sandbox, egress bool) fleetMember {
	m := fleetMember{
		ID: types.StringValue(sb.ID), Name: types.StringValue(sb.Name), Status: types.StringValue(sb.Status),
		CreatedAt: timeValue(&sb.CreatedAt), EgressGeneration: types.Int64Null(), EgressApplied: types.BoolNull(),
	}
	if egress {
		m.EgressApplied = types.BoolValue(false)
	}
	return m
}
