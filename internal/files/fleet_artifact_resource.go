package files

// prime_fleet_artifact: prime_sandbox_artifact on every member of a fleet,
// each member's result to its own local path ({key} substituted), through
// the same download code. A member downloads again when its sandbox or its
// entry of member_triggers changes, so a fleet command that re-ran one
// member re-downloads only that member's result.

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/primeintellect/terraform-provider-prime/internal/memberkit"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

var (
	_ resource.ResourceWithConfigure      = (*fleetArtifactResource)(nil)
	_ resource.ResourceWithValidateConfig = (*fleetArtifactResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*fleetArtifactResource)(nil)
)

// NewFleetArtifactResource is the prime_fleet_artifact constructor.
func NewFleetArtifactResource() resource.Resource { return &fleetArtifactResource{} }

type fleetArtifactResource struct {
	client *prime.Client
}

func (r *fleetArtifactResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_fleet_artifact"
}

func (r *fleetArtifactResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = tfkit.ClientFrom(req.ProviderData, &resp.Diagnostics)
}

func (r *fleetArtifactResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := artifactArgumentAttributes()
	trig := attrs["triggers"].(schema.MapAttribute)
	trig.MarkdownDescription = "Arbitrary values; changing any of them downloads again from every member (the resource " +
		"is replaced). For per-member re-runs use `member_triggers`."
	attrs["triggers"] = trig
	attrs["id"] = schema.StringAttribute{
		Computed: true, MarkdownDescription: "Unique ID of this set of downloads.",
		PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
	}
	attrs["sandbox_ids"] = memberkit.SandboxIDsAttribute("Member key → sandbox ID, usually `{ for k, r in " +
		"prime_fleet_command.agent.results : k => r.sandbox_id if !r.failed }` (which orders the downloads after the " +
		"agent and covers only members whose agent succeeded). Changing it updates in place: new members and members " +
		"whose sandbox changed download; removed members drop out of `members` (their files stay on disk unless " +
		"`keep_on_destroy = false`).")
	attrs["local_path"] = schema.StringAttribute{
		Required: true, PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
		MarkdownDescription: "Where each member's result goes, with `{key}` replaced by the member's key (it must appear, " +
			"so members never overwrite each other), e.g. `\"${path.root}/results/{key}/transcript.jsonl\"`. Otherwise as " +
			"`prime_sandbox_artifact`'s `local_path`." + redownload,
		Validators: []validator.String{memberKeyPathValidator{}},
	}
	attrs["member_triggers"] = schema.MapAttribute{
		Optional: true, ElementType: types.StringType,
		MarkdownDescription: "Member key → any value; a member whose value changes downloads again, alone. Give it the " +
			"producing command's per-member run IDs: `{ for k, r in prime_fleet_command.agent.results : k => r.run_id if " +
			"!r.failed }`, " +
			"so a member is downloaded again exactly when its agent ran again. Changing it updates in place.",
	}
	attrs["max_concurrency"] = schema.Int64Attribute{
		Optional: true, Computed: true, Default: int64default.StaticInt64(memberkit.DefaultConcurrency),
		MarkdownDescription: fmt.Sprintf("How many members download at once. Default `%d`. Changing it updates in place.", memberkit.DefaultConcurrency),
		Validators:          []validator.Int64{int64validator.AtLeast(1)},
	}
	entry := artifactResultAttributes()
	entry["sandbox_id"] = schema.StringAttribute{Computed: true, MarkdownDescription: "Sandbox downloaded from."}
	entry["local_path"] = schema.StringAttribute{Computed: true, MarkdownDescription: "The member's local path."}
	attrs["members"] = schema.MapNestedAttribute{
		Computed: true,
		MarkdownDescription: "Member key → its download: `sandbox_id`, `local_path`, `exists`, `files` (local path, size " +
			"and sha256 of every file written) and `refused` (archive entries not unpacked). Members planned to " +
			"download show as unknown until the apply.",
		NestedObject: schema.NestedAttributeObject{Attributes: entry},
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Downloads each member's result from a fleet to local disk, as `prime_sandbox_artifact` does " +
			"for one sandbox (same kinds, caps, refusals of hostile archive entries, temporary names), to " +
			"`local_path` with `{key}` replaced by the member's key. Members download concurrently; every failed member " +
			"is named in one error. On create nothing is stored when any member fails (the next apply downloads every " +
			"member again); on update, failed members are left out of `members`, so the next apply retries only them." +
			ResultPathsAdvice,
		Attributes: attrs,
	}
}

