package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// defaultEgressTimeout is how long create, update and delete wait for the
// data plane to enforce a policy, as in the upstream fail-closed wait.
const defaultEgressTimeout = 60 * time.Second

var (
	_ resource.ResourceWithConfigure      = (*egressPolicyResource)(nil)
	_ resource.ResourceWithImportState    = (*egressPolicyResource)(nil)
	_ resource.ResourceWithValidateConfig = (*egressPolicyResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*egressPolicyResource)(nil)
)

// NewEgressPolicyResource is the prime_egress_policy constructor.
func NewEgressPolicyResource() resource.Resource { return &egressPolicyResource{} }

type egressPolicyResource struct {
	client *prime.Client
}

type egressPolicyModel struct {
	ID                types.String   `tfsdk:"id"`
	SandboxID         types.String   `tfsdk:"sandbox_id"`
	Allow             types.Set      `tfsdk:"allow"`
	Block             types.Set      `tfsdk:"block"`
	Routes            types.List     `tfsdk:"routes"`
	After             types.List     `tfsdk:"after"`
	EffectiveAllow    types.List     `tfsdk:"effective_allow"`
	EffectiveBlock    types.List     `tfsdk:"effective_block"`
	Generation        types.Int64    `tfsdk:"generation"`
	AppliedGeneration types.Int64    `tfsdk:"applied_generation"`
	Applied           types.Bool     `tfsdk:"applied"`
	Timeouts          timeouts.Value `tfsdk:"timeouts"`
}

func (r *egressPolicyResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_egress_policy"
}

func (r *egressPolicyResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = clientFrom(req.ProviderData, &resp.Diagnostics)
}

const entryGrammarDoc = "Entries are exact hostnames (`api.example.com`, any case, internationalised names allowed, one " +
	"optional trailing dot), a leftmost wildcard (`*.example.com`: every name under example.com, at any depth, but " +
	"**not** example.com itself), IPv4 addresses (`1.2.3.4`) or IPv4 CIDRs (`10.0.0.0/8`). Entries are compared in " +
	"canonical form (lowercase, IDNA A-label, no trailing dot, an address equals its `/32`), so the platform's " +
	"normalisation never shows as a diff."

