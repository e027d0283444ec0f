package files

// prime_fleet_file: prime_sandbox_file on every member of a fleet — the
// same file or directory everywhere, or a different source per member (N
// rollouts of N tasks). Each member's upload goes through the same source
// rules and the same client call as the single resource; each distinct
// source is read and archived once for all the members that take it
// (fleet_file_sources.go).

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
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
	_ resource.ResourceWithConfigure      = (*fleetFileResource)(nil)
	_ resource.ResourceWithValidateConfig = (*fleetFileResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*fleetFileResource)(nil)
)

// NewFleetFileResource is the prime_fleet_file constructor.
func NewFleetFileResource() resource.Resource { return &fleetFileResource{} }

type fleetFileResource struct {
	client *prime.Client
}

func (r *fleetFileResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_fleet_file"
}

func (r *fleetFileResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = tfkit.ClientFrom(req.ProviderData, &resp.Diagnostics)
}

func (r *fleetFileResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	// The sources mean what they mean on prime_sandbox_file, but a change
	// is an in-place update here: only the members whose bytes change
	// upload again.
	inPlace := func(d string) string {
		return strings.TrimSuffix(d, byFingerprint) + " A change of the bytes uploads again, in place, to the members " +
			"that take this source (their `files` entries show the new `sha256` in the plan); the others keep theirs."
	}
	attrs := fileSourceAttributes()
	for name, a := range attrs {
		s := a.(schema.StringAttribute)
		s.MarkdownDescription = "The shared source, for every member without an entry in `members`: " + inPlace(s.MarkdownDescription)
		attrs[name] = s
	}
	memberAttrs := map[string]schema.Attribute{}
	for name, a := range fileSourceAttributes() {
		s := a.(schema.StringAttribute)
		memberAttrs[name] = schema.StringAttribute{Optional: true, MarkdownDescription: inPlace(s.MarkdownDescription)}
	}
	attrs["id"] = schema.StringAttribute{
		Computed: true,
		MarkdownDescription: "Fingerprint of what this resource puts in: of `path`, the shared source's `sha256` and " +
			"each `members` entry's key and `sha256`. Known at plan time, it changes exactly when those bytes (a file's " +
			"content, a directory's tree) or the path change, so a command whose `triggers` name it runs again after " +
			"a change of the task, on every member. Members that join or leave with the shared source, a member whose " +
			"sandbox is replaced, `mode` and `triggers` keep it. To run only the members whose bytes changed, name " +
			"their `files[<key>].sha256` in `member_triggers` instead.",
	}
	attrs["sandbox_ids"] = memberkit.SandboxIDsAttribute("Member key → ID of a `RUNNING` sandbox, usually " +
		"`prime_sandbox_fleet.<name>.sandbox_ids`. Changing it updates in place: new members and members whose " +
		"sandbox changed get the file; removed members' files are removed (unless their sandbox is gone).")
	attrs["path"] = schema.StringAttribute{
		Required: true, PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
		MarkdownDescription: "Absolute path in every member, as `prime_sandbox_file`'s `path`: the file, or with " +
			"`source_dir` the directory to unpack into. Parents are created; the path never holds a partial file." + reupload,
		Validators: []validator.String{remotePathValidator{}},
	}
	attrs["members"] = schema.MapNestedAttribute{
		Optional: true,
		MarkdownDescription: "Per-member sources: member key → exactly one of `content`, `content_base64`, `source` " +
			"or `source_dir`, for an evaluation whose members run different tasks. A member listed here takes its own " +
			"source; the others take the shared one (without a shared source, every member must be listed). A change " +
			"uploads again only to the members whose bytes changed.",
		NestedObject: schema.NestedAttributeObject{Attributes: memberAttrs},
	}
	attrs["mode"] = schema.StringAttribute{
		Optional: true,
		MarkdownDescription: "Permission bits as an octal string, such as `\"0644\"`, applied after each upload (with a " +
			"directory, to the directory itself). Changing it updates in place (`chmod` on every member).",
		Validators: []validator.String{modeValidator{}},
	}
	attrs["triggers"] = schema.MapAttribute{
		Optional: true, ElementType: types.StringType,
		PlanModifiers:       []planmodifier.Map{mapplanmodifier.RequiresReplace()},
		MarkdownDescription: "Arbitrary values; changing any of them uploads again to every member." + reupload,
	}
	attrs["max_concurrency"] = schema.Int64Attribute{
		Optional: true, Computed: true, Default: int64default.StaticInt64(memberkit.DefaultConcurrency),
		MarkdownDescription: fmt.Sprintf("How many members upload at once. Default `%d`. Each upload holds one gateway "+
			"connection; its token requests go through the provider's request pacing. Changing it updates in place.",
			memberkit.DefaultConcurrency),
		Validators: []validator.Int64{int64validator.AtLeast(1)},
	}
	attrs["files"] = schema.MapNestedAttribute{
		Computed: true,
		MarkdownDescription: "Member key → what it holds: `sandbox_id`, and the `sha256` and `size` of its upload (of the " +
			"archive for a directory). Known at plan time for members whose sandbox is known; a member whose bytes " +
			"change shows its new fingerprint in the plan.",
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"sandbox_id": schema.StringAttribute{Computed: true, MarkdownDescription: "Sandbox the file is in."},
			"sha256":     schema.StringAttribute{Computed: true, MarkdownDescription: "SHA-256 of the upload (hex)."},
			"size":       schema.Int64Attribute{Computed: true, MarkdownDescription: "Bytes uploaded."},
		}},
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Puts a file or a directory into every member of a fleet, as `prime_sandbox_file` does for " +
			"one sandbox (same sources, same fingerprints, same upload rules), and optionally a different source per " +
			"member (`members`), so each rollout gets its own task. Each distinct source is read and archived once; " +
			"members upload concurrently, up to `max_concurrency`.\n\n" +
			"Any failure fails the apply with one error naming every failed member. On create nothing is stored " +
			"(the next apply uploads to every member again, which is harmless); on update the members that succeeded " +
			"are recorded and the failed ones are left out of `files`, so the next apply uploads only to those.\n\n" +
			"Write-only content is not offered for fleets: a secret every member needs belongs in the fleet's " +
			"`secrets_wo`, or in a `prime_sandbox_file` per member.",
		Attributes: attrs,
	}
}

