package sandbox

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/primeintellect/terraform-provider-prime/internal/egress"
	"github.com/primeintellect/terraform-provider-prime/internal/fleet"
	"github.com/primeintellect/terraform-provider-prime/internal/journal"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

var (
	_ resource.ResourceWithConfigure       = (*sandboxFleetResource)(nil)
	_ resource.ResourceWithValidateConfig  = (*sandboxFleetResource)(nil)
	_ resource.ResourceWithModifyPlan      = (*sandboxFleetResource)(nil)
	_ resource.ResourceWithImportState     = (*sandboxFleetResource)(nil)
	_ resource.ResourceWithIdentity        = (*sandboxFleetResource)(nil)
	_ resource.ResourceWithUpgradeIdentity = (*sandboxFleetResource)(nil)
	_ resource.ResourceWithUpgradeState    = (*sandboxFleetResource)(nil)
)

// NewFleetResource is the prime_sandbox_fleet constructor.
func NewFleetResource() resource.Resource { return &sandboxFleetResource{} }

type sandboxFleetResource struct {
	client  *prime.Client
	journal *journal.Creates
}

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

func (r *sandboxFleetResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_sandbox_fleet"
	// The identity's sandbox_ids follow the members (see fleetIdentityDoc).
	resp.ResourceBehavior.MutableIdentity = true
}

func (r *sandboxFleetResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = fleetIdentitySchema()
}

// UpgradeIdentity reads identities stored before the fleet's id was part
// of it (see fleetIdentityVersion).
func (r *sandboxFleetResource) UpgradeIdentity(context.Context) map[int64]resource.IdentityUpgrader {
	// No PriorSchema: the framework would refuse a state without any
	// stored identity before the upgrader runs (upgradeFleetIdentityV0).
	return map[int64]resource.IdentityUpgrader{0: {IdentityUpgrader: upgradeFleetIdentityV0}}
}

func (r *sandboxFleetResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = tfkit.ClientFrom(req.ProviderData, &resp.Diagnostics)
	r.journal = journal.CreatesFrom(req.ProviderData)
}

// replacesFleet ends the description of every template argument.
const replacesFleet = " Changing it replaces the whole fleet (the API cannot change a sandbox in place)."

