package egress

// prime_egress_policy: one sandbox's egress lists, written through
// set-network and waited for fail-closed (lock.go), restored on destroy
// (restore.go).

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

var (
	_ resource.ResourceWithConfigure      = (*egressPolicyResource)(nil)
	_ resource.ResourceWithImportState    = (*egressPolicyResource)(nil)
	_ resource.ResourceWithValidateConfig = (*egressPolicyResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*egressPolicyResource)(nil)
	_ resource.ResourceWithIdentity       = (*egressPolicyResource)(nil)
)

// NewPolicyResource is the prime_egress_policy constructor.
func NewPolicyResource() resource.Resource { return &egressPolicyResource{} }

type egressPolicyResource struct {
	client    *prime.Client
	baselines *Baselines
}

func (r *egressPolicyResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_egress_policy"
}

func (r *egressPolicyResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = tfkit.ClientFrom(req.ProviderData, &resp.Diagnostics)
	r.baselines = BaselinesFrom(req.ProviderData)
}

func (r *egressPolicyResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = egressPolicyIdentitySchema()
}

func (r *egressPolicyResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := egressListAttributes("Changing it updates the policy in place and waits for enforcement again.")
	for k, v := range effectiveListAttributes() {
		attrs[k] = v
	}
	attrs["id"] = schema.StringAttribute{
		Computed: true,
		MarkdownDescription: "`<sandbox_id>/<generation>`: the sandbox and the policy generation of this resource's " +
			"last enforced write. It changes with every write: the create (also a replacement, such as after a change " +
			"of `after`), a change of `allow`, `block` or `routes` that changes what is sent, and the rewrite of a " +
			"policy that a refresh found not enforced; the plan shows it unknown until then. A command whose " +
			"`triggers` name it (the agent) therefore runs again after every re-lock and only then: a change that " +
			"only respells the same destinations writes nothing and keeps it. See the evaluations guide's re-run " +
			"pattern.",
	}
	attrs["sandbox_id"] = schema.StringAttribute{
		Required: true, PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
		MarkdownDescription: "ID of a sandbox that is `RUNNING`. " +
			"Changing it replaces the policy.",
	}
	attrs["after"] = afterAttribute(true)
	attrs["generation"] = schema.Int64Attribute{Computed: true, MarkdownDescription: generationDoc}
	attrs["applied_generation"] = schema.Int64Attribute{Computed: true, MarkdownDescription: appliedGenerationDoc}
	attrs["applied"] = schema.BoolAttribute{Computed: true, MarkdownDescription: appliedDoc}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Host-level egress policy of a sandbox: an allowlist or a blocklist, applied with the " +
			"platform's set-network call after the sandbox's trusted setup has run with the network open.\n\n" +
			"Create and update return only once the data plane reports the policy **enforced** (`applied` for the " +
			"generation written). If that does not happen within the timeout (default 60 s) the apply fails closed: " +
			"the policy is not recorded as applied, and nothing that depends on this resource — such as the agent " +
			"command — is started. Order the protocol with dependencies: sandbox → setup commands → this policy " +
			"(`after` the setup commands) → agent.\n\n" +
			"Destroy restores what the sandbox held before this policy's first write — unrestricted egress, or the " +
			"lists a `prime_sandbox` `egress` block locked it to (at create, or right after a restore from a " +
			"checkpoint), never an open policy there — so a reused sandbox's next setup is not silently restricted (a create that " +
			"failed closed notes that baseline for the create that retries it; see the provider's `create_journal`). (An imported " +
			"policy does not know what came before it: its destroy restores unrestricted egress.) A newer policy " +
			"written by someone else (a `create_before_destroy` replacement, the CLI) is left in place. The destroy " +
			"costs one read and one write of the sandbox's policy and does not wait for the data plane: the platform " +
			"has stored the restore when it accepts it and enforces it on its own, a sandbox deleted next never needed " +
			"it, and a kept sandbox stays safe because `require_open_egress` setup steps wait for the restore (in the " +
			"same apply, until `timeouts.delete` from the write) and refuse to run while it is pending (see the egress " +
			"guide's \"Destroy and the reuse guard\").",
		Attributes: attrs,
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{
				Create: true, Update: true, Delete: true,
				CreateDescription: "How long to wait, after the platform accepted the policy, for the data plane to " +
					"enforce it (default `60s`). On timeout the apply fails closed.",
				UpdateDescription: "As `create`, for changes (default `60s`).",
				DeleteDescription: "How long the restore written on destroy may take to be enforced (default `60s`), " +
					"counted from its write. The destroy itself does not wait for it; a setup step with " +
					"`require_open_egress` on the same sandbox, later in the same apply, waits for it that long before " +
					"refusing to run.",
			}),
		},
	}
}