func (r *fleetFileResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m fleetFileModel
	resp.Diagnostics.Append(tfkit.GetConfig(ctx, req.Config, &m)...)
	if resp.Diagnostics.HasError() || sourceArgsUnknown(m.Content, m.ContentBase64, m.Source, m.SourceDir) || membersUnknown(m.Members) {
		return
	}
	fs := resolveFleetSources(m, &resp.Diagnostics)
	if fs.shared == nil && len(fs.perMember) == 0 && !resp.Diagnostics.HasError() {
		resp.Diagnostics.AddAttributeError(path.Root("content"), "Invalid file source",
			"set a shared source (exactly one of content, content_base64, source, source_dir) or members")
	}
	if !m.SandboxIDs.IsUnknown() && !m.SandboxIDs.IsNull() {
		fs.checkCoverage(tfkit.SortedKeys(m.SandboxIDs.Elements()), &resp.Diagnostics)
	}
}

// ModifyPlan fingerprints every distinct source once, derives the ID from
// the fingerprints and plans each member's entry of files: its sandbox,
// sha256 and size.
func (r *fleetFileResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan fleetFileModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.ID, plan.Files = types.StringUnknown(), types.MapUnknown(fleetFileType())
	if plan.Path.IsUnknown() || sourceArgsUnknown(plan.Content, plan.ContentBase64, plan.Source, plan.SourceDir) || membersUnknown(plan.Members) {
		resp.Diagnostics.Append(tfkit.SetPlan(ctx, &resp.Plan, &plan)...)
		return
	}
	fs := resolveFleetSources(plan, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	prints := fs.fingerprints(&resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.ID = types.StringValue(fleetFileID(plan.Path.ValueString(), prints))
	if plan.SandboxIDs.IsUnknown() {
		resp.Diagnostics.Append(tfkit.SetPlan(ctx, &resp.Plan, &plan)...)
		return
	}
	keys := tfkit.SortedKeys(plan.SandboxIDs.Elements())
	fs.checkCoverage(keys, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	planned := make(map[string]*fleetFileEntry, len(keys))
	for _, k := range keys {
		fp, _ := prints.of(k)
		id, _ := plan.SandboxIDs.Elements()[k].(types.String)
		if id.IsUnknown() {
			planned[k] = nil
			continue
		}
		planned[k] = &fleetFileEntry{SandboxID: id, SHA256: types.StringValue(fp.SHA256), Size: types.Int64Value(fp.Size)}
	}
	plan.Files = fleetFilesValue(planned)
	resp.Diagnostics.Append(tfkit.SetPlan(ctx, &resp.Plan, &plan)...)
}

func (r *fleetFileResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var plan fleetFileModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	todo := uploadsOf(ctx, plan, tfkit.SortedKeys(plan.SandboxIDs.Elements()), &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	var problems memberkit.Problems
	done := r.uploadMembers(ctx, plan, todo, &problems)
	if problems.Len() > 0 {
		memberkit.AddFailure(&resp.Diagnostics, "upload", &problems, len(todo))
		return
	}
	settleID(&plan, &resp.Diagnostics)
	plan.Files = fleetFilesValue(tfkit.PointersOf(done))
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &plan)...)
}

// Read drops the members whose sandbox this process knows to be gone (the
// file went with it); it makes no request.
func (r *fleetFileResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state fleetFileModel
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	if resp.Diagnostics.HasError() || r.client == nil {
		resp.State.Raw = req.State.Raw
		return
	}
	files := fleetFilesOfMap(state.Files, &resp.Diagnostics)
	changed := false
	for k, e := range files {
		if known, ok := r.client.Known(e.SandboxID.ValueString()); ok && prime.IsTerminalStatus(known.Status) {
			delete(files, k)
			changed = true
		}
	}
	if !changed {
		resp.State.Raw = req.State.Raw
		return
	}
	state.Files = fleetFilesValue(tfkit.PointersOf(files))
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &state)...)
}

