package sandbox

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/egress"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

// memberKeyPattern keeps keys usable in names and as map keys.
var memberKeyPattern = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// fleetKeys are the member keys a plan or config asks for; known is false
// while they are unknown.
func fleetKeys(ctx context.Context, f sandboxFleetModel, diags *diag.Diagnostics) (keys []string, known bool) {
	switch {
	case !f.Size.IsNull():
		if f.Size.IsUnknown() {
			return nil, false
		}
		n := int(f.Size.ValueInt64())
		keys = make([]string, n)
		for i := range n {
			keys[i] = strconv.Itoa(i)
		}
		return keys, true
	case !f.Members.IsNull():
		if f.Members.IsUnknown() {
			return nil, false
		}
		for _, e := range f.Members.Elements() {
			if e.IsUnknown() {
				return nil, false
			}
		}
		var out []string
		diags.Append(f.Members.ElementsAs(ctx, &out, false)...)
		sort.Strings(out)
		return out, true
	}
	return []string{}, true
}

func memberName(prefix, key string) string { return prefix + "-" + key }

func (r *sandboxFleetResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var f sandboxFleetModel
	resp.Diagnostics.Append(tfkit.GetConfig(ctx, req.Config, &f)...)
	if resp.Diagnostics.HasError() {
		return
	}
	// One member stands for all: the template is what is checked.
	validateSandbox(ctx, f.template(), &resp.Diagnostics)
	if keys, known := fleetKeys(ctx, f, &resp.Diagnostics); known {
		validateMemberTriggers(f.MemberTriggers, keys, &resp.Diagnostics)
	}
}

// ModifyPlan plans the members: kept members keep their entries; new,
// dropped or replaced ones become unknown entries; an egress change makes
// every member's egress status unknown.
func (r *sandboxFleetResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if !req.State.Raw.IsNull() {
		// Terraform holds these members: their create-journal entries go.
		var ids map[string]string
		if !req.State.GetAttribute(ctx, path.Root("sandbox_ids"), &ids).HasError() {
			r.journal.Forget(slices.Collect(maps.Values(ids))...)
		}
	}
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan sandboxFleetModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	es := &egress.BlockState{Egress: plan.Egress}
	var prior *egress.BlockState
	var state sandboxFleetModel
	if !req.State.Raw.IsNull() {
		resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
		prior = &egress.BlockState{Egress: state.Egress, EgressApplied: types.BoolValue(fleetEgressApplied(ctx, state))}
	}
	egressWrites := egress.PlanBlock(ctx, es, prior, &resp.Diagnostics)
	plan.Egress = es.Egress

	keys, known := fleetKeys(ctx, plan, &resp.Diagnostics)
	if !known {
		plan.SandboxIDs = types.MapUnknown(types.StringType)
		plan.Sandboxes = types.MapUnknown(fleetMemberType())
		resp.Diagnostics.Append(tfkit.SetPlan(ctx, &resp.Plan, &plan)...)
		return
	}
	have := map[string]fleetMember{}
	if prior != nil {
		var err error
		if have, err = rekeyMembers(sandboxFleetMembers(state, &resp.Diagnostics), plan.NamePrefix); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("name_prefix"), "Cannot key the fleet's members", err.Error())
			return
		}
		imported := tfkit.WasImported(ctx, req.Private)
		if imported {
			warnRecordedAfterImport(plan.sandboxInputs, state.sandboxInputs, &resp.Diagnostics)
			warnMembersNotRenamed(plan.NamePrefix, have, &resp.Diagnostics)
			warnTriggersRecordedAfterImport(plan.MemberTriggers, state.MemberTriggers, &resp.Diagnostics)
		}
		// A redone member is planned as a new one.
		for _, k := range membersToRedo(plan.MemberTriggers, state.MemberTriggers, keptKeys(keys, have), imported) {
			delete(have, k)
		}
		// So is every member restored from another checkpoint.
		if restoreChanged(plan.CheckpointID, state.CheckpointID) {
			clear(have)
		}
	}
	pauses, pausedTo := pauseChange(plan.Paused, state.Paused, true)
	if prior != nil {
		pauses, pausedTo = fleetPauseChange(plan.Paused, state.Paused, have)
	}
	ids := make(map[string]attr.Value, len(keys))
	members := make(map[string]attr.Value, len(keys))
	for _, k := range keys {
		m, ok := have[k]
		if !ok {
			ids[k] = types.StringUnknown()
			members[k] = types.ObjectUnknown(fleetMemberType().AttrTypes)
			continue
		}
		ids[k] = m.ID
		if pauses && len(resp.RequiresReplace) == 0 {
			m.Status = types.StringValue(pausedStatus(pausedTo))
		}
		if !plan.Egress.IsNull() && egressWrites {
			m.EgressGeneration, m.EgressApplied = types.Int64Unknown(), types.BoolValue(true)
		} else if plan.Egress.IsNull() {
			m.EgressGeneration, m.EgressApplied = types.Int64Null(), types.BoolNull()
		}
		members[k] = m.object()
	}
	var d diag.Diagnostics
	plan.SandboxIDs, d = types.MapValue(types.StringType, ids)
	resp.Diagnostics.Append(d...)
	plan.Sandboxes, d = types.MapValue(fleetMemberType(), members)
	resp.Diagnostics.Append(d...)
	resp.Diagnostics.Append(tfkit.SetPlan(ctx, &resp.Plan, &plan)...)
	if prior != nil && plan.Egress.IsNull() && !state.Egress.IsNull() {
		resp.Diagnostics.AddAttributeWarning(egress.BlockPath, "Removing egress reopens the members",
			"The egress block of the fleet is removed: this apply writes an unrestricted egress policy to every "+
				"member (in place) and waits until it is enforced.")
	}
}