// memberKeyPathValidator requires the {key} placeholder.
type memberKeyPathValidator struct{}

func (memberKeyPathValidator) Description(context.Context) string {
	return "must contain {key}, replaced by each member's key"
}

func (v memberKeyPathValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (memberKeyPathValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if !strings.Contains(req.ConfigValue.ValueString(), memberKeyPlaceholder) {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid local_path",
			fmt.Sprintf("%s: %q has no {key}: every member's result needs its own place, e.g. %q", req.Path,
				req.ConfigValue.ValueString(), "results/{key}/"+lastElem(req.ConfigValue.ValueString())))
	}
}

func (r *fleetArtifactResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m fleetArtifactModel
	resp.Diagnostics.Append(tfkit.GetConfig(ctx, req.Config, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if strays := memberkit.StrayKeys(m.MemberTriggers, m.SandboxIDs); len(strays) > 0 {
		resp.Diagnostics.AddAttributeWarning(path.Root("member_triggers"), "Triggers of unknown members",
			fmt.Sprintf("member_triggers: %s %s not a key of sandbox_ids, so nothing follows from it.",
				tfkit.QuoteKeys(strays), tfkit.PluralVerb(len(strays), "is", "are")))
	}
}

func (r *fleetArtifactResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan fleetArtifactModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if plan.SandboxIDs.IsUnknown() || plan.MemberTriggers.IsUnknown() {
		plan.Members = types.MapUnknown(fleetArtifactMemberType())
		resp.Diagnostics.Append(tfkit.SetPlan(ctx, &resp.Plan, &plan)...)
		return
	}
	var state fleetArtifactModel
	var prior map[string]fleetArtifactMember
	if !req.State.Raw.IsNull() {
		resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
		prior = fleetArtifactMembersOf(state.Members, &resp.Diagnostics)
	}
	planned := map[string]*fleetArtifactMember{}
	for k, v := range plan.SandboxIDs.Elements() {
		id, _ := v.(types.String)
		if p, had := prior[k]; had && keepArtifactMember(p, id, plan, state, k) {
			planned[k] = &p
			continue
		}
		planned[k] = nil
	}
	plan.Members = fleetArtifactMembersValue(planned)
	resp.Diagnostics.Append(tfkit.SetPlan(ctx, &resp.Plan, &plan)...)
}

func (r *fleetArtifactResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var plan fleetArtifactModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	ids := tfkit.StringMapOf(ctx, plan.SandboxIDs, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	var problems memberkit.Problems
	done, refused := r.downloadMembers(ctx, plan, ids, &problems)
	warnRefused(&resp.Diagnostics, plan, refused)
	if problems.Len() > 0 {
		memberkit.AddFailure(&resp.Diagnostics, "download", &problems, len(ids))
		return
	}
	plan.ID = types.StringValue(prime.NewIdempotencyKey()[:16])
	plan.Members = fleetArtifactMembersValue(tfkit.PointersOf(done))
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &plan)...)
}

// Read drops members whose files are missing or changed on disk, so the
// next apply downloads them again.
func (r *fleetArtifactResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state fleetArtifactModel
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	members := fleetArtifactMembersOf(state.Members, &resp.Diagnostics)
	var dropped []string
	for k, m := range members {
		if !localFilesIntact(artifactFilesOf(m.Files)) {
			delete(members, k)
			dropped = append(dropped, k)
		}
	}
	if len(dropped) == 0 {
		resp.State.Raw = req.State.Raw
		return
	}
	resp.Diagnostics.AddWarning("Downloaded files changed on disk",
		fmt.Sprintf("Files of members %s are missing or changed size; the next apply downloads them again.",
			tfkit.QuoteKeys(tfkit.SortedKeys(tfkit.SetOf(dropped)))))
	state.Members = fleetArtifactMembersValue(tfkit.PointersOf(members))
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &state)...)
}