func (r *egressPolicyResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Host-level egress policy of a VM sandbox: an allowlist or a blocklist, applied with the " +
			"platform's set-network call after the sandbox's trusted setup has run with the network open.\n\n" +
			"Create and update return only once the data plane reports the policy **enforced** (`applied` for the " +
			"generation written). If that does not happen within the timeout (default 60 s) the apply fails closed: " +
			"the policy is not recorded as applied, and nothing that depends on this resource — such as the agent " +
			"command — is started. Order the protocol with dependencies: sandbox → setup commands → this policy → agent.\n\n" +
			"Destroy restores unrestricted egress and waits for it, so a reused sandbox's next setup is not silently " +
			"restricted — unless the platform already holds a newer policy written by someone else (for example a " +
			"`create_before_destroy` replacement), which is left in place.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "`<sandbox_id>/<generation>`: the sandbox and the policy generation this resource " +
					"first wrote. A replaced policy gets a new ID, so a command whose `triggers` name it runs again " +
					"after every re-lock (the agent after a setup change).",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"sandbox_id": schema.StringAttribute{
				Required: true, PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
				MarkdownDescription: "ID of a **VM** sandbox (`vm = true`, the platform default) that is `RUNNING`. " +
					"Changing it replaces the policy.",
			},
			"allow": schema.SetAttribute{
				Optional: true, ElementType: egressEntryType{},
				MarkdownDescription: "Allowlist: only these destinations, plus the hosts of `routes`, are reachable. " +
					"`allow = []` denies all egress except the routes. Exactly one of `allow` and `block` must be set; " +
					"at most 256 entries are sent, route hosts included. " + entryGrammarDoc +
					" Changing it updates the policy in place (and waits for enforcement again).",
			},
			"block": schema.SetAttribute{
				Optional: true, ElementType: egressEntryType{},
				MarkdownDescription: "Blocklist: everything except these destinations is reachable. `block = []` " +
					"restricts nothing. Route hosts are not added in this mode, and an entry that matches a route host " +
					"is refused at plan time. Exactly one of `allow` and `block` must be set; at most 256 entries. " +
					entryGrammarDoc + " Changing it updates the policy in place.",
			},
			"routes": schema.ListAttribute{
				Optional: true, ElementType: types.StringType,
				MarkdownDescription: "Framework routes the agent must always reach, such as an LLM interception " +
					"endpoint or MCP server URLs (`https://intercept.example.net/v1`). In allow mode their hostnames " +
					"are put in front of `allow` (deduplicated), so `allow = []` still reaches them. http(s) URLs " +
					"with an IPv4 or DNS host only (the platform is IPv4-only). Changing it updates the policy in place.",
			},
			"after": schema.ListAttribute{
				Optional: true, ElementType: types.StringType,
				PlanModifiers: []planmodifier.List{replaceUnlessImportedList()},
				MarkdownDescription: "Values whose change must re-run setup with egress open — typically the `id`s " +
					"of the sandbox's setup commands (`after = [prime_sandbox_command.setup.id]`). A changed setup " +
					"command gets a new ID, which changes `after`, which **replaces** this policy, so one apply runs: " +
					"destroy this policy (egress reopened and enforced) → the changed setup (network open) → this " +
					"policy again (locked and enforced) → whatever depends on it. Without it, a changed setup step " +
					"would run under the enforced lock. The values are only compared, never interpreted. Changing it " +
					"replaces the policy (except on the first apply after an import, which records it).",
			},
			"effective_allow": schema.ListAttribute{
				Computed: true, ElementType: types.StringType,
				MarkdownDescription: "The allowlist sent to the platform, in canonical form: route hosts first, then " +
					"`allow`, deduplicated. Null in block mode.",
			},
			"effective_block": schema.ListAttribute{
				Computed: true, ElementType: types.StringType,
				MarkdownDescription: "The blocklist sent to the platform, in canonical form. Null in allow mode.",
			},
			"generation": schema.Int64Attribute{
				Computed: true,
				MarkdownDescription: "Policy version the platform assigned to this resource's last write (each " +
					"accepted write increments it).",
			},
			"applied_generation": schema.Int64Attribute{
				Computed:            true,
				MarkdownDescription: "Last version the data plane reported enforced (`-1` before any).",
			},
			"applied": schema.BoolAttribute{
				Computed: true,
				MarkdownDescription: "Whether the data plane enforces this policy. Always `true` after a successful " +
					"apply; a refresh that finds it `false` warns, and the next apply writes the policy again and " +
					"waits for it.",
			},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{
				Create: true, Update: true, Delete: true,
				CreateDescription: "How long to wait, after the platform accepted the policy, for the data plane to " +
					"enforce it (default `60s`). On timeout the apply fails closed.",
				UpdateDescription: "As `create`, for changes (default `60s`).",
				DeleteDescription: "How long to wait for unrestricted egress to be enforced again (default `60s`).",
			}),
		},
	}
}

// specFromModel reads allow/block/routes. ok is false when any of them is
// not yet known.
func specFromModel(ctx context.Context, m egressPolicyModel) (prime.EgressPolicySpec, bool, diag.Diagnostics) {
	var diags diag.Diagnostics
	var spec prime.EgressPolicySpec
	ok := true
	entries := func(v types.Set) []string {
		if v.IsNull() {
			return nil
		}
		if v.IsUnknown() {
			ok = false
			return nil
		}
		out := make([]string, 0, len(v.Elements()))
		for _, e := range v.Elements() {
			if e.IsUnknown() {
				ok = false
				continue
			}
			sv, isString := e.(basetypes.StringValuable)
			if !isString {
				continue
			}
			s, d := sv.ToStringValue(ctx)
			diags.Append(d...)
			out = append(out, s.ValueString())
		}
		return out
	}
	spec.Allow = sortByCanonical(entries(m.Allow))
	spec.Block = sortByCanonical(entries(m.Block))
	if m.Routes.IsUnknown() {
		ok = false
	} else {
		routes, d := stringList(ctx, m.Routes)
		diags.Append(d...)
		if routes == nil && !m.Routes.IsNull() {
			ok = false
		}
		spec.Routes = routes
	}
	return spec, ok, diags
}

// sortByCanonical orders set elements by their canonical form, so the list
// sent (and effective_allow/effective_block) does not depend on how entries
// are spelled or on Terraform's set order. Invalid entries sort last.
func sortByCanonical(entries []string) []string {
	if entries == nil {
		return nil
	}
	key := func(s string) string {
		if c, err := prime.CanonicalEgressEntry(s); err == nil {
			return "0" + c
		}
		return "1" + s
	}
	sort.SliceStable(entries, func(i, j int) bool { return key(entries[i]) < key(entries[j]) })
	return entries
}

