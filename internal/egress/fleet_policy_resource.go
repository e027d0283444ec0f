package egress

// prime_fleet_egress_policy: one composed egress policy on every member of a
// fleet, each member locked, relocked and restored through the code paths of
// prime_egress_policy (lockSandbox, relockSandbox, restoreEgress, ReadStatus).

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/primeintellect/terraform-provider-prime/internal/memberkit"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

var (
	_ resource.ResourceWithConfigure      = (*fleetEgressPolicyResource)(nil)
	_ resource.ResourceWithValidateConfig = (*fleetEgressPolicyResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*fleetEgressPolicyResource)(nil)
)

// NewFleetPolicyResource is the prime_fleet_egress_policy constructor.
func NewFleetPolicyResource() resource.Resource { return &fleetEgressPolicyResource{} }

type fleetEgressPolicyResource struct {
	client    *prime.Client
	baselines *Baselines
}

func (r *fleetEgressPolicyResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_fleet_egress_policy"
}

func (r *fleetEgressPolicyResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = tfkit.ClientFrom(req.ProviderData, &resp.Diagnostics)
	r.baselines = BaselinesFrom(req.ProviderData)
}

func (r *fleetEgressPolicyResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := egressListAttributes("Changing it updates every member in place and waits for enforcement again.")
	for k, v := range effectiveListAttributes() {
		attrs[k] = v
	}
	attrs["id"] = schema.StringAttribute{
		Computed: true,
		MarkdownDescription: "ID of this policy's current writes: new on create (also a replacement, such as after a " +
			"change of `after`) and whenever the policy is written again on members it already holds — a change of " +
			"`allow`, `block` or `routes` that changes what is sent (every member), or the rewrite of a member that a " +
			"refresh found not enforced; the plan shows it unknown until then. A command whose `triggers` name it runs " +
			"again on every member after every re-lock. Members that join, leave, get a new sandbox or change keys keep it: their " +
			"own `generation` in `members` changes instead, for `member_triggers` (the member alone runs again). A " +
			"change that only respells the same destinations writes nothing and keeps it.",
	}
	attrs["sandbox_ids"] = memberkit.SandboxIDsAttribute("Member key → ID of a sandbox that is `RUNNING`, usually " +
		"`prime_sandbox_fleet.<name>.sandbox_ids`. Changing it updates in place: new members and members whose " +
		"sandbox ID changed are locked; removed members get back what they held before (the reuse guard " +
		"applies); the others are untouched. A sandbox that moves to another key (a renamed key) keeps its " +
		"policy without a write. Each sandbox may appear under one key only.")
	attrs["after"] = afterAttribute(false)
	attrs["members"] = memberkit.MemberMapAttribute("Member key → the policy's state on that member. A member whose "+
		"sandbox is gone drops out at refresh (the next apply locks it again if it is still in `sandbox_ids`).",
		fleetPolicyMemberAttrTypes, []memberkit.MemberField{
			{Name: "sandbox_id", Description: "Sandbox of the member."},
			{Name: "generation", Description: generationDoc + " Unknown in the plan whenever the member will be " +
				"written (locked, relocked or rewritten), so `member_triggers = { for k, m in " +
				"prime_fleet_egress_policy.<name>.members : k => m.generation }` runs a member's agent again exactly " +
				"when its lock is written."},
			{Name: "applied", Description: appliedDoc + " On a fleet it is also `false` when a refresh finds the member " +
				"holding other destinations than `effective_allow`/`effective_block` (a change from the CLI); the next " +
				"apply rewrites that member only."},
		})
	resp.Schema = schema.Schema{
		MarkdownDescription: "One host-level egress policy on every member of a sandbox fleet: what " +
			"`prime_egress_policy` does for one sandbox, for each member concurrently, with the same lists, " +
			"validation and composition (`effective_allow`/`effective_block` are the one policy every member gets).\n\n" +
			"Create returns only once **every** member's data plane enforces the policy. If any member is not " +
			"enforced within its timeout (default 60 s, per member, counted from the platform's acceptance) the " +
			"apply fails closed with one error naming each such member, and nothing is recorded: nothing that " +
			"depends on this resource — such as the fleet's agent command — starts, and the next apply writes and " +
			"waits again; restrictions already written stay in place, never lifted in between.\n\n" +
			"An update touches only the members that need it: new members and members whose sandbox ID changed are " +
			"locked, members found not enforced (or drifted) are written again, a change of `allow`, `block` or " +
			"`routes` relocks every member, and removed members get back what they held before. Destroy restores " +
			"every member concurrently — unrestricted egress, or the lists an `egress` block locked it to (at create, " +
			"or right after a restore) — and leaves a member alone when a newer policy written by someone else holds " +
			"it (named in one warning for the fleet). It costs one read and one write of each member's policy, well " +
			"within the platform's per-sandbox limits, and no wait: the platform has stored each restore when it " +
			"accepts it and enforces it on its own, so the members of a fleet destroyed next are deleted at once, and " +
			"a kept member's `require_open_egress` setup waits for its restore. Import is not supported.",
		Attributes: attrs,
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{
				Create: true, Update: true, Delete: true,
				CreateDescription: "How long to wait, per member, after the platform accepted the policy, for the " +
					"data plane to enforce it (default `60s`). On timeout the apply fails closed.",
				UpdateDescription: "As `create`, for relocking existing members (default `60s`); new members use `create`.",
				DeleteDescription: "How long a restore may take to be enforced, per member, counted from its write " +
					"(default `60s`). A member removed from `sandbox_ids` is waited for that long and fails the update " +
					"when it is not enforced by then. Destroy does not wait for its restores; a setup step with " +
					"`require_open_egress` on a kept member, later in the same apply, waits for that member's restore " +
					"that long before refusing to run.",
			}),
		},
	}
}