func (r *sandboxFleetResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := sandboxArgumentAttributes(replacesFleet)
	// A template's arch is what it sends: Optional only, with nothing read
	// back into it (an import records a non-default one, templateArch).
	attrs["arch"] = schema.StringAttribute{
		Optional: true, PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
		MarkdownDescription: fmt.Sprintf("CPU architecture of every member: `%s` or `%s`. Sent only when set; "+
			"unset, the platform's default (`%s`) applies.", prime.ArchAMD64, prime.ArchARM64, prime.DefaultArch) +
			replacesFleet,
	}
	attrs["id"] = schema.StringAttribute{
		Computed: true, MarkdownDescription: "ID of the fleet (the provider's, not the platform's).",
		PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
	}
	attrs["size"] = schema.Int64Attribute{
		Optional: true,
		MarkdownDescription: "Number of members, keyed `\"0\"` … `\"N-1\"`. Exactly one of `size` and `members`. " +
			"Changing it adds or removes members in place (the highest keys go first).",
		Validators: []validator.Int64{int64validator.Between(0, 10000),
			int64validator.ExactlyOneOf(path.MatchRoot("size"), path.MatchRoot("members"))},
	}
	attrs["members"] = schema.SetAttribute{
		Optional: true, ElementType: types.StringType,
		MarkdownDescription: "Member keys, e.g. task IDs. Exactly one of `size` and `members`. Adding or removing " +
			"keys creates or deletes those members in place; the others are untouched.",
		Validators: []validator.Set{setvalidator.ValueStringsAre(stringvalidator.LengthBetween(1, 100),
			stringvalidator.RegexMatches(memberKeyPattern, "must be letters, digits, '.', '_' or '-'"))},
	}
	attrs["member_triggers"] = memberTriggersAttribute()
	attrs["name_prefix"] = schema.StringAttribute{
		Required: true, PlanModifiers: []planmodifier.String{tfkit.ReplaceUnlessImportedString()},
		MarkdownDescription: "Member names are `<name_prefix>-<key>`." + replacesFleet,
		Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
	}
	attrs["sandbox_ids"] = fleet.SandboxIDsOutputAttribute("Member key → sandbox ID: what `prime_fleet_command` " +
		"and `prime_fleet_egress_policy` take. A member whose sandbox is gone (deleted out of band, stopped) drops " +
		"out at refresh, and the next apply creates it again in place.")
	attrs["sandboxes"] = schema.MapNestedAttribute{
		Computed: true,
		MarkdownDescription: "Member key → what the platform reports: `id`, `name`, `status` (`RUNNING` means " +
			"running and reachable through the gateway, as on `prime_sandbox`), `created_at`, and with an `egress` " +
			"block `egress_generation` and `egress_applied`.",
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"id":                schema.StringAttribute{Computed: true, MarkdownDescription: "Sandbox ID."},
			"name":              schema.StringAttribute{Computed: true, MarkdownDescription: "Sandbox name."},
			"status":            schema.StringAttribute{Computed: true, MarkdownDescription: "Lifecycle status at the last refresh."},
			"created_at":        schema.StringAttribute{Computed: true, MarkdownDescription: "Creation time (RFC 3339)."},
			"egress_generation": schema.Int64Attribute{Computed: true, MarkdownDescription: "Generation of the egress block's policy on this member."},
			"egress_applied":    schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the data plane enforces it."},
		}},
	}
	resp.Schema = schema.Schema{
		Version: SchemaVersion,
		MarkdownDescription: "A fleet of identical Prime sandboxes as one resource: what an evaluation runs on. " +
			"Every argument of `prime_sandbox` is the members' template, with the same plan-time rules; members are " +
			"keyed by `size` or `members`.\n\n" +
			"Create sends every member's create at once (paced by the provider's request limits, each with its own " +
			"idempotency key and create-journal entry) and waits for all of them together through the shared " +
			"`status:batchGet` poller (up to 100 per request) and the gateway check, so a fleet is ready at the " +
			"platform's pace, not Terraform's `-parallelism`. It returns when every member is `RUNNING` (and, with " +
			"an `egress` block, its born lists are enforced). Members that fail (ERROR, TIMEOUT, never running, lists " +
			"never enforced) fail the apply, naming each member with the platform's error; they are deleted, and " +
			"the healthy members stay in state. (After a failed *first* create Terraform marks the whole fleet " +
			"tainted; `terraform untaint` keeps the healthy members, and the next apply creates only the failed " +
			"ones.)\n\n" +
			"Refresh reads all members through `status:batchGet`; a member gone or stopped out of band drops out and " +
			"the plan re-creates it **in place**. Adding or removing keys creates or deletes just those members; an " +
			"`egress` change updates every member in place; a new `member_triggers` value redoes that one member (its " +
			"sandbox deleted and created again) in place; any other template change replaces the fleet. Destroy " +
			"deletes all members in bulk and confirms none remains.\n\n" +
			"Import by a label (`label:<label>`: the running sandboxes carrying it) or a comma-separated list of " +
			"sandbox IDs, or by identity (Terraform 1.12+). Member keys come from the names `<prefix>-<key>`.\n\n" +
			"Identity: " + fleetIdentityDoc,
		Attributes: attrs,
		Blocks: map[string]schema.Block{
			"egress":   egress.Block(egress.FleetBornFailClosed),
			"timeouts": tfkit.TimeoutsBlock(sandboxTimeoutKeys("every member", fleetCreateTimeoutOutcome)),
		},
	}
}

// fleetCreateTimeoutOutcome is what a fleet's create timeout leaves: the
// members that were not ready are deleted (as any failed member), the
// healthy ones kept.
const fleetCreateTimeoutOutcome = "On timeout the apply fails, naming the members that were not ready by then; " +
	"they are deleted, the healthy members stay in state, and the next apply creates the deleted ones again " +
	"(after a failed first create, see `terraform untaint` above)."

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

