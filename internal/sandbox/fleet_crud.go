package sandbox

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/primeintellect/terraform-provider-prime/internal/egress"
	"github.com/primeintellect/terraform-provider-prime/internal/memberkit"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

func (r *sandboxFleetResource) applyContext(ctx context.Context, plan sandboxFleetModel, config interface {
	GetAttribute(context.Context, path.Path, any) diag.Diagnostics
}, diags *diag.Diagnostics) fleetApply {
	var secretsWO types.Map
	diags.Append(config.GetAttribute(ctx, path.Root("secrets_wo"), &secretsWO)...)
	a := fleetApply{client: r.client, journal: r.journal, recovery: r.recovery, prefix: plan.NamePrefix.ValueString(), template: plan.template(), secretsWO: tfkit.StringMapOf(ctx, secretsWO, diags)}
	a.born, _ = egress.BornPolicy(ctx, plan.Egress, diags)
	var d diag.Diagnostics
	a.timeout, d = tfkit.TimeoutOf(plan.Timeouts, "create", defaultSandboxCreateTimeout)
	diags.Append(d...)
	a.buildTimeout, d = tfkit.TimeoutOf(plan.Timeouts, "image_build", prime.DefaultImageBuildTimeout)
	diags.Append(d...)
	a.egressTimeout, d = tfkit.TimeoutOf(plan.Timeouts, "egress", egress.DefaultTimeout)
	diags.Append(d...)
	a.pauseTimeout, d = tfkit.TimeoutOf(plan.Timeouts, "update", defaultPauseTimeout)
	diags.Append(d...)
	return a
}

// settleTemplate gives the template's Optional+Computed values a known
// value after an apply: the configuration's, or null.
func settleTemplate(f *sandboxFleetModel) {
	for _, s := range []*types.String{&f.GPUType, &f.TeamID, &f.Region} {
		if s.IsUnknown() {
			*s = types.StringNull()
		}
	}
	// What a restore takes from the checkpoint is not sent, so the template
	// holds none (members may differ from nothing it says).
	for _, v := range []*types.Float64{&f.DiskSizeGB, &f.MemoryGB} {
		if v.IsUnknown() {
			*v = types.Float64Null()
		}
	}
	if f.CPUCores.IsUnknown() {
		f.CPUCores = wholeNumber{Int64Value: types.Int64Null()}
	}
	f.SecretsWO = types.MapNull(types.StringType)
}

func (r *sandboxFleetResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var plan sandboxFleetModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	a := r.applyContext(ctx, plan, req.Config, &resp.Diagnostics)
	keys, _ := fleetKeys(ctx, plan, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.ID = types.StringValue("fleet-" + prime.NewIdempotencyKey()[:16])
	var problems memberkit.Problems
	// Every member that exists reaches state before the waits (never an
	// untracked sandbox).
	save := func(members map[string]fleetMember) {
		state := plan
		settleTemplate(&state)
		setFleetMembers(&state, members)
		resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &state)...)
		resp.Diagnostics.Append(setFleetIdentity(ctx, resp.Identity, "", state)...)
	}
	tflog.Info(ctx, "creating fleet members", map[string]any{"members": len(keys)})
	healthy := a.createMembers(ctx, keys, &problems, save)
	// Paused last: every member is locked first, and keeps its lock paused.
	if act, paused := pauseChange(plan.Paused, types.BoolNull(), true); act && ctx.Err() == nil {
		pc, _ := readPauseCheckpoints(ctx, nil)
		setMembersPaused(ctx, r.client, healthy, paused, a.pauseTimeout, pc, &problems)
		resp.Diagnostics.Append(pc.save(ctx, resp.Private)...)
		pc.unlistedWarning(&resp.Diagnostics)
	}
	save(healthy)
	switch {
	case ctx.Err() != nil:
		resp.Diagnostics.AddError("Fleet create interrupted", fleetInterrupted(&problems, healthy, keys, true, !plan.CheckpointID.IsNull()))
	case problems.Len() > 0:
		resp.Diagnostics.AddError("Fleet members failed", sandboxFleetFailure(&problems, healthy, keys, true))
	}
}