func (r *fleetEgressPolicyResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m fleetEgressPolicyModel
	resp.Diagnostics.Append(tfkit.GetConfig(ctx, req.Config, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	m.Lists.Validate(ctx, path.Empty(), &resp.Diagnostics)
	if m.SandboxIDs.IsNull() || m.SandboxIDs.IsUnknown() {
		return
	}
	known := map[string]string{}
	for k, v := range m.SandboxIDs.Elements() {
		if s, ok := v.(types.String); ok && !s.IsNull() && !s.IsUnknown() {
			known[k] = s.ValueString()
		}
	}
	if dup := sameSandboxTwice(known); dup != "" {
		resp.Diagnostics.AddAttributeError(path.Root("sandbox_ids"), "Invalid fleet egress policy", dup)
	}
}

// ModifyPlan plans the composed lists and the members: a member that will be
// written (new, moved to another sandbox, not enforced, or every member when
// the destinations change) gets unknown generations and applied = true; the
// others keep their entry.
func (r *fleetEgressPolicyResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy
	}
	var plan fleetEgressPolicyModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.Effective = unknownEffective()
	policy, d := plan.Lists.Planned(ctx)
	resp.Diagnostics.Append(d...)
	if policy != nil {
		plan.Effective, d = effectiveOf(ctx, *policy)
		resp.Diagnostics.Append(d...)
	}
	var prior map[string]fleetPolicyMember
	samePolicy := false
	if !req.State.Raw.IsNull() {
		var state fleetEgressPolicyModel
		resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
		prior = fleetMembersOf(state.Members, &resp.Diagnostics)
		prev, d := state.Policy(ctx)
		resp.Diagnostics.Append(d...)
		samePolicy = policy != nil && prime.SamePolicy(prev, *policy)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	plan.Members = types.MapUnknown(fleetPolicyMemberType())
	// The ID changes when a member already held is written again (see
	// rewrites); a create gets a new one.
	plan.ID = types.StringUnknown()
	if !plan.SandboxIDs.IsUnknown() {
		heldBy := make(map[string]string, len(prior)) // sandbox ID -> key in state
		for k, p := range prior {
			heldBy[p.SandboxID.ValueString()] = k
		}
		rewrites := false
		entries := map[string]attr.Value{}
		for key, v := range plan.SandboxIDs.Elements() {
			id, _ := v.(types.String)
			p, had := prior[key]
			holder, handedOver := heldBy[id.ValueString()]
			handedOver = handedOver && !id.IsUnknown() && holder != key
			written := true
			switch {
			case id.IsUnknown():
				entries[key] = types.ObjectUnknown(fleetPolicyMemberType().AttrTypes)
			case had && samePolicy && p.SandboxID.ValueString() == id.ValueString() && p.Applied.ValueBool():
				written = false
				entries[key] = p.object()
			case handedOver && samePolicy && prior[holder].Applied.ValueBool():
				// A sandbox handed over from another key (a renamed key, a
				// swap) keeps its record: nothing is written.
				written = false
				entries[key] = prior[holder].object()
			default:
				entries[key] = fleetPolicyMember{SandboxID: id, Generation: types.Int64Unknown(),
					Applied: types.BoolValue(true)}.object()
			}
			if written && rewritesHeldSandbox(id, key, prior, heldBy, samePolicy) {
				rewrites = true
			}
		}
		members, d := types.MapValue(fleetPolicyMemberType(), entries)
		resp.Diagnostics.Append(d...)
		plan.Members = members
		if !req.State.Raw.IsNull() && !rewrites {
			var state fleetEgressPolicyModel
			resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
			plan.ID = state.ID
		}
	}
	if req.State.Raw.IsNull() || !samePolicy {
		plan.Lists.warnPlanned(ctx, path.Empty(), &resp.Diagnostics)
	}
	resp.Diagnostics.Append(tfkit.SetPlan(ctx, &resp.Plan, &plan)...)
}

func (r *fleetEgressPolicyResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var plan fleetEgressPolicyModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	policy, ok := plan.Lists.compose(ctx, path.Empty(), &resp.Diagnostics)
	if !ok {
		return
	}
	timeout, d := plan.Timeouts.Create(ctx, DefaultTimeout)
	resp.Diagnostics.Append(d...)
	ids := tfkit.StringMapOf(ctx, plan.SandboxIDs, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	if dup := sameSandboxTwice(ids); dup != "" {
		resp.Diagnostics.AddAttributeError(path.Root("sandbox_ids"), "Invalid fleet egress policy", dup)
		return
	}
	tflog.Info(ctx, "locking fleet egress", map[string]any{"members": len(ids), "timeout": timeout.String()})
	out := &policyOutcomes{members: map[string]fleetPolicyMember{}, baselines: map[string]prime.EgressPolicy{}}
	var problems memberkit.Problems
	memberkit.ForEachMember(ctx, tfkit.SortedKeys(ids), 0, func(ctx context.Context, key string) {
		res, err := lockSandbox(ctx, r.client, r.baselines, ids[key], policy, timeout)
		if err != nil {
			problems.Add(key, "%s", memberLockProblem(ids[key], err))
			return
		}
		out.keep(key, policyMemberOf(ids[key], res.Generation), res.Baseline)
	})
	if problems.Len() > 0 {
		// Nothing is recorded: the policy does not exist for Terraform, so
		// dependents are not created and the next apply locks every member
		// again. Restrictions already written stay in place; the members
		// that took theirs keep their baselines in notes, as failed ones do.
		for key, m := range out.members {
			r.baselines.note(m.SandboxID.ValueString(), out.baselines[key], policy)
		}
		resp.Diagnostics.AddError("Egress policy not enforced on every member",
			fmt.Sprintf("%d of %d members failed, so the fleet's policy is not recorded as applied and nothing that "+
				"depends on it was started; the next apply locks every member again, without lifting any "+
				"restriction in between.\n\n%s", problems.Len(), len(ids), problems.String()))
		return
	}
	plan.ID = types.StringValue(prime.NewIdempotencyKey()[:16])
	resp.Diagnostics.Append(r.record(ctx, &plan, policy, out.members)...)
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &plan)...)
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, baselineKey, encodeMemberBaselines(out.baselines))...)
}