// warnMembersNotRenamed explains the first plan after an import whose
// name_prefix the member names do not carry: like the settings the platform
// cannot report, the prefix is recorded without replacing (or renaming)
// anything; only members created from then on carry it.
func warnMembersNotRenamed(prefix types.String, members map[string]fleetMember, diags *diag.Diagnostics) {
	if prefix.IsUnknown() {
		return
	}
	var differ []string
	for _, k := range tfkit.SortedKeys(members) {
		if name := members[k].Name.ValueString(); name != memberName(prefix.ValueString(), k) {
			differ = append(differ, fmt.Sprintf("%q (%s)", k, name))
		}
	}
	if len(differ) == 0 {
		return
	}
	diags.AddAttributeWarning(path.Root("name_prefix"), "Imported fleet: recording name_prefix without renaming members",
		fmt.Sprintf("These members are not named %s-<key>: %s. This apply records name_prefix without replacing or "+
			"renaming them; members created from now on are named %s-<key>. To rename them all, replace the "+
			"fleet (terraform apply -replace=...).", prefix.ValueString(), strings.Join(differ, ", "), prefix.ValueString()))
}

// rekeyMembers keys members by their names under prefix (`<prefix>-<key>`).
// An import guesses the prefix from the names alone (at their last "-"); the
// configuration's name_prefix settles it, so keys that contain "-" keep
// their members instead of having them deleted and created again. Members
// are taken in key order, and none is ever dropped: two that land on one
// key (`a`, and `eval-a` under prefix `eval`) are an error naming both.
// Inventing a key for one of them would plan it as a member the
// configuration does not ask for, to be deleted; which sandbox is the
// member is the user's call.
func rekeyMembers(members map[string]fleetMember, prefix types.String) (map[string]fleetMember, error) {
	if prefix.IsNull() || prefix.IsUnknown() {
		return members, nil
	}
	out := make(map[string]fleetMember, len(members))
	for _, k := range tfkit.SortedKeys(members) {
		m := members[k]
		if key, ok := strings.CutPrefix(m.Name.ValueString(), prefix.ValueString()+"-"); ok && key != "" {
			k = key
		}
		if prev, clash := out[k]; clash {
			return nil, fmt.Errorf("sandboxes %s (%q) and %s (%q) both map to member key %q under name_prefix %q, "+
				"and a key names one member. Rename or delete one of them, or set a name_prefix under which their "+
				"keys differ", prev.ID.ValueString(), prev.Name.ValueString(), m.ID.ValueString(), m.Name.ValueString(),
				k, prefix.ValueString())
		}
		out[k] = m
	}
	return out, nil
}