func (r *sandboxFleetResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var state sandboxFleetModel
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	_, d := tfkit.ReadAfterImport(ctx, req.Private, resp.Private)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	members := sandboxFleetMembers(state, &resp.Diagnostics)
	ids := make([]string, 0, len(members))
	keyOf := map[string]string{}
	for k, m := range members {
		ids = append(ids, m.ID.ValueString())
		keyOf[m.ID.ValueString()] = k
	}
	sort.Strings(ids)
	var dropped []string
	res, err := r.client.BatchStatusAll(ctx, ids)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read fleet members", err.Error())
		return
	}
	var foreign []string
	for _, e := range res.Errors {
		switch e.Code {
		case prime.BatchCodeNotFound:
			dropped = append(dropped, fmt.Sprintf("%q (%s: gone)", keyOf[e.SandboxID], e.SandboxID))
			delete(members, keyOf[e.SandboxID])
		case prime.BatchCodeForbidden:
			foreign = append(foreign, fmt.Sprintf("%q (%s)", keyOf[e.SandboxID], e.SandboxID))
		}
	}
	if len(foreign) > 0 {
		// Not gone: only not this key's to see. Dropping them would leave
		// them running untracked, and creating new ones would double the
		// fleet; the state stays as it is until the key or team is right.
		sort.Strings(foreign)
		resp.Diagnostics.AddError("Fleet members belong to another account or team",
			fmt.Sprintf("The platform reports these members as FORBIDDEN: they exist, but not for this API key. "+
				"Check the provider's api_key and team_id: they must be those the fleet was created with. "+
				"The state is left as it is: %s.", strings.Join(foreign, ", ")))
		return
	}
	for _, s := range res.Statuses {
		k := keyOf[s.SandboxID]
		if prime.IsTerminalStatus(s.Status) {
			dropped = append(dropped, fmt.Sprintf("%q (%s: %s)", k, s.SandboxID, s.Status))
			delete(members, k)
			continue
		}
		m := members[k]
		m.Status = types.StringValue(s.Status)
		members[k] = m
	}
	if len(dropped) > 0 {
		sort.Strings(dropped)
		resp.Diagnostics.AddWarning("Fleet members are gone",
			fmt.Sprintf("These members no longer run and are removed from state; the next apply creates them again "+
				"in place: %s.", strings.Join(dropped, ", ")))
	}
	state.Egress = egress.BlockWithDigest(ctx, state.Egress, &resp.Diagnostics)
	if eg, d := egress.BlockModelOf(ctx, state.Egress); eg != nil && !d.HasError() {
		r.refreshMemberEgress(ctx, members, eg, &resp.Diagnostics)
	}
	state.Paused = fleetPausedOnRefresh(state.Paused, members)
	setFleetMembers(&state, members)
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &state)...)
	resp.Diagnostics.Append(setFleetIdentity(ctx, resp.Identity, fleetLabelOf(ctx, req.Identity), state)...)
}