func addFindings(diags *diag.Diagnostics, findings []prime.Finding, onlyEntries bool) {
	for _, f := range findings {
		if onlyEntries && f.Entry == "" {
			continue
		}
		p := path.Root(f.Attribute)
		if f.Severity == prime.FindingError {
			diags.AddAttributeError(p, "Invalid egress policy", f.String())
		} else {
			diags.AddAttributeWarning(p, "Egress policy warning", f.String())
		}
	}
}

func (r *egressPolicyResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m egressPolicyModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	spec, known, d := specFromModel(ctx, m)
	resp.Diagnostics.Append(d...)
	if !known {
		// Entries known now are still checked; counts, duplicates and the
		// allow/block choice wait until everything is known.
		if m.Allow.IsUnknown() || m.Block.IsUnknown() {
			if spec.Allow == nil && spec.Block == nil {
				return
			}
		}
		if spec.Allow != nil && spec.Block != nil {
			spec.Block = nil
		}
		if spec.Allow == nil && spec.Block == nil {
			spec.Allow = []string{}
		}
		_, findings := prime.ComposeEgressPolicy(spec)
		addFindings(&resp.Diagnostics, findings, true)
		return
	}
	_, findings := prime.ComposeEgressPolicy(spec)
	addFindings(&resp.Diagnostics, findings, false)
}

// listValue turns a composed list into a state value (null for nil).
func listValue(ctx context.Context, list []string) (types.List, diag.Diagnostics) {
	if list == nil {
		return types.ListNull(types.StringType), nil
	}
	return types.ListValueFrom(ctx, types.StringType, list)
}

// statePolicy is the policy this resource last wrote, from state.
func statePolicy(ctx context.Context, m egressPolicyModel) (prime.EgressPolicy, diag.Diagnostics) {
	var diags diag.Diagnostics
	var p prime.EgressPolicy
	if !m.EffectiveAllow.IsNull() {
		l, d := stringList(ctx, m.EffectiveAllow)
		diags.Append(d...)
		p.Allowlist = l
	}
	if !m.EffectiveBlock.IsNull() {
		l, d := stringList(ctx, m.EffectiveBlock)
		diags.Append(d...)
		p.Denylist = l
	}
	return p, diags
}

func (r *egressPolicyResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy
	}
	var plan egressPolicyModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	spec, known, d := specFromModel(ctx, plan)
	resp.Diagnostics.Append(d...)

	// After a successful apply the policy is enforced, so plan it as such: a
	// refresh that found it not applied then shows as applied false -> true,
	// and the apply writes it again and waits.
	plan.Applied = types.BoolValue(true)
	plan.Generation = types.Int64Unknown()
	plan.AppliedGeneration = types.Int64Unknown()
	plan.EffectiveAllow = types.ListUnknown(types.StringType)
	plan.EffectiveBlock = types.ListUnknown(types.StringType)

	if known {
		policy, findings := prime.ComposeEgressPolicy(spec)
		if !hasErrors(findings) {
			var d diag.Diagnostics
			plan.EffectiveAllow, d = listValue(ctx, policy.Allowlist)
			resp.Diagnostics.Append(d...)
			plan.EffectiveBlock, d = listValue(ctx, policy.Denylist)
			resp.Diagnostics.Append(d...)
			if !req.State.Raw.IsNull() {
				var state egressPolicyModel
				resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
				prev, d := statePolicy(ctx, state)
				resp.Diagnostics.Append(d...)
				// Same destinations, already enforced: nothing will be
				// written, so the generations stay.
				if prime.SamePolicy(prev, policy) && state.Applied.ValueBool() {
					plan.Generation = state.Generation
					plan.AppliedGeneration = state.AppliedGeneration
				}
			}
		}
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

func hasErrors(findings []prime.Finding) bool {
	for _, f := range findings {
		if f.Severity == prime.FindingError {
			return true
		}
	}
	return false
}

// composeForApply composes the policy from a plan; at apply time every
// value is known and validation already passed.
func composeForApply(ctx context.Context, m egressPolicyModel, diags *diag.Diagnostics) (prime.EgressPolicy, bool) {
	spec, known, d := specFromModel(ctx, m)
	diags.Append(d...)
	if !known {
		diags.AddError("Egress policy not known", "allow, block and routes must be known at apply time")
		return prime.EgressPolicy{}, false
	}
	policy, findings := prime.ComposeEgressPolicy(spec)
	addFindings(diags, findings, false)
	return policy, !diags.HasError()
}

// checkSandboxAcceptsPolicy reads the sandbox: it must exist, be a VM and be
// RUNNING.
func (r *egressPolicyResource) checkSandboxAcceptsPolicy(ctx context.Context, id string) error {
	sb, err := r.client.GetSandbox(ctx, id)
	switch {
	case errors.Is(err, prime.ErrNotFound):
		return fmt.Errorf("sandbox %s does not exist", id)
	case err != nil:
		return err
	case !sb.VM:
		return fmt.Errorf("egress policies require a VM sandbox (vm = true); sandbox %s is a container (vm = false)", id)
	case sb.Status != prime.StatusRunning:
		return fmt.Errorf("sandbox %s is %s; an egress policy can only be applied to a RUNNING sandbox "+
			"(make the policy depend on the sandbox, whose create waits for RUNNING)", id, sb.Status)
	}
	return nil
}

// applyPolicy writes the policy and waits for the data plane within timeout,
// measured from the moment the platform accepted it (as in the upstream
// fail-closed wait). A policy accepted but not enforced in time is an
// *prime.EgressNotAppliedError.
func (r *egressPolicyResource) applyPolicy(ctx context.Context, id string, policy prime.EgressPolicy, timeout time.Duration, what string) (*prime.EgressPolicyStatus, int64, error) {
	put, err := r.client.PutEgressPolicy(ctx, id, policy)
	if err != nil {
		return nil, 0, fmt.Errorf("the platform refused the egress policy for sandbox %s: %w", id, err)
	}
	tflog.Info(ctx, "egress policy accepted; waiting for the data plane to enforce it", map[string]any{
		"sandbox_id": id, "generation": put.Generation, "timeout": timeout.String(),
	})
	wctx, cancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("%s timeout (%s) reached", what, timeout))
	defer cancel()
	final, err := r.client.WaitForEgressApplied(wctx, id, put.Generation, put)
	if err != nil {
		return nil, put.Generation, err
	}
	return final, put.Generation, nil
}