// afterAttribute is `after`, shared with prime_fleet_egress_policy.
// importable says whether the resource can be imported.
func afterAttribute(importable bool) schema.ListAttribute {
	replaces := "Changing it replaces the policy."
	if importable {
		replaces = "Changing it replaces the policy (except on the first apply after an import that changes the " +
			"policy, which records it, with a warning)."
	}
	return schema.ListAttribute{
		Optional: true, ElementType: types.StringType,
		PlanModifiers: []planmodifier.List{tfkit.ReplaceUnlessImportedList()},
		MarkdownDescription: "Values whose change must re-run setup with egress open — typically the `id`s " +
			"of the setup commands (`after = [prime_sandbox_command.setup.id]`). A changed setup command gets a new " +
			"ID, which changes `after`, which **replaces** this policy, so one apply runs: destroy this policy (egress " +
			"restored and enforced) → the changed setup (network open) → this policy again (locked and enforced) → " +
			"whatever depends on it. Without it, a changed setup step would run under the enforced lock (see " +
			"`require_open_egress`). The values are only compared, never interpreted. " + replaces,
	}
}

// policyComputedAttributes are the computed generation attributes, shared
// with prime_fleet_egress_policy's members.
const (
	generationDoc        = "Policy version the platform assigned to this resource's last write (each accepted write increments it)."
	appliedGenerationDoc = "Last version the data plane reported enforced (`-1` before any)."
	appliedDoc           = "Whether the data plane enforces this policy. Always `true` after a successful apply; a " +
		"refresh that finds it `false` warns, and the next apply writes the policy again and waits for it."
)

func (r *egressPolicyResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m egressPolicyModel
	resp.Diagnostics.Append(tfkit.GetConfig(ctx, req.Config, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	m.Lists.Validate(ctx, path.Empty(), &resp.Diagnostics)
}

func (r *egressPolicyResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy
	}
	var plan egressPolicyModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	// After a successful apply the policy is enforced, so plan it as such: a
	// refresh that found it not applied then shows as applied false -> true,
	// and the apply writes it again and waits.
	plan.Applied = types.BoolValue(true)
	plan.Generation = types.Int64Unknown()
	plan.AppliedGeneration = types.Int64Unknown()
	plan.Effective = unknownEffective()

	policy, d := plan.Lists.Planned(ctx)
	resp.Diagnostics.Append(d...)
	if policy != nil {
		plan.Effective, d = effectiveOf(ctx, *policy)
		resp.Diagnostics.Append(d...)
		if !req.State.Raw.IsNull() {
			var state egressPolicyModel
			resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
			prev, d := state.Policy(ctx)
			resp.Diagnostics.Append(d...)
			// Same destinations, already enforced: nothing will be written,
			// so the generations stay.
			if prime.SamePolicy(prev, *policy) && state.Applied.ValueBool() {
				plan.Generation = state.Generation
				plan.AppliedGeneration = state.AppliedGeneration
			}
		}
	}
	// The ID names the last enforced write: it stays unless one is planned.
	plan.ID = types.StringUnknown()
	if !plan.Generation.IsUnknown() {
		var state egressPolicyModel
		resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
		plan.ID = state.ID
	} else {
		plan.Lists.warnPlanned(ctx, path.Empty(), &resp.Diagnostics)
	}
	resp.Diagnostics.Append(tfkit.SetPlan(ctx, &resp.Plan, &plan)...)
	warnAfterRecordedAfterImport(ctx, req, &resp.Diagnostics)
}

func (r *egressPolicyResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var plan egressPolicyModel
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
	if resp.Diagnostics.HasError() {
		return
	}
	id := plan.SandboxID.ValueString()
	res, err := lockSandbox(ctx, r.client, r.baselines, id, policy, timeout)
	if err != nil {
		var le *lockError
		if errors.As(err, &le) && le.Sandbox {
			resp.Diagnostics.AddAttributeError(path.Root("sandbox_id"), le.Summary, le.Error())
			return
		}
		resp.Diagnostics.AddError("Egress policy not enforced", err.Error())
		return
	}
	plan.ID = types.StringValue(policyID(id, res.Generation))
	resp.Diagnostics.Append(setApplied(ctx, &plan, policy, res.Generation, res.Status)...)
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &plan)...)
	resp.Diagnostics.Append(setEgressPolicyIdentity(ctx, resp.Identity, plan.SandboxID)...)
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, baselineKey, encodeBaseline(res.Baseline))...)
}