// fleetEgressApplied: every member enforces the fleet's egress block.
func fleetEgressApplied(ctx context.Context, f sandboxFleetModel) bool {
	var diags diag.Diagnostics
	for _, m := range sandboxFleetMembers(f, &diags) {
		if !m.EgressApplied.ValueBool() {
			return false
		}
	}
	return !diags.HasError()
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

// fleetApply is what creating or growing a fleet needs for one apply.
type fleetApply struct {
	client        *prime.Client
	journal       *journal.Creates
	prefix        string
	template      sandboxTemplate
	secretsWO     map[string]string
	born          *prime.EgressPolicy
	timeout       time.Duration
	buildTimeout  time.Duration
	egressTimeout time.Duration
}

// createMembers creates the given keys and waits for them to be ready
// (and their born lists enforced). created receives every member that
// exists on the platform as soon as it does (so it reaches state even if
// waiting fails); failed members are deleted and reported. It returns the
// healthy members.
func (a fleetApply) createMembers(ctx context.Context, keys []string, problems *fleet.Problems, saveIDs func(map[string]fleetMember)) map[string]fleetMember {
	var mu sync.Mutex
	created := map[string]fleetMember{}
	var inflight []*journal.InflightCreate
	defer func() { journal.HandOverAll(inflight) }()

	postCtx, cancel := context.WithTimeoutCause(ctx, a.timeout, fmt.Errorf("create timeout (%s) reached", a.timeout))
	defer cancel()
	fleet.ForEachMember(postCtx, keys, 0, func(ctx context.Context, key string) {
		var diags diag.Diagnostics
		req, _, d := createRequest(ctx, types.StringValue(memberName(a.prefix, key)), a.template, a.secretsWO)
		diags.Append(d...)
		egress.SetCreateLists(&req, a.born)
		if diags.HasError() {
			problems.Add(key, "%s", tfkit.DiagSummary(diags))
			return
		}
		sb, entry, err := createSandbox(ctx, a.client, a.journal, req)
		mu.Lock()
		defer mu.Unlock()
		if sb == nil {
			// No entry to finish: createSandbox released a key whose create
			// may have reached the platform, for the next apply to adopt.
			problems.Add(key, "cannot create the sandbox: %v", err)
			return
		}
		inflight = append(inflight, entry)
		created[key] = memberFromSandbox(sb, a.born != nil)
		if err != nil {
			problems.Add(key, "%s", interruptedCreate(sb.ID, err))
		}
	})
	saveIDs(created)
	if ctx.Err() != nil {
		return created
	}

	ready := map[string]fleetMember{}
	fleet.ForEachMember(ctx, tfkit.SortedKeys(created), 0, func(ctx context.Context, key string) {
		mu.Lock()
		m := created[key]
		mu.Unlock()
		if problems.Has(key) {
			return
		}
		id := m.ID.ValueString()
		if err := awaitSandbox(ctx, a.client, id, a.timeout, a.buildTimeout); err != nil {
			problems.Add(key, "%v", err)
			return
		}
		m.Status = types.StringValue(prime.StatusRunning)
		if a.born != nil {
			st, err := egress.WaitBorn(ctx, a.client, id, a.egressTimeout)
			if st != nil {
				m.EgressGeneration = types.Int64Value(st.Generation)
			}
			if err != nil {
				problems.Add(key, "%s", egress.FailClosedMessage(id, a.egressTimeout, "egress", err))
				mu.Lock()
				created[key] = m
				mu.Unlock()
				return
			}
			m.EgressApplied = types.BoolValue(true)
		}
		mu.Lock()
		created[key], ready[key] = m, m
		mu.Unlock()
	})
	if ctx.Err() != nil {
		return created // interrupted: keep every member in state (tainted)
	}
	// Failed members are deleted: the state keeps the healthy ones, and the
	// next apply creates the failed ones again. One that cannot be deleted
	// stays in state rather than running untracked.
	var failed []string
	for k := range created {
		if _, ok := ready[k]; !ok {
			failed = append(failed, k)
		}
	}
	kept := deleteMembers(ctx, a.client, created, failed, a.timeout, problems)
	for k, m := range kept {
		ready[k] = m
	}
	return ready
}

// deleteMembers deletes the given members in bulk and waits until none
// remains; it returns the members it could not delete (to be kept in
// state).
func deleteMembers(ctx context.Context, c *prime.Client, members map[string]fleetMember, keys []string, timeout time.Duration, problems *fleet.Problems) map[string]fleetMember {
	kept := map[string]fleetMember{}
	if len(keys) == 0 {
		return kept
	}
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("delete timeout (%s) reached", timeout))
	defer cancel()
	byID := map[string]string{}
	ids := make([]string, 0, len(keys))
	for _, k := range keys {
		id := members[k].ID.ValueString()
		byID[id] = k
		ids = append(ids, id)
	}
	res, err := c.BulkDeleteSandboxes(ctx, prime.BulkDeleteRequest{SandboxIDs: ids})
	if err != nil {
		for _, k := range keys {
			kept[k] = members[k]
			problems.Add(k, "%sdeleting sandbox %s: %v", problems.Prefixed(k), members[k].ID.ValueString(), err)
		}
		return kept
	}
	gone := map[string]bool{}
	for _, id := range res.Succeeded {
		gone[id] = true
	}
	why := map[string]string{} // the platform's reason for a failed delete
	for _, f := range res.Failed {
		if !strings.Contains(strings.ToLower(f.Error), "not found") {
			why[f.SandboxID] = f.Error
			continue
		}
		gone[f.SandboxID] = true // already gone
	}
	var mu sync.Mutex
	fleet.ForEachMember(ctx, keys, 0, func(ctx context.Context, k string) {
		id := members[k].ID.ValueString()
		if !gone[id] {
			mu.Lock()
			kept[k] = members[k]
			mu.Unlock()
			reason := ""
			if why[id] != "" {
				reason = ": " + why[id]
			}
			problems.Add(k, "%sthe platform did not delete sandbox %s%s", problems.Prefixed(k), id, reason)
			return
		}
		if err := c.WaitForGone(ctx, id); err != nil {
			mu.Lock()
			kept[k] = members[k]
			mu.Unlock()
			problems.Add(k, "%ssandbox %s was not terminated: %v", problems.Prefixed(k), id, err)
		}
	})
	return kept
}