// failClosedMessage explains a policy that is not enforced after a create or
// update.
func failClosedMessage(id string, timeout time.Duration, what string, err error) string {
	var notApplied *prime.EgressNotAppliedError
	if !errors.As(err, &notApplied) {
		return fmt.Sprintf("egress policy for sandbox %s: %v", id, err)
	}
	return fmt.Sprintf("egress policy for sandbox %s was accepted (generation %d) but is not enforced after %s "+
		"(the platform reports applied_generation %d, applied %t).\n\n"+
		"Failing closed: the policy is not recorded as applied, and nothing that depends on it was started. "+
		"The requested restriction stays requested on the platform; the next apply writes it again and waits "+
		"again, without lifting it in between. If the data plane is only slow, raise timeouts.%s.",
		id, notApplied.Want, timeout, notApplied.Last.AppliedGeneration, notApplied.Last.Applied, what)
}

// setApplied fills the computed attributes after an enforced write.
func setApplied(ctx context.Context, m *egressPolicyModel, policy prime.EgressPolicy, gen int64, st *prime.EgressPolicyStatus) diag.Diagnostics {
	var diags diag.Diagnostics
	var d diag.Diagnostics
	m.EffectiveAllow, d = listValue(ctx, policy.Allowlist)
	diags.Append(d...)
	m.EffectiveBlock, d = listValue(ctx, policy.Denylist)
	diags.Append(d...)
	m.Generation = types.Int64Value(gen)
	m.AppliedGeneration = types.Int64Value(st.AppliedGeneration)
	m.Applied = types.BoolValue(true)
	return diags
}