func (r *egressPolicyResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var state egressPolicyModel
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id := state.SandboxID.ValueString()
	if id == "" {
		id = sandboxOfPolicyID(state.ID.ValueString())
	}
	_, d := tfkit.ReadAfterImport(ctx, req.Private, resp.Private)
	resp.Diagnostics.Append(d...)
	resp.Diagnostics.Append(setEgressPolicyIdentity(ctx, resp.Identity, types.StringValue(id))...)
	if resp.Diagnostics.HasError() {
		return
	}
	st, gone, err := ReadStatus(ctx, r.client, id)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read egress policy", err.Error())
		return
	}
	if gone {
		resp.Diagnostics.AddWarning("Sandbox is gone",
			fmt.Sprintf("Sandbox %s no longer exists or no longer runs; its egress policy is removed from state.", id))
		resp.State.RemoveResource(ctx)
		return
	}
	resp.Diagnostics.Append(applyPlatformPolicy(ctx, &state, id, st)...)
	state.withDigest(ctx)
	if !state.Applied.ValueBool() {
		resp.Diagnostics.AddWarning("Egress policy not enforced",
			fmt.Sprintf("The platform holds generation %d of the egress policy of sandbox %s but enforces only "+
				"generation %d: new connections may not follow the policy. The next apply writes it again and waits "+
				"for enforcement.%s", st.Generation, id, st.AppliedGeneration, pendingWhilePaused(ctx, r.client, id)))
	}
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &state)...)
}

func (r *egressPolicyResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var plan egressPolicyModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	policy, ok := plan.Lists.compose(ctx, path.Empty(), &resp.Diagnostics)
	if !ok {
		return
	}
	id := plan.SandboxID.ValueString()
	timeout, d := plan.Timeouts.Update(ctx, DefaultTimeout)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	st, gen, err := relockSandbox(ctx, r.client, id, policy, timeout)
	if err != nil {
		resp.Diagnostics.AddError("Egress policy not enforced", err.Error())
		keepPrior(ctx, req, resp, gen)
		return
	}
	if plan.ID.IsUnknown() {
		plan.ID = types.StringValue(policyID(id, gen)) // a write was planned: a new ID
	}
	resp.Diagnostics.Append(setApplied(ctx, &plan, policy, gen, st)...)
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &plan)...)
	resp.Diagnostics.Append(setEgressPolicyIdentity(ctx, resp.Identity, plan.SandboxID)...)
	resp.Diagnostics.Append(tfkit.ClearImported(ctx, resp.Private)...)
}

func (r *egressPolicyResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var state egressPolicyModel
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := state.Timeouts.Delete(ctx, DefaultTimeout)
	resp.Diagnostics.Append(d...)
	stored, d := req.Private.GetKey(ctx, baselineKey)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	ownGen := int64(-1)
	if !state.Generation.IsNull() {
		ownGen = state.Generation.ValueInt64()
	}
	res, err := restoreEgress(ctx, r.client, state.SandboxID.ValueString(), ownGen, decodeBaseline(stored), timeout, true)
	if err != nil {
		resp.Diagnostics.AddError("Egress not restored", err.Error())
		return
	}
	addRestoreWarnings(&resp.Diagnostics, []restoreNote{{SandboxID: state.SandboxID.ValueString(), restoreResult: res}})
}

// ImportState takes a sandbox ID (or a policy ID, "<sandbox_id>/<n>"), or
// the identity's sandbox_id. The platform's lists become the state;
// `after` is recorded from the configuration by the first apply, without
// replacement. An imported policy's destroy restores unrestricted egress:
// what the sandbox held before it is not known.
func (r *egressPolicyResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	id, d := tfkit.ImportIDOf(ctx, req, func(m egressPolicyIdentityModel) (string, error) { return m.SandboxID.ValueString(), nil })
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	sandboxID := sandboxOfPolicyID(id)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), sandboxID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("sandbox_id"), sandboxID)...)
	resp.Diagnostics.Append(setEgressPolicyIdentity(ctx, resp.Identity, types.StringValue(sandboxID))...)
	resp.Diagnostics.Append(tfkit.MarkImported(ctx, resp.Private)...)
}