// Update adds and removes members in place, re-creates members that
// dropped out, and applies an egress change to every member; everything
// else replaces the fleet.
func (r *sandboxFleetResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var plan, state sandboxFleetModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	a := r.applyContext(ctx, plan, req.Config, &resp.Diagnostics)
	keys, _ := fleetKeys(ctx, plan, &resp.Diagnostics)
	pc, d := readPauseCheckpoints(ctx, req.Private)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	have, err := rekeyMembers(sandboxFleetMembers(state, &resp.Diagnostics), plan.NamePrefix)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("name_prefix"), "Cannot key the fleet's members", err.Error())
		return
	}
	want := map[string]bool{}
	var add []string
	for _, k := range keys {
		want[k] = true
		if _, ok := have[k]; !ok {
			add = append(add, k)
		}
	}
	var remove []string
	for k := range have {
		if !want[k] {
			remove = append(remove, k)
		}
	}
	a.held = map[string]bool{}
	for _, m := range have {
		a.held[m.ID.ValueString()] = true
	}
	// Redone members go with the removed ones, and come back with the added.
	redo := membersToRedo(plan.MemberTriggers, state.MemberTriggers, keptKeys(keys, have), tfkit.WasImported(ctx, req.Private))
	if restoreChanged(plan.CheckpointID, state.CheckpointID) {
		// Every member, from the new checkpoint.
		redo = keptKeys(keys, have)
	}
	var problems memberkit.Problems
	members := map[string]fleetMember{}
	for k, m := range have {
		if want[k] && !slices.Contains(redo, k) {
			members[k] = m
		}
	}
	var notRedone []string // redone members whose sandbox could not be deleted
	save := func(extra map[string]fleetMember) {
		out := plan
		out.MemberTriggers = triggersAfterRedo(plan.MemberTriggers, state.MemberTriggers, notRedone)
		all := map[string]fleetMember{}
		for k, m := range members {
			all[k] = m
		}
		for k, m := range extra {
			all[k] = m
		}
		for k, m := range have {
			if !want[k] {
				all[k] = m // not deleted yet
			}
		}
		settleTemplate(&out)
		setFleetMembers(&out, all)
		resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &out)...)
		resp.Diagnostics.Append(setFleetIdentity(ctx, resp.Identity, fleetLabelOf(ctx, req.Identity), out)...)
	}

	// Removed and redone keys first, so a shrinking fleet frees its quota
	// before growing. A redone member that could not be deleted stays as it
	// was, and is not created again.
	deleteTimeout := timeoutOrDefault(state.Timeouts, "delete", defaultSandboxDeleteTimeout)
	kept := deleteMembers(ctx, r.client, have, append(slices.Clone(remove), redo...), deleteTimeout, &problems)
	for k, m := range kept {
		members[k] = m
		if want[k] {
			notRedone = append(notRedone, k)
		}
	}
	for _, k := range redo {
		if _, stays := kept[k]; !stays {
			add = append(add, k)
		}
	}
	slices.Sort(add)
	// A resume comes before an egress change (a policy written to a paused
	// member is only enforced on resume), a pause after it and after the
	// new members, which are created running.
	act, paused := fleetPauseChange(plan.Paused, state.Paused, members)
	pauseFailed := false
	if act && !paused {
		before := problems.Len()
		setMembersPaused(ctx, r.client, members, false, a.pauseTimeout, pc, &problems)
		pauseFailed = problems.Len() > before
	}
	// The egress block's change reaches the members that stay.
	refused := false
	if egressChanged(ctx, plan, state) {
		own, _ := egress.PolicyOfBlockState(ctx, egress.BlockState{Egress: state.Egress}, &resp.Diagnostics)
		refused = r.rewriteMemberEgress(ctx, members, a, own, &problems)
	}
	if len(add) > 0 {
		tflog.Info(ctx, "adding fleet members", map[string]any{"members": len(add)})
		for k, m := range a.createMembers(ctx, add, &problems, save) {
			members[k] = m
		}
	}
	if paused && (act || len(add) > 0) && ctx.Err() == nil {
		before := problems.Len()
		setMembersPaused(ctx, r.client, members, true, a.pauseTimeout, pc, &problems)
		pauseFailed = pauseFailed || problems.Len() > before
	}
	out := plan
	out.MemberTriggers = triggersAfterRedo(plan.MemberTriggers, state.MemberTriggers, notRedone)
	if pauseFailed {
		// The next plan proposes the pause or resume again.
		out.Paused = state.Paused
	}
	if len(notRedone) > 0 && restoreChanged(plan.CheckpointID, state.CheckpointID) {
		// Members still on the previous checkpoint: the next plan restores
		// again.
		out.CheckpointID = state.CheckpointID
	}
	if refused {
		// A member's layered policy kept the new block off it: the state
		// keeps the previous block, so the next plan proposes the change
		// again (members that took it are written again, harmlessly).
		out.Egress = state.Egress
	}
	settleTemplate(&out)
	setFleetMembers(&out, members)
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &out)...)
	resp.Diagnostics.Append(setFleetIdentity(ctx, resp.Identity, fleetLabelOf(ctx, req.Identity), out)...)
	resp.Diagnostics.Append(tfkit.ClearImported(ctx, resp.Private)...)
	// The pause checkpoints of members deleted now (removed, redone) or gone
	// before (a refresh dropped them), and those a failed deletion left.
	pc.deleteOf(ctx, r.client, pausedAndGone(pc, members), deleteTimeout, &resp.Diagnostics)
	pc.unlistedWarning(&resp.Diagnostics)
	resp.Diagnostics.Append(pc.save(ctx, resp.Private)...)
	switch {
	case ctx.Err() != nil:
		resp.Diagnostics.AddError("Fleet update interrupted", fleetInterrupted(&problems, members, keys, false, !plan.CheckpointID.IsNull()))
	case problems.Len() > 0:
		resp.Diagnostics.AddError("Fleet members failed", sandboxFleetFailure(&problems, members, keys, false))
	}
}

func (r *sandboxFleetResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var state sandboxFleetModel
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	pc, d := readPauseCheckpoints(ctx, req.Private)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	members := sandboxFleetMembers(state, &resp.Diagnostics)
	var problems memberkit.Problems
	timeout := timeoutOrDefault(state.Timeouts, "delete", defaultSandboxDeleteTimeout)
	kept := deleteMembers(ctx, r.client, members, tfkit.SortedKeys(members), timeout, &problems)
	if len(kept) > 0 {
		resp.Diagnostics.AddError("Fleet members not deleted", problems.String())
	}
	// Only the deleted members' pause checkpoints: a checkpoint not yet
	// DURABLE went with its sandbox, a DURABLE one outlives it.
	pc.deleteOf(ctx, r.client, pausedAndGone(pc, kept), timeout, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		// What could not be deleted stays in state (members) and private
		// state (pause checkpoints), so a destroy can retry.
		setFleetMembers(&state, kept)
		resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &state)...)
		resp.Diagnostics.Append(pc.save(ctx, resp.Private)...)
	}
}

// pausedAndGone are the sandboxes with recorded pause checkpoints that are
// no longer among members: deleted, or found gone.
func pausedAndGone(pc *pauseCheckpoints, members map[string]fleetMember) []string {
	live := map[string]bool{}
	for _, m := range members {
		live[m.ID.ValueString()] = true
	}
	var gone []string
	for _, id := range pc.sandboxes() {
		if !live[id] {
			gone = append(gone, id)
		}
	}
	return gone
}