// Read refreshes every member. A member whose sandbox is gone drops out; a
// member whose platform policy is not this one, enforced, is recorded not
// applied, so the next apply writes it again.
func (r *fleetEgressPolicyResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var state fleetEgressPolicyModel
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	effective, d := state.Policy(ctx)
	resp.Diagnostics.Append(d...)
	state.withDigest(ctx)
	prior := fleetMembersOf(state.Members, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	out := &policyOutcomes{members: map[string]fleetPolicyMember{}}
	var problems, gone, unapplied memberkit.Problems
	memberkit.ForEachMember(ctx, tfkit.SortedKeys(prior), 0, func(ctx context.Context, key string) {
		p := prior[key]
		id := p.SandboxID.ValueString()
		st, isGone, err := ReadStatus(ctx, r.client, id)
		switch {
		case err != nil:
			problems.Add(key, "sandbox %s: %s", id, err)
			return
		case isGone:
			gone.Add(key, "sandbox %s no longer exists or no longer runs.", id)
			return
		}
		same := prime.SamePolicy(st.Policy, effective)
		p.Applied = types.BoolValue(same && st.Enforces(st.Generation))
		switch {
		case !same:
			unapplied.Add(key, "sandbox %s holds generation %d (%s), not this policy (%s).", id, st.Generation,
				Describe(st.Policy), Describe(effective))
		case !st.Enforces(st.Generation):
			unapplied.Add(key, "sandbox %s holds generation %d of this policy but enforces only generation %d.%s",
				id, st.Generation, st.AppliedGeneration, pendingWhilePaused(ctx, r.client, id))
		}
		out.set(key, p)
	})
	if problems.Len() > 0 {
		resp.Diagnostics.AddError("Cannot read egress policy", problems.String())
		return
	}
	if gone.Len() > 0 {
		resp.Diagnostics.AddWarning("Sandboxes are gone", "These members are removed from members; the next apply "+
			"locks them again if they are still in sandbox_ids.\n\n"+gone.String())
	}
	if unapplied.Len() > 0 {
		resp.Diagnostics.AddWarning("Egress policy not enforced on every member", "New connections on these members "+
			"may not follow the policy. The next apply writes it again on them and waits for enforcement.\n\n"+
			unapplied.String())
	}
	state.Members = fleetPolicyMembersValue(out.members)
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &state)...)
}