// sandboxFleetFailure is the error of an apply in which members failed.
// What it says became of them is read from the state the apply leaves
// (members, of the wanted keys), so it holds for every kind of failure: a
// member that never started is deleted, one whose egress change is not
// enforced is kept, one that cannot be deleted stays.
func sandboxFleetFailure(problems *fleet.Problems, members map[string]fleetMember, want []string, create bool) string {
	wanted := map[string]bool{}
	for _, k := range want {
		wanted[k] = true
	}
	healthy := 0
	for k := range members {
		if !problems.Has(k) {
			healthy++
		}
	}
	var gone, egress, undeleted, kept []string
	for _, k := range problems.Keys() {
		m, inState := members[k]
		switch {
		case !inState:
			gone = append(gone, k)
		case !wanted[k]:
			undeleted = append(undeleted, k)
		case !m.EgressApplied.IsNull() && !m.EgressApplied.IsUnknown() && !m.EgressApplied.ValueBool():
			egress = append(egress, k)
		default:
			kept = append(kept, k)
		}
	}
	var fates []string
	if g := membersNamed(gone); g.any {
		fates = append(fates, fmt.Sprintf("%s %s not in state (deleted, or never created): the next apply creates %s again.",
			g.names, g.are, g.them))
	}
	if e := membersNamed(egress); e.any {
		fates = append(fates, fmt.Sprintf("%s %s in state with egress_applied = false; the next apply writes %s egress "+
			"policy again.", e.names, e.stay, e.their))
	}
	if u := membersNamed(undeleted); u.any {
		fates = append(fates, fmt.Sprintf("%s could not be deleted and %s in state; the next apply deletes %s again.",
			u.names, u.stay, u.them))
	}
	if k := membersNamed(kept); k.any {
		fates = append(fates, fmt.Sprintf("%s %s in state as %s %s (see the error above).", k.names, k.stay, k.they, k.are))
	}
	msg := fmt.Sprintf("%d member(s) failed; %d are healthy.\n\n%s\n\n%s", problems.Len(), healthy, problems,
		strings.Join(fates, " "))
	if create {
		msg += " Terraform marks a resource whose first create failed as tainted, which would replace the whole " +
			"fleet: run `terraform untaint` on this fleet to keep the healthy members."
	}
	return msg
}

// memberWords names members in a sentence, with the words that agree.
type memberWords struct {
	any                                 bool
	names, are, stay, them, their, they string
}