// Update uploads to the members whose sandbox or bytes changed, changes the
// mode everywhere when it changed, and removes the files of members that
// left.
func (r *fleetFileResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state fleetFileModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	prior := fleetFilesOfMap(state.Files, &resp.Diagnostics)
	ids := tfkit.StringMapOf(ctx, plan.SandboxIDs, &resp.Diagnostics)
	planned := fleetFilesOfMap(plan.Files, &resp.Diagnostics)
	records := map[string]fleetFileEntry{}
	var changedKeys []string
	for k, id := range ids {
		p, had := prior[k]
		if had && p.SandboxID.ValueString() == id && planned[k].SHA256.Equal(p.SHA256) {
			records[k] = p
			continue
		}
		changedKeys = append(changedKeys, k)
	}
	todo := uploadsOf(ctx, plan, changedKeys, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	var problems memberkit.Problems
	tried := len(todo)
	if len(todo) > 0 || len(prior) > len(records) || !plan.Mode.Equal(state.Mode) {
		if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
			return
		}
	}
	for k, e := range r.uploadMembers(ctx, plan, todo, &problems) {
		records[k] = e
	}
	if mode := modeOf(plan.Mode); mode != nil && !plan.Mode.Equal(state.Mode) {
		kept := map[string]fleetUpload{}
		for k, e := range records {
			if _, uploaded := todo[k]; !uploaded {
				kept[k] = fleetUpload{sandboxID: e.SandboxID.ValueString()}
			}
		}
		tried += len(kept)
		memberkit.ForEachMember(ctx, tfkit.SortedKeys(kept), int(plan.MaxConcurrency.ValueInt64()), func(ctx context.Context, key string) {
			if err := r.client.ChangeMode(ctx, kept[key].sandboxID, plan.Path.ValueString(), *mode); err != nil {
				problems.Add(key, "sandbox %s: changing the mode: %v", kept[key].sandboxID, err)
			}
		})
		for _, k := range problems.Keys() {
			if _, uploaded := todo[k]; !uploaded {
				delete(records, k) // recorded again by the next apply
			}
		}
	}
	// Members that left, or moved to another sandbox: their old copy goes.
	leaving := map[string]string{}
	for k, p := range prior {
		if id, still := ids[k]; !still || id != p.SandboxID.ValueString() {
			leaving[k] = p.SandboxID.ValueString()
		}
	}
	dir := holdsDirectories(plan)
	var cleanup memberkit.Problems
	memberkit.ForEachMember(ctx, tfkit.SortedKeys(leaving), int(plan.MaxConcurrency.ValueInt64()), func(ctx context.Context, key string) {
		if err := removeUpload(ctx, r.client, leaving[key], plan.Path.ValueString(), dir); err != nil {
			cleanup.Add(key, "%v", err)
		}
	})
	if cleanup.Len() > 0 {
		resp.Diagnostics.AddWarning("Files of departed members not removed",
			"These members left the fleet file, but their copies could not be removed:\n\n"+cleanup.String())
	}
	settleID(&plan, &resp.Diagnostics)
	plan.Files = fleetFilesValue(tfkit.PointersOf(records))
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &plan)...)
	if problems.Len() > 0 {
		memberkit.AddFailure(&resp.Diagnostics, "upload", &problems, tried)
	}
}