// Update downloads the members ModifyPlan planned to download and keeps the
// others; members that left are dropped (their files are removed only with
// keep_on_destroy = false).
func (r *fleetArtifactResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state fleetArtifactModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	ids := tfkit.StringMapOf(ctx, plan.SandboxIDs, &resp.Diagnostics)
	prior := fleetArtifactMembersOf(state.Members, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	records := map[string]fleetArtifactMember{}
	todo := map[string]string{}
	for k, id := range ids {
		if p, had := prior[k]; had && keepArtifactMember(p, types.StringValue(id), plan, state, k) {
			records[k] = p
			continue
		}
		todo[k] = id
	}
	var problems memberkit.Problems
	if len(todo) > 0 {
		if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
			return
		}
		done, refused := r.downloadMembers(ctx, plan, todo, &problems)
		warnRefused(&resp.Diagnostics, plan, refused)
		for k, v := range done {
			records[k] = v
		}
	}
	if !plan.KeepOnDestroy.ValueBool() {
		for k, p := range prior {
			if _, still := ids[k]; !still && p.Exists.ValueBool() {
				_ = removeLocalArtifact(plan.Kind.ValueString(), p.LocalPath.ValueString())
			}
		}
	}
	plan.Members = fleetArtifactMembersValue(tfkit.PointersOf(records))
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &plan)...)
	if problems.Len() > 0 {
		memberkit.AddFailure(&resp.Diagnostics, "download", &problems, len(todo))
	}
}

// Delete keeps the files unless keep_on_destroy is false.
func (r *fleetArtifactResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state fleetArtifactModel
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	if resp.Diagnostics.HasError() || state.KeepOnDestroy.ValueBool() {
		return
	}
	var problems memberkit.Problems
	for k, m := range fleetArtifactMembersOf(state.Members, &resp.Diagnostics) {
		if !m.Exists.ValueBool() {
			continue
		}
		if err := removeLocalArtifact(state.Kind.ValueString(), m.LocalPath.ValueString()); err != nil {
			problems.Add(k, "%v", err)
		}
	}
	if problems.Len() > 0 {
		resp.Diagnostics.AddError("Cannot remove the downloaded files", problems.String())
	}
}

// downloadMembers downloads the members in ids concurrently.
func (r *fleetArtifactResource) downloadMembers(ctx context.Context, m fleetArtifactModel, ids map[string]string, problems *memberkit.Problems) (map[string]fleetArtifactMember, map[string][]prime.RefusedEntry) {
	var mu sync.Mutex
	done := map[string]fleetArtifactMember{}
	refused := map[string][]prime.RefusedEntry{}
	tflog.Info(ctx, "downloading from fleet", map[string]any{"members": len(ids), "path": m.RemotePath.ValueString()})
	memberkit.ForEachMember(ctx, tfkit.SortedKeys(ids), int(m.MaxConcurrency.ValueInt64()), func(ctx context.Context, key string) {
		local := memberLocalPath(m.LocalPath.ValueString(), key)
		res, err := DownloadArtifact(ctx, r.client, ArtifactRequest{
			SandboxID: ids[key], Remote: m.RemotePath.ValueString(), Local: local, Kind: m.Kind.ValueString(),
			MaxBytes: m.MaxSize.ValueInt64(), AllowMissing: m.AllowMissing.ValueBool(),
		})
		if err != nil {
			problems.Add(key, "%v", err)
			return
		}
		rec := fleetArtifactMember{SandboxID: types.StringValue(ids[key]), LocalPath: types.StringValue(local),
			Exists: types.BoolValue(res.Exists), Files: ArtifactFilesValue(res.Files), Refused: artifactRefusedValue(res.Refused)}
		mu.Lock()
		defer mu.Unlock()
		done[key] = rec
		if len(res.Refused) > 0 {
			refused[key] = res.Refused
		}
	})
	return done, refused
}