func membersNamed(keys []string) memberWords {
	quoted := make([]string, len(keys))
	for i, k := range keys {
		quoted[i] = strconv.Quote(k)
	}
	if len(keys) == 1 {
		return memberWords{any: true, names: "Member " + quoted[0], are: "is", stay: "stays", them: "it", their: "its", they: "it"}
	}
	return memberWords{any: len(keys) > 0, names: "Members " + strings.Join(quoted, ", "), are: "are", stay: "stay",
		them: "them", their: "their", they: "they"}
}

func (r *sandboxFleetResource) applyContext(ctx context.Context, plan sandboxFleetModel, config interface {
	GetAttribute(context.Context, path.Path, any) diag.Diagnostics
}, diags *diag.Diagnostics) fleetApply {
	var secretsWO types.Map
	diags.Append(config.GetAttribute(ctx, path.Root("secrets_wo"), &secretsWO)...)
	a := fleetApply{client: r.client, journal: r.journal, prefix: plan.NamePrefix.ValueString(), template: plan.template(), secretsWO: tfkit.StringMapOf(ctx, secretsWO, diags)}
	a.born, _ = egress.BornPolicy(ctx, plan.Egress, diags)
	var d diag.Diagnostics
	a.timeout, d = tfkit.TimeoutOf(plan.Timeouts, "create", defaultSandboxCreateTimeout)
	diags.Append(d...)
	a.buildTimeout, d = tfkit.TimeoutOf(plan.Timeouts, "image_build", prime.DefaultImageBuildTimeout)
	diags.Append(d...)
	a.egressTimeout, d = tfkit.TimeoutOf(plan.Timeouts, "egress", egress.DefaultTimeout)
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
	var problems fleet.Problems
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
	save(healthy)
	if problems.Len() > 0 {
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
	for _, e := range res.Errors {
		if e.Code == prime.BatchCodeNotFound {
			dropped = append(dropped, fmt.Sprintf("%q (%s: gone)", keyOf[e.SandboxID], e.SandboxID))
			delete(members, keyOf[e.SandboxID])
		}
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
	if eg, d := egress.BlockModelOf(ctx, state.Egress); eg != nil && !d.HasError() {
		r.refreshMemberEgress(ctx, members, eg, &resp.Diagnostics)
	}
	setFleetMembers(&state, members)
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &state)...)
	resp.Diagnostics.Append(setFleetIdentity(ctx, resp.Identity, fleetLabelOf(ctx, req.Identity), state)...)
}

// refreshMemberEgress reads every member's policy, as prime_sandbox reads
// its own (egress.RefreshBlock), in parallel.
func (r *sandboxFleetResource) refreshMemberEgress(ctx context.Context, members map[string]fleetMember, eg *egress.BlockModel, diags *diag.Diagnostics) {
	egressObj, d := egress.BlockValue(ctx, eg)
	diags.Append(d...)
	var mu sync.Mutex
	var warnings []string
	var failures fleet.Problems
	fleet.ForEachMember(ctx, tfkit.SortedKeys(members), 0, func(ctx context.Context, k string) {
		mu.Lock()
		m := members[k]
		mu.Unlock()
		st, gone, err := egress.ReadStatus(ctx, r.client, m.ID.ValueString())
		if err != nil {
			failures.Add(k, "%v", err)
			return
		}
		if gone {
			return
		}
		es := &egress.BlockState{Egress: egressObj, EgressGeneration: m.EgressGeneration, EgressApplied: m.EgressApplied}
		var local diag.Diagnostics
		w := egress.RefreshBlock(ctx, es, m.ID.ValueString(), st, &local)
		mu.Lock()
		defer mu.Unlock()
		diags.Append(local...)
		if w != "" {
			warnings = append(warnings, w)
		}
		m.EgressGeneration, m.EgressApplied = es.EgressGeneration, es.EgressApplied
		members[k] = m
	})
	if failures.Len() > 0 {
		diags.AddError("Cannot read the members' egress policies", failures.String())
	}
	if len(warnings) > 0 {
		sort.Strings(warnings)
		diags.AddWarning("Egress block overridden on members", strings.Join(warnings, "\n\n"))
	}
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
	// Redone members go with the removed ones, and come back with the added.
	redo := membersToRedo(plan.MemberTriggers, state.MemberTriggers, keptKeys(keys, have), tfkit.WasImported(ctx, req.Private))
	var problems fleet.Problems
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
	kept := deleteMembers(ctx, r.client, have, append(slices.Clone(remove), redo...),
		timeoutOrDefault(state.Timeouts, "delete", defaultSandboxDeleteTimeout), &problems)
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
	out := plan
	out.MemberTriggers = triggersAfterRedo(plan.MemberTriggers, state.MemberTriggers, notRedone)
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
	if problems.Len() > 0 {
		resp.Diagnostics.AddError("Fleet members failed", sandboxFleetFailure(&problems, members, keys, false))
	}
}