// Delete removes the file from every member whose sandbox still runs.
func (r *fleetFileResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var state fleetFileModel
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	files := fleetFilesOfMap(state.Files, &resp.Diagnostics)
	dir := holdsDirectories(state)
	var problems memberkit.Problems
	memberkit.ForEachMember(ctx, tfkit.SortedKeys(files), int(state.MaxConcurrency.ValueInt64()), func(ctx context.Context, key string) {
		if err := removeUpload(ctx, r.client, files[key].SandboxID.ValueString(), state.Path.ValueString(), dir); err != nil {
			problems.Add(key, "%v", err)
		}
	})
	if problems.Len() > 0 {
		resp.Diagnostics.AddError("Cannot remove the fleet's files",
			fmt.Sprintf("The file could not be removed from %d of %d members:\n\n%s", problems.Len(), len(files), problems.String()))
	}
}

// settleID fills an ID the plan could not know (a source unknown then).
func settleID(m *fleetFileModel, diags *diag.Diagnostics) {
	if !m.ID.IsUnknown() {
		return
	}
	prints := resolveFleetSources(*m, diags).fingerprints(diags)
	if !diags.HasError() {
		m.ID = types.StringValue(fleetFileID(m.Path.ValueString(), prints))
	}
}

// fleetUpload is one member's planned upload.
type fleetUpload struct {
	sandboxID string
	source    fileSource
	sha256    string
}

// uploadMembers uploads to the members in todo concurrently, each distinct
// source opened once, and returns what each member now holds.
func (r *fleetFileResource) uploadMembers(ctx context.Context, m fleetFileModel, todo map[string]fleetUpload, problems *memberkit.Problems) map[string]fleetFileEntry {
	opened := map[string]*openedSource{}
	var openErr = map[string]error{}
	for _, k := range tfkit.SortedKeys(todo) {
		u := todo[k]
		sk := sourceKey(u.source)
		if _, done := opened[sk]; done {
			continue
		}
		if _, failed := openErr[sk]; failed {
			continue
		}
		o, err := u.source.open(u.sha256)
		if err != nil {
			openErr[sk] = err
			continue
		}
		opened[sk] = o
	}
	defer func() {
		for _, o := range opened {
			o.Close()
		}
	}()
	remote := m.Path.ValueString()
	mode := modeOf(m.Mode)
	var mu sync.Mutex
	done := map[string]fleetFileEntry{}
	tflog.Info(ctx, "uploading to fleet", map[string]any{"members": len(todo), "path": remote, "sources": len(opened)})
	memberkit.ForEachMember(ctx, tfkit.SortedKeys(todo), int(m.MaxConcurrency.ValueInt64()), func(ctx context.Context, key string) {
		u := todo[key]
		sk := sourceKey(u.source)
		if err := openErr[sk]; err != nil {
			problems.Add(key, "sandbox %s: %v", u.sandboxID, err)
			return
		}
		o := opened[sk]
		if _, err := r.client.PutFile(ctx, u.sandboxID, prime.PutFileRequest{
			Path: remote, Source: o.Upload, Mode: mode, Extract: u.source.isDir(),
		}); err != nil {
			problems.Add(key, "sandbox %s, %s: upload failed: %v", u.sandboxID, remote, err)
			return
		}
		mu.Lock()
		done[key] = fleetFileEntry{SandboxID: types.StringValue(u.sandboxID), SHA256: types.StringValue(o.Print.SHA256), Size: types.Int64Value(o.Print.Size)}
		mu.Unlock()
	})
	return done
}