// warnAfterRecordedAfterImport is prime_egress_policy's form of the
// sandbox's warning of settings recorded after an import: a changed
// `after` is recorded in place (tfkit.ReplaceUnlessImportedList) instead of
// replacing the policy, so the setup it names does not run again between a
// restore and a re-lock; the plan says so, and how to replace.
func warnAfterRecordedAfterImport(ctx context.Context, req resource.ModifyPlanRequest, diags *diag.Diagnostics) {
	if req.State.Raw.IsNull() || req.Plan.Raw.IsNull() || !tfkit.WasImported(ctx, req.Private) {
		return
	}
	var planned, recorded types.List
	diags.Append(req.Plan.GetAttribute(ctx, path.Root("after"), &planned)...)
	diags.Append(req.State.GetAttribute(ctx, path.Root("after"), &recorded)...)
	if planned.Equal(recorded) {
		return
	}
	diags.AddAttributeWarning(path.Root("after"), "Imported policy: recording after without replacing",
		"The platform does not report after of an existing policy, so the imported state has none, and no apply "+
			"has recorded the configuration since the import. This apply records the configured after in state "+
			"without replacing the policy: the setup it names is not run again under open egress first. To "+
			"replace the policy (restore, setup, lock), run terraform apply -replace=<this policy's address>.")
}

// setApplied fills the computed attributes after an enforced write.
func setApplied(ctx context.Context, m *egressPolicyModel, policy prime.EgressPolicy, gen int64, st *prime.EgressPolicyStatus) diag.Diagnostics {
	var diags diag.Diagnostics
	m.Effective, diags = effectiveOf(ctx, policy)
	m.Generation = types.Int64Value(gen)
	m.AppliedGeneration = types.Int64Value(st.AppliedGeneration)
	m.Applied = types.BoolValue(true)
	return diags
}

// keepPrior leaves the previous lists in state after a failed update, so the
// new policy is never recorded as applied. When the platform accepted the
// write (written > 0), state records that generation as this resource's,
// with applied = false: the next plan writes again (applied false -> true),
// and a destroy, even without a refresh, recognises the unapplied write as
// its own and restores the baseline rather than leaving it to "another
// writer".
func keepPrior(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse, written int64) {
	resp.State.Raw = req.State.Raw.Copy()
	if written > 0 {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("generation"), written)...)
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("applied"), false)...)
	}
}

// applyPlatformPolicy merges a GET answer into state. When the platform
// holds the destinations this resource wrote, the user's spelling is kept;
// otherwise (a change from the CLI, an import) the platform's lists become
// the state, so the difference shows as drift.
func applyPlatformPolicy(ctx context.Context, m *egressPolicyModel, id string, st *prime.EgressPolicyStatus) diag.Diagnostics {
	var diags diag.Diagnostics
	prev, d := m.Policy(ctx)
	diags.Append(d...)
	// After an import there is no previous write to compare with.
	wroteBefore := !m.Generation.IsNull() && (prev.Allowlist != nil || prev.Denylist != nil)

	if !strings.HasPrefix(m.ID.ValueString(), id+"/") {
		m.ID = types.StringValue(policyID(id, st.Generation)) // after an import
	}
	m.SandboxID = types.StringValue(id)
	m.Generation = types.Int64Value(st.Generation)
	m.AppliedGeneration = types.Int64Value(st.AppliedGeneration)
	m.Applied = types.BoolValue(st.Enforces(st.Generation))
	if wroteBefore && prime.SamePolicy(prev, st.Policy) {
		return diags
	}
	platform := st.Policy
	if platform.Allowlist == nil && platform.Denylist == nil {
		platform.Denylist = []string{} // both null reads as open
	}
	m.Effective, d = effectiveOf(ctx, platform)
	diags.Append(d...)
	routes, d := tfkit.StringList(ctx, m.Routes)
	diags.Append(d...)
	m.Allow, m.Block = listsFromPlatform(platform, routes)
	return diags
}

// policyID names one enforced write of a policy: a sandbox and the
// generation written. Sandbox IDs contain no "/".
func policyID(sandboxID string, gen int64) string { return fmt.Sprintf("%s/%d", sandboxID, gen) }

// sandboxOfPolicyID reads the sandbox from a policy ID or an import ID
// ("<sandbox_id>" or "<sandbox_id>/<generation>").
func sandboxOfPolicyID(id string) string {
	sb, _, _ := strings.Cut(id, "/")
	return sb
}

type egressPolicyModel struct {
	ID        types.String `tfsdk:"id"`
	SandboxID types.String `tfsdk:"sandbox_id"`
	Lists
	After types.List `tfsdk:"after"`
	Effective
	Generation        types.Int64    `tfsdk:"generation"`
	AppliedGeneration types.Int64    `tfsdk:"applied_generation"`
	Applied           types.Bool     `tfsdk:"applied"`
	Timeouts          timeouts.Value `tfsdk:"timeouts"`
}