// egressChanged: the apply writes the members' egress policy (new lists,
// removal, or members not enforcing the current ones).
func egressChanged(ctx context.Context, plan, state sandboxFleetModel) bool {
	if plan.Egress.IsNull() != state.Egress.IsNull() {
		return true
	}
	if plan.Egress.IsNull() {
		return false
	}
	var diags diag.Diagnostics
	pm, _ := egress.BlockModelOf(ctx, plan.Egress)
	sm, _ := egress.BlockModelOf(ctx, state.Egress)
	want, _ := pm.Lists.Planned(ctx)
	was, _ := egress.PolicyOfEffective(ctx, sm.EffectiveAllow, sm.EffectiveBlock)
	return want == nil || !prime.SamePolicy(was, *want) || !fleetEgressApplied(ctx, state) || diags.HasError()
}

// rewriteMemberEgress writes the fleet's egress policy (or an open one when
// the block is gone) to every member, fail-closed, in parallel, as
// prime_sandbox writes its own (egress.WriteBlock: own is the block's
// previous policy). It reports whether a layered policy refused a member.
func (r *sandboxFleetResource) rewriteMemberEgress(ctx context.Context, members map[string]fleetMember, a fleetApply, own prime.EgressPolicy, problems *fleet.Problems) (refused bool) {
	target := prime.OpenEgressPolicy()
	if a.born != nil {
		target = *a.born
	}
	var mu sync.Mutex
	fleet.ForEachMember(ctx, tfkit.SortedKeys(members), 0, func(ctx context.Context, k string) {
		mu.Lock()
		m := members[k]
		mu.Unlock()
		id := m.ID.ValueString()
		_, ownGen := egress.PolicyOfBlockState(ctx, egress.BlockState{EgressGeneration: m.EgressGeneration}, &diag.Diagnostics{})
		st, gen, err := egress.WriteBlock(ctx, r.client, id, target, own, ownGen, a.egressTimeout)
		mu.Lock()
		defer mu.Unlock()
		var layered *egress.LayeredPolicyError
		switch {
		case errors.As(err, &layered):
			problems.Add(k, "%s", err.Error())
			members[k] = m
			refused = true
			return
		case err != nil:
			problems.Add(k, "%s", egress.FailClosedMessage(id, a.egressTimeout, "egress", err))
			if a.born != nil && gen > 0 {
				m.EgressGeneration, m.EgressApplied = types.Int64Value(gen), types.BoolValue(false)
			}
			members[k] = m
			return
		}
		if a.born != nil {
			m.EgressGeneration, m.EgressApplied = types.Int64Value(gen), types.BoolValue(st.Enforces(gen))
		} else {
			m.EgressGeneration, m.EgressApplied = types.Int64Null(), types.BoolNull()
		}
		members[k] = m
	})
	return refused
}

func timeoutOrDefault(v timeouts.Value, key string, def time.Duration) time.Duration {
	d, diags := tfkit.TimeoutOf(v, key, def)
	if diags.HasError() {
		return def
	}
	return d
}

func (r *sandboxFleetResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var state sandboxFleetModel
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	members := sandboxFleetMembers(state, &resp.Diagnostics)
	var problems fleet.Problems
	kept := deleteMembers(ctx, r.client, members, tfkit.SortedKeys(members), timeoutOrDefault(state.Timeouts, "delete", defaultSandboxDeleteTimeout), &problems)
	if len(kept) > 0 {
		// What could not be deleted stays in state, so a destroy can retry.
		setFleetMembers(&state, kept)
		resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &state)...)
		resp.Diagnostics.AddError("Fleet members not deleted", problems.String())
	}
}