// Update first restores the sandboxes that leave the policy, then locks new
// and moved members, relocks members that are not enforced (every member
// when the destinations changed), and leaves the rest alone. If a restore
// fails, nothing else changes in this apply (every other member stays as
// recorded, so the next apply retries the same moves). Otherwise, on
// failure, members that succeeded are recorded; a failed relock is recorded
// not applied (so the next apply writes it again, and a destroy knows the
// write as its own); a failed new member is not recorded (as a failed
// create, its baseline noted).
func (r *fleetEgressPolicyResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var plan, state fleetEgressPolicyModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	policy, ok := plan.Lists.compose(ctx, path.Empty(), &resp.Diagnostics)
	if !ok {
		return
	}
	createTimeout, d := plan.Timeouts.Create(ctx, DefaultTimeout)
	resp.Diagnostics.Append(d...)
	updateTimeout, d := plan.Timeouts.Update(ctx, DefaultTimeout)
	resp.Diagnostics.Append(d...)
	deleteTimeout, d := plan.Timeouts.Delete(ctx, DefaultTimeout)
	resp.Diagnostics.Append(d...)
	stored, d := req.Private.GetKey(ctx, baselineKey)
	resp.Diagnostics.Append(d...)
	prev, d := state.Policy(ctx)
	resp.Diagnostics.Append(d...)
	ids := tfkit.StringMapOf(ctx, plan.SandboxIDs, &resp.Diagnostics)
	prior := fleetMembersOf(state.Members, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	if dup := sameSandboxTwice(ids); dup != "" {
		resp.Diagnostics.AddAttributeError(path.Root("sandbox_ids"), "Invalid fleet egress policy", dup)
		return
	}
	relockAll := !prime.SamePolicy(prev, policy)
	baselines := decodeMemberBaselines(stored)
	out := &policyOutcomes{members: map[string]fleetPolicyMember{}, baselines: map[string]prime.EgressPolicy{}}
	// The work is planned per sandbox, not per key: a sandbox that moves
	// between keys (a renamed key, two keys swapping sandboxes) is handed
	// over with its record and baseline, never restored by its old key
	// while its new key locks it (two concurrent writes, and the last one
	// could reopen a sandbox recorded as locked).
	wantedBy := make(map[string]string, len(ids)) // sandbox ID -> key
	for k, id := range ids {
		wantedBy[id] = k
	}
	heldBy := make(map[string]string, len(prior)) // sandbox ID -> key in state
	for k, p := range prior {
		heldBy[p.SandboxID.ValueString()] = k
	}
	var problems memberkit.Problems
	// First the sandboxes no key wants any more get back what they held.
	// If one cannot be, nothing else moves in this apply: every other
	// member stays as recorded (a sandbox about to change keys included),
	// so the next plan shows the same moves and retries them all.
	restoredKeys := map[string]bool{}
	var mu sync.Mutex
	memberkit.ForEachMember(ctx, tfkit.SortedKeys(prior), 0, func(ctx context.Context, key string) {
		p := prior[key]
		old := p.SandboxID.ValueString()
		if id, wanted := ids[key]; wanted && id == old {
			return
		}
		if _, handedOver := wantedBy[old]; handedOver {
			return
		}
		res, err := restoreEgress(ctx, r.client, old, p.Generation.ValueInt64(), baselines.of(key), deleteTimeout, false)
		if err != nil {
			problems.Add(key, "%s", err.Error())
			return
		}
		out.noteRestore(key, old, res)
		mu.Lock()
		restoredKeys[key] = true
		mu.Unlock()
	})
	if problems.Len() > 0 {
		for key, p := range prior {
			if !restoredKeys[key] {
				out.keep(key, p, baselines.of(key))
			}
		}
		plan.ID = state.ID // nothing was written
		resp.Diagnostics.Append(r.record(ctx, &plan, policy, out.members)...)
		resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &plan)...)
		resp.Diagnostics.Append(resp.Private.SetKey(ctx, baselineKey, encodeMemberBaselines(out.baselines))...)
		out.addWarnings(&resp.Diagnostics)
		resp.Diagnostics.AddError("Egress not restored",
			fmt.Sprintf("%d members' previous sandboxes could not be restored, so no member was locked, moved or "+
				"relocked in this apply; they stay as recorded and the next apply tries again.\n\n%s",
				problems.Len(), problems.String()))
		return
	}
	// Then every wanted member: handed over, locked, relocked or kept.
	memberkit.ForEachMember(ctx, tfkit.SortedKeys(ids), 0, func(ctx context.Context, key string) {
		id := ids[key]
		p, had := prior[key]
		baseline, rec, has := baselines.of(key), p, had && p.SandboxID.ValueString() == id
		if from, ok := heldBy[id]; ok && from != key {
			// Handed over from another key: its record and baseline.
			baseline, rec, has = baselines.of(from), prior[from], true
		}
		switch {
		case !has:
			res, err := lockSandbox(ctx, r.client, r.baselines, id, policy, createTimeout)
			if err != nil {
				problems.Add(key, "%s", memberLockProblem(id, err))
				return
			}
			out.keep(key, policyMemberOf(id, res.Generation), res.Baseline)
		case relockAll || !rec.Applied.ValueBool():
			out.rewrote()
			_, gen, err := relockSandbox(ctx, r.client, id, policy, updateTimeout)
			if err != nil {
				problems.Add(key, "%s", fmt.Sprintf("sandbox %s: %s", id, err))
				if gen > 0 {
					rec.Generation = types.Int64Value(gen)
				}
				rec.Applied = types.BoolValue(false)
				out.keep(key, rec, baseline)
				return
			}
			out.keep(key, policyMemberOf(id, gen), baseline)
		default:
			out.keep(key, rec, baseline)
		}
	})
	plan.ID = state.ID
	if out.rewrites {
		plan.ID = types.StringValue(prime.NewIdempotencyKey()[:16])
	}
	resp.Diagnostics.Append(r.record(ctx, &plan, policy, out.members)...)
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &plan)...)
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, baselineKey, encodeMemberBaselines(out.baselines))...)
	out.addWarnings(&resp.Diagnostics)
	if problems.Len() > 0 {
		resp.Diagnostics.AddError("Egress policy not enforced on every member",
			fmt.Sprintf("%d members failed; the others are recorded. The next apply writes the failed members "+
				"again, without lifting any restriction in between.\n\n%s", problems.Len(), problems.String()))
	}
}