func (r *egressPolicyResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	if !requireClient(r.client, &resp.Diagnostics) {
		return
	}
	var plan egressPolicyModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	policy, ok := composeForApply(ctx, plan, &resp.Diagnostics)
	if !ok {
		return
	}
	timeout, d := plan.Timeouts.Create(ctx, defaultEgressTimeout)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	id := plan.SandboxID.ValueString()
	if err := r.checkSandboxAcceptsPolicy(ctx, id); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("sandbox_id"), "Cannot apply egress policy", err.Error())
		return
	}
	st, gen, err := r.applyPolicy(ctx, id, policy, timeout, "create")
	if err != nil {
		err = errors.New(failClosedMessage(id, timeout, "create", err))
		// No state is saved: the resource does not exist for Terraform, so
		// dependents are not created and the next apply creates (writes and
		// waits) again. Nothing reopens egress in between.
		resp.Diagnostics.AddError("Egress policy not enforced", err.Error())
		return
	}
	plan.ID = types.StringValue(policyID(id, gen))
	resp.Diagnostics.Append(setApplied(ctx, &plan, policy, gen, st)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// policyID names one creation of a policy: a sandbox and the generation the
// resource first wrote. Sandbox IDs contain no "/".
func policyID(sandboxID string, gen int64) string { return fmt.Sprintf("%s/%d", sandboxID, gen) }

// sandboxOfPolicyID reads the sandbox from a policy ID or an import ID
// ("<sandbox_id>" or "<sandbox_id>/<generation>").
func sandboxOfPolicyID(id string) string {
	sb, _, _ := strings.Cut(id, "/")
	return sb
}

func (r *egressPolicyResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	if !requireClient(r.client, &resp.Diagnostics) {
		return
	}
	var plan egressPolicyModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	policy, ok := composeForApply(ctx, plan, &resp.Diagnostics)
	if !ok {
		return
	}
	id := plan.SandboxID.ValueString()
	timeout, d := plan.Timeouts.Update(ctx, defaultEgressTimeout)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}

	// Only spelling changed and the platform already enforces the same
	// destinations: record the new spelling without another write.
	current, err := r.client.GetEgressPolicy(ctx, id)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read egress policy", err.Error())
		keepPrior(ctx, req, resp, 0)
		return
	}
	if prime.SamePolicy(current.Policy, policy) && current.Enforces(current.Generation) {
		resp.Diagnostics.Append(setApplied(ctx, &plan, policy, current.Generation, current)...)
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		resp.Diagnostics.Append(clearImported(ctx, resp.Private)...)
		return
	}

	st, gen, err := r.applyPolicy(ctx, id, policy, timeout, "update")
	if err != nil {
		err = errors.New(failClosedMessage(id, timeout, "update", err))
		resp.Diagnostics.AddError("Egress policy not enforced", err.Error())
		keepPrior(ctx, req, resp, gen)
		return
	}
	resp.Diagnostics.Append(setApplied(ctx, &plan, policy, gen, st)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	resp.Diagnostics.Append(clearImported(ctx, resp.Private)...)
}

// keepPrior leaves the previous lists in state after a failed update, so the
// new policy is never recorded as applied. When the platform accepted the
// write (written > 0), state records that generation as this resource's,
// with applied = false: the next plan writes again (applied false -> true),
// and a destroy, even without a refresh, recognises the unapplied write as
// its own and reopens egress rather than leaving it to "another writer".
func keepPrior(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse, written int64) {
	resp.State.Raw = req.State.Raw.Copy()
	if written > 0 {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("generation"), written)...)
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("applied"), false)...)
	}
}

// isSandboxGone reports whether a sandbox no longer exists or no longer
// runs, so its policy is moot.
func (r *egressPolicyResource) isSandboxGone(ctx context.Context, id string) (bool, error) {
	sb, err := r.client.GetSandbox(ctx, id)
	if errors.Is(err, prime.ErrNotFound) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return prime.IsTerminalStatus(sb.Status), nil
}

// readPlatformPolicy GETs the policy; gone is true when the sandbox is gone
// or terminated (the egress endpoints answer 404 or 409 then).
func (r *egressPolicyResource) readPlatformPolicy(ctx context.Context, id string) (st *prime.EgressPolicyStatus, gone bool, err error) {
	st, err = r.client.GetEgressPolicy(ctx, id)
	switch code := prime.StatusCodeOf(err); {
	case err == nil:
		return st, false, nil
	case code == http.StatusNotFound:
		return nil, true, nil
	case code == http.StatusConflict || code == http.StatusBadRequest:
		gone, gerr := r.isSandboxGone(ctx, id)
		if gerr != nil {
			return nil, false, gerr
		}
		if gone {
			return nil, true, nil
		}
	}
	return nil, false, err
}