// uploadsOf is the upload each key in keys plans.
func uploadsOf(ctx context.Context, m fleetFileModel, keys []string, diags *diag.Diagnostics) map[string]fleetUpload {
	fs := resolveFleetSources(m, diags)
	ids := tfkit.StringMapOf(ctx, m.SandboxIDs, diags)
	planned := fleetFilesOfMap(m.Files, diags)
	out := make(map[string]fleetUpload, len(keys))
	for _, k := range keys {
		src, ok := fs.of(k)
		if !ok {
			diags.AddError("Member without a source", fmt.Sprintf("member %q has no source; this should have failed the plan", k))
			continue
		}
		out[k] = fleetUpload{sandboxID: ids[k], source: src, sha256: planned[k].SHA256.ValueString()}
	}
	return out
}

// holdsDirectories reports whether any member takes a directory, so
// removals must be recursive.
func holdsDirectories(m fleetFileModel) bool {
	var diags diag.Diagnostics
	fs := resolveFleetSources(m, &diags)
	if fs.shared != nil && fs.shared.isDir() {
		return true
	}
	for _, s := range fs.perMember {
		if s.isDir() {
			return true
		}
	}
	return false
}

// fleetFileID is a fleet file's ID: a fingerprint of the path and of the
// bytes it puts in — the shared source's and each member's own, by key.
// Known at plan time, it changes exactly when those change, so that a
// command naming it in triggers runs again after a change of the task.
// Members joining or leaving with the shared source, a member's new
// sandbox, mode and triggers leave it as it is: the bytes are the same.
func fleetFileID(remote string, prints sourcePrints) string {
	var b strings.Builder
	fmt.Fprintf(&b, "path %q\n", remote)
	if prints.shared != nil {
		fmt.Fprintf(&b, "shared %s\n", prints.shared.SHA256)
	}
	for _, k := range tfkit.SortedKeys(prints.perMember) {
		fmt.Fprintf(&b, "member %q %s\n", k, prints.perMember[k].SHA256)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])[:16]
}

type fleetFileModel struct {
	ID             types.String `tfsdk:"id"`
	SandboxIDs     types.Map    `tfsdk:"sandbox_ids"`
	Path           types.String `tfsdk:"path"`
	Content        types.String `tfsdk:"content"`
	ContentBase64  types.String `tfsdk:"content_base64"`
	Source         types.String `tfsdk:"source"`
	SourceDir      types.String `tfsdk:"source_dir"`
	Members        types.Map    `tfsdk:"members"`
	Mode           types.String `tfsdk:"mode"`
	Triggers       types.Map    `tfsdk:"triggers"`
	MaxConcurrency types.Int64  `tfsdk:"max_concurrency"`
	Files          types.Map    `tfsdk:"files"`
}

// fleetFileEntry is one member's upload in `files`.
type fleetFileEntry struct {
	SandboxID types.String
	SHA256    types.String
	Size      types.Int64
}

var (
	fleetFileAttrTypes = map[string]attr.Type{"sandbox_id": types.StringType, "sha256": types.StringType, "size": types.Int64Type}
)

func fleetFileType() types.ObjectType { return types.ObjectType{AttrTypes: fleetFileAttrTypes} }

func (e fleetFileEntry) object() types.Object {
	return types.ObjectValueMust(fleetFileAttrTypes, map[string]attr.Value{"sandbox_id": e.SandboxID, "sha256": e.SHA256, "size": e.Size})
}

// fleetFilesValue is the `files` map; a nil entry is a member planned to
// upload whose sandbox is not known yet.
func fleetFilesValue(entries map[string]*fleetFileEntry) types.Map {
	elems := make(map[string]attr.Value, len(entries))
	for k, e := range entries {
		if e == nil {
			elems[k] = types.ObjectUnknown(fleetFileAttrTypes)
			continue
		}
		elems[k] = e.object()
	}
	return types.MapValueMust(fleetFileType(), elems)
}

func fleetFilesOfMap(v types.Map, diags *diag.Diagnostics) map[string]fleetFileEntry {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	return memberkit.MembersOfMap(v, diags, func(_ string, a map[string]attr.Value) fleetFileEntry {
		return fleetFileEntry{SandboxID: tfkit.StringAttr(a, "sandbox_id"), SHA256: tfkit.StringAttr(a, "sha256"), Size: tfkit.Int64Attr(a, "size")}
	})
}