// Delete restores every member (restoreEgress: the baseline, the reuse
// guard). Members that could not be restored stay in state, so destroy can
// be run again.
func (r *fleetEgressPolicyResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var state fleetEgressPolicyModel
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := state.Timeouts.Delete(ctx, DefaultTimeout)
	resp.Diagnostics.Append(d...)
	stored, d := req.Private.GetKey(ctx, baselineKey)
	resp.Diagnostics.Append(d...)
	prior := fleetMembersOf(state.Members, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	baselines := decodeMemberBaselines(stored)
	out := &policyOutcomes{members: map[string]fleetPolicyMember{}}
	var problems memberkit.Problems
	memberkit.ForEachMember(ctx, tfkit.SortedKeys(prior), 0, func(ctx context.Context, key string) {
		p := prior[key]
		ownGen := int64(-1)
		if !p.Generation.IsNull() && !p.Generation.IsUnknown() {
			ownGen = p.Generation.ValueInt64()
		}
		res, err := restoreEgress(ctx, r.client, p.SandboxID.ValueString(), ownGen, baselines.of(key), timeout, true)
		if err != nil {
			problems.Add(key, "%s", err)
			out.set(key, p)
			return
		}
		out.noteRestore(key, p.SandboxID.ValueString(), res)
	})
	out.addWarnings(&resp.Diagnostics)
	if problems.Len() > 0 {
		resp.Diagnostics.AddError("Egress not restored", problems.String())
		state.Members = fleetPolicyMembersValue(out.members)
		resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &state)...)
	}
}