// keepArtifactMember: a recorded download stays when its sandbox and its
// member trigger are unchanged.
func keepArtifactMember(prior fleetArtifactMember, id types.String, plan, state fleetArtifactModel, key string) bool {
	if id.IsUnknown() || !prior.SandboxID.Equal(id) {
		return false
	}
	pt, st := memberkit.TriggerOf(plan.MemberTriggers, key), memberkit.TriggerOf(state.MemberTriggers, key)
	return !pt.IsUnknown() && pt.Equal(st)
}

// warnRefused reports refused archive entries, per member.
func warnRefused(diags *diag.Diagnostics, m fleetArtifactModel, refused map[string][]prime.RefusedEntry) {
	if len(refused) == 0 {
		return
	}
	var b strings.Builder
	for _, k := range tfkit.SortedKeys(refused) {
		fmt.Fprintf(&b, "\nMember %q (%s):%s", k, memberLocalPath(m.LocalPath.ValueString(), k), refusedSummary(refused[k]))
	}
	diags.AddWarning("Archive entries refused", fmt.Sprintf("%s held entries that were not unpacked:%s", m.RemotePath.ValueString(), b.String()))
}

// memberKeyPlaceholder is replaced by each member's key in local_path.
const memberKeyPlaceholder = "{key}"

// memberLocalPath is local_path with the member's key in place.
func memberLocalPath(template, key string) string {
	return strings.ReplaceAll(template, memberKeyPlaceholder, key)
}

func lastElem(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

type fleetArtifactModel struct {
	ID             types.String `tfsdk:"id"`
	SandboxIDs     types.Map    `tfsdk:"sandbox_ids"`
	RemotePath     types.String `tfsdk:"remote_path"`
	Kind           types.String `tfsdk:"kind"`
	LocalPath      types.String `tfsdk:"local_path"`
	MaxSize        types.Int64  `tfsdk:"max_size"`
	AllowMissing   types.Bool   `tfsdk:"allow_missing"`
	KeepOnDestroy  types.Bool   `tfsdk:"keep_on_destroy"`
	Triggers       types.Map    `tfsdk:"triggers"`
	MemberTriggers types.Map    `tfsdk:"member_triggers"`
	MaxConcurrency types.Int64  `tfsdk:"max_concurrency"`
	Members        types.Map    `tfsdk:"members"`
}

// fleetArtifactMember is one member's download in `members`.
type fleetArtifactMember struct {
	SandboxID, LocalPath types.String
	Exists               types.Bool
	Files, Refused       types.List
}

var fleetArtifactMemberAttrTypes = map[string]attr.Type{
	"sandbox_id": types.StringType, "local_path": types.StringType, "exists": types.BoolType,
	"files": types.ListType{ElemType: ArtifactFileType()}, "refused": types.ListType{ElemType: artifactRefusedType()},
}

func fleetArtifactMemberType() types.ObjectType {
	return types.ObjectType{AttrTypes: fleetArtifactMemberAttrTypes}
}

func (m fleetArtifactMember) object() types.Object {
	return types.ObjectValueMust(fleetArtifactMemberAttrTypes, map[string]attr.Value{
		"sandbox_id": m.SandboxID, "local_path": m.LocalPath, "exists": m.Exists, "files": m.Files, "refused": m.Refused,
	})
}

func fleetArtifactMembersValue(members map[string]*fleetArtifactMember) types.Map {
	elems := make(map[string]attr.Value, len(members))
	for k, m := range members {
		if m == nil {
			elems[k] = types.ObjectUnknown(fleetArtifactMemberAttrTypes)
			continue
		}
		elems[k] = m.object()
	}
	return types.MapValueMust(fleetArtifactMemberType(), elems)
}

func fleetArtifactMembersOf(v types.Map, diags *diag.Diagnostics) map[string]fleetArtifactMember {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	return memberkit.MembersOfMap(v, diags, func(_ string, a map[string]attr.Value) fleetArtifactMember {
		files, _ := a["files"].(types.List)
		refused, _ := a["refused"].(types.List)
		return fleetArtifactMember{SandboxID: tfkit.StringAttr(a, "sandbox_id"), LocalPath: tfkit.StringAttr(a, "local_path"),
			Exists: tfkit.BoolAttr(a, "exists"), Files: files, Refused: refused}
	})
}