func (r *egressPolicyResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if !requireClient(r.client, &resp.Diagnostics) {
		return
	}
	var state egressPolicyModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id := state.SandboxID.ValueString()
	if id == "" {
		id = sandboxOfPolicyID(state.ID.ValueString())
	}
	st, gone, err := r.readPlatformPolicy(ctx, id)
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
	if !state.Applied.ValueBool() {
		resp.Diagnostics.AddWarning("Egress policy not enforced",
			fmt.Sprintf("The platform holds generation %d of the egress policy of sandbox %s but enforces only "+
				"generation %d: new connections may not follow the policy. The next apply writes it again and waits "+
				"for enforcement.", st.Generation, id, st.AppliedGeneration))
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// applyPlatformPolicy merges a GET answer into state. When the platform
// holds the destinations this resource wrote, the user's spelling is kept;
// otherwise (a change from the CLI, an import) the platform's lists become
// the state, so the difference shows as drift.
func applyPlatformPolicy(ctx context.Context, m *egressPolicyModel, id string, st *prime.EgressPolicyStatus) diag.Diagnostics {
	var diags diag.Diagnostics
	prev, d := statePolicy(ctx, *m)
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
	m.EffectiveAllow, d = listValue(ctx, platform.Allowlist)
	diags.Append(d...)
	m.EffectiveBlock, d = listValue(ctx, platform.Denylist)
	diags.Append(d...)
	if platform.Allowlist != nil {
		routes, d := stringList(ctx, m.Routes)
		diags.Append(d...)
		m.Allow = entrySet(withoutRouteHosts(platform.Allowlist, routes))
		m.Block = types.SetNull(egressEntryType{})
	} else {
		m.Block = entrySet(platform.Denylist)
		m.Allow = types.SetNull(egressEntryType{})
	}
	return diags
}

// withoutRouteHosts drops the hosts this resource adds from routes, so a
// drifted allowlist reads back as what a user would write in allow.
func withoutRouteHosts(list []string, routes []string) []string {
	policy, _ := prime.ComposeEgressPolicy(prime.EgressPolicySpec{Allow: []string{}, Routes: routes})
	hosts := map[string]bool{}
	for _, h := range policy.Allowlist {
		hosts[h] = true
	}
	out := []string{}
	for _, e := range list {
		c, err := prime.CanonicalEgressEntry(e)
		if err == nil && hosts[c] {
			continue
		}
		out = append(out, e)
	}
	return out
}

func entrySet(list []string) types.Set {
	elems := make([]attr.Value, 0, len(list))
	seen := map[string]bool{}
	for _, e := range list {
		if seen[e] {
			continue
		}
		seen[e] = true
		elems = append(elems, newEgressEntry(e))
	}
	return types.SetValueMust(egressEntryType{}, elems)
}

func (r *egressPolicyResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	if !requireClient(r.client, &resp.Diagnostics) {
		return
	}
	var state egressPolicyModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id := state.SandboxID.ValueString()
	timeout, d := state.Timeouts.Delete(ctx, defaultEgressTimeout)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	st, gone, err := r.readPlatformPolicy(ctx, id)
	switch {
	case err != nil:
		resp.Diagnostics.AddError("Cannot read egress policy", err.Error())
		return
	case gone:
		return // nothing to reopen on a sandbox that is gone
	}
	// Never undo a newer policy: a write after this resource's last one
	// belongs to someone else now (a create_before_destroy replacement, the
	// CLI), and reopening would silently lift their restriction.
	if !state.Generation.IsNull() && st.Generation > state.Generation.ValueInt64() {
		resp.Diagnostics.AddWarning("Newer egress policy left in place",
			fmt.Sprintf("Sandbox %s holds egress policy generation %d, newer than generation %d written by this "+
				"resource; it belongs to another writer and is left in place.", id, st.Generation, state.Generation.ValueInt64()))
		return
	}
	if st.Policy.IsOpen() && st.Enforces(st.Generation) {
		return
	}
	if _, _, err := r.applyPolicy(ctx, id, prime.OpenEgressPolicy(), timeout, "delete"); err != nil {
		detail := fmt.Sprintf("reopening egress of sandbox %s: %v", id, err)
		var notApplied *prime.EgressNotAppliedError
		if errors.As(err, &notApplied) {
			detail = fmt.Sprintf("Unrestricted egress for sandbox %s was accepted (generation %d) but is not enforced "+
				"after %s. The sandbox may still be restricted, so this resource stays in state; run destroy again "+
				"to retry, or raise timeouts.delete.", id, notApplied.Want, timeout)
		}
		resp.Diagnostics.AddError("Unrestricted egress not restored", detail)
	}
}

// ImportState takes a sandbox ID (or a policy ID, "<sandbox_id>/<n>"). The
// platform's lists become the state; `after` is recorded from the
// configuration by the first apply, without replacement.
func (r *egressPolicyResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	sandboxID := sandboxOfPolicyID(req.ID)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), sandboxID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("sandbox_id"), sandboxID)...)
	resp.Diagnostics.Append(markImported(ctx, resp.Private)...)
}