// record fills the computed attributes.
func (r *fleetEgressPolicyResource) record(ctx context.Context, m *fleetEgressPolicyModel, policy prime.EgressPolicy, members map[string]fleetPolicyMember) diag.Diagnostics {
	var diags diag.Diagnostics
	m.Effective, diags = effectiveOf(ctx, policy)
	m.Members = fleetPolicyMembersValue(members)
	return diags
}

// sameSandboxTwice explains why ids names one sandbox under two keys (a
// sandbox holds one policy; two members would write it twice and restore
// it twice), or returns "".
func sameSandboxTwice(ids map[string]string) string {
	first := make(map[string]string, len(ids))
	for _, k := range tfkit.SortedKeys(ids) {
		if other, dup := first[ids[k]]; dup {
			return fmt.Sprintf("sandbox_ids: keys %q and %q both name sandbox %s; a sandbox takes one policy, so give each "+
				"member its own sandbox", other, k, ids[k])
		}
		first[ids[k]] = k
	}
	return ""
}

// rewritesHeldSandbox: a member planned to be written may land on a
// sandbox the policy already holds (the same sandbox, or one handed over
// from another key); Update writes it again when the destinations change
// or its record is not applied, which changes the policy's ID. An unknown
// id is taken as its key's previous sandbox. A new sandbox is a first
// write, which keeps the ID.
func rewritesHeldSandbox(id types.String, key string, prior map[string]fleetPolicyMember, heldBy map[string]string, samePolicy bool) bool {
	holder, held := key, false
	if id.IsUnknown() {
		_, held = prior[key]
	} else {
		holder, held = heldBy[id.ValueString()]
	}
	return held && (!samePolicy || !prior[holder].Applied.ValueBool())
}

// memberLockProblem renders a failed lockSandbox for a member.
func memberLockProblem(id string, err error) string {
	summary := "Egress policy not enforced"
	var le *lockError
	if errors.As(err, &le) {
		summary = le.Summary
	}
	return fmt.Sprintf("sandbox %s: %s: %s", id, summary, err)
}

type fleetEgressPolicyModel struct {
	ID         types.String `tfsdk:"id"`
	SandboxIDs types.Map    `tfsdk:"sandbox_ids"`
	Lists
	After types.List `tfsdk:"after"`
	Effective
	Members  types.Map      `tfsdk:"members"`
	Timeouts timeouts.Value `tfsdk:"timeouts"`
}
