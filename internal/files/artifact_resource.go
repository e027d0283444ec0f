package files

// prime_sandbox_artifact: a result file or directory downloaded to local
// disk. It is a resource of its own, not a block on the command resources,
// because a download is idempotent and retryable while a command is
// neither: a failed download must fail (and be retried) alone, never make
// the agent run again. See the guide's "Getting results out".

import (
	"context"
	"fmt"
	"os"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

var _ resource.ResourceWithConfigure = (*sandboxArtifactResource)(nil)

// NewArtifactResource is the prime_sandbox_artifact constructor.
func NewArtifactResource() resource.Resource { return &sandboxArtifactResource{} }

type sandboxArtifactResource struct {
	client *prime.Client
}

func (r *sandboxArtifactResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_sandbox_artifact"
}

func (r *sandboxArtifactResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = tfkit.ClientFrom(req.ProviderData, &resp.Diagnostics)
}

func (r *sandboxArtifactResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := artifactArgumentAttributes()
	for k, v := range artifactResultAttributes() {
		attrs[k] = v
	}
	for _, k := range []string{"exists", "files", "refused"} {
		switch a := attrs[k].(type) {
		case schema.BoolAttribute:
			a.PlanModifiers = []planmodifier.Bool{boolplanmodifier.UseStateForUnknown()}
			attrs[k] = a
		case schema.ListNestedAttribute:
			a.PlanModifiers = []planmodifier.List{listplanmodifier.UseStateForUnknown()}
			attrs[k] = a
		}
	}
	attrs["id"] = schema.StringAttribute{
		Computed: true, MarkdownDescription: "`<sandbox_id>:<remote_path>`.",
		PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
	}
	attrs["sandbox_id"] = schema.StringAttribute{
		Required: true, PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
		MarkdownDescription: "Sandbox to download from; it must be `RUNNING`. Downloads go through the gateway, so they " +
			"work under an enforced egress lock." + redownload,
	}
	attrs["run_id"] = schema.StringAttribute{
		Optional: true, PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
		MarkdownDescription: "The run whose result to download: the `run_id` of the `prime_sandbox_command` that writes it " +
			"(a new one every time it runs, so the result is downloaded again exactly when it ran again). The result is " +
			"checked in the sandbox against the stamp that run left as it started (a run with `result_paths` leaves " +
			"one): a result older than the run's start, or a run that never started there, is not downloaded and reads " +
			"as missing (an error without `allow_missing`), with a warning — never as the run's result." + redownload,
		Validators: []validator.String{runIDValidator{}},
	}
	attrs["local_path"] = schema.StringAttribute{
		Required: true, PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
		MarkdownDescription: "Where to write, relative to the directory Terraform runs in: the file, or the directory a " +
			"`directory` or `archive` is unpacked into (replacing an earlier download there as a whole). Parents are " +
			"created. A download is written under a temporary name beside it and renamed when complete, so a partial " +
			"file never sits under this name." + redownload,
		Validators: []validator.String{stringvalidator.LengthAtLeast(1)},
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Downloads a result — a file, a directory, or an archive the agent wrote — from a sandbox to " +
			"local disk, for transcripts, logs and patches of any size. The bytes go to disk, never through state: state " +
			"records each file's `sha256` and `size`. Name the producing command in `triggers` so the result is " +
			"downloaded again whenever the command runs again.\n\n" +
			"The sandbox is untrusted (the agent wrote the result): archives never write outside `local_path`, links " +
			"and device files are refused, and `max_size` caps what one download writes. A refresh checks that the " +
			"files are still on disk with their sizes; missing ones are downloaded again by the next apply. Destroy " +
			"keeps the files unless `keep_on_destroy = false`.\n\n" +
			"It is a resource of its own rather than a block of the command resources because a download can be " +
			"retried while a command must never run twice: a failed download fails, and is retried, alone." +
			ResultPathsAdvice,
		Attributes: attrs,
	}
}

const redownload = " A change downloads again (the resource is replaced)."

// artifactArgumentAttributes are the arguments both artifact resources
// share.
func artifactArgumentAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"remote_path": schema.StringAttribute{
			Required: true, PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			MarkdownDescription: "Absolute path in the sandbox of the result: a file, a directory, or a tar archive (see `kind`)." + redownload,
			Validators:          []validator.String{remotePathValidator{}},
		},
		"kind": schema.StringAttribute{
			Optional: true, Computed: true, Default: stringdefault.StaticString(ArtifactFile),
			PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			MarkdownDescription: "What `remote_path` is: `file` (default; written to `local_path`), `directory` (archived " +
				"in the sandbox with `tar`, then unpacked into the directory `local_path`) or `archive` (a tar archive the " +
				"agent wrote, unpacked into `local_path`). Unpacking treats the archive as hostile: entries that would " +
				"land outside `local_path` (`..`, absolute names), links (symbolic and hard: never created, never " +
				"followed) and device files are refused and listed in `refused`; the rest is unpacked." + redownload,
			Validators: []validator.String{stringvalidator.OneOf(artifactKinds...)},
		},
		"max_size": schema.Int64Attribute{
			Optional: true, Computed: true, Default: int64default.StaticInt64(DefaultArtifactMaxSize),
			MarkdownDescription: fmt.Sprintf("Cap on the bytes one download may write (all files of a directory or "+
				"archive together). Default `%d` (1 GiB). A result over it fails the download and nothing of it is kept, "+
				"so an agent cannot fill the operator's disk. Changing it updates in place.", DefaultArtifactMaxSize),
			Validators: []validator.Int64{int64validator.AtLeast(1)},
		},
		"allow_missing": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			MarkdownDescription: "Accept a missing remote path: `exists` is then `false` and nothing is written. Default " +
				"`false`: a result the agent did not produce is an error naming the sandbox and the path. Changing it " +
				"updates in place.",
		},
		"keep_on_destroy": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(true),
			MarkdownDescription: "Leave the downloaded files on disk when the resource is destroyed. Default `true`: " +
				"results outlive the evaluation that produced them (`terraform destroy` of the fleet keeps them). Set " +
				"`false` to remove them on destroy. Changing it updates in place.",
		},
		"triggers": schema.MapAttribute{
			Optional: true, ElementType: types.StringType,
			PlanModifiers: []planmodifier.Map{mapplanmodifier.RequiresReplace()},
			MarkdownDescription: "Arbitrary values; changing any of them downloads again. Name the command that " +
				"produces the result, e.g. `{ run = prime_sandbox_command.agent.id }`: a command's `id` is new every " +
				"time it runs, so the result is downloaded again exactly when the command ran again." + redownload,
		},
	}
}

// artifactResultAttributes are one download's computed attributes.
func artifactResultAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"exists": schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the remote path existed (always `true` without `allow_missing`)."},
		"files": schema.ListNestedAttribute{
			Computed: true, MarkdownDescription: "Every file written, sorted by path: its local `path`, `size` and `sha256`. " +
				"The bytes never pass through state.",
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"path":   schema.StringAttribute{Computed: true, MarkdownDescription: "Local path of the file."},
				"size":   schema.Int64Attribute{Computed: true, MarkdownDescription: "Size in bytes."},
				"sha256": schema.StringAttribute{Computed: true, MarkdownDescription: "SHA-256 of the bytes (hex)."},
			}},
		},
		"refused": schema.ListNestedAttribute{
			Computed: true, MarkdownDescription: "Archive entries that were not unpacked, with the reason (an entry " +
				"outside the destination, a link, a device file, …). Empty for a single file.",
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"name":   schema.StringAttribute{Computed: true, MarkdownDescription: "Entry name, as the archive gave it."},
				"reason": schema.StringAttribute{Computed: true, MarkdownDescription: "Why it was refused."},
			}},
		},
	}
}

func (r *sandboxArtifactResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var plan sandboxArtifactModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	areq := ArtifactRequest{
		SandboxID: plan.SandboxID.ValueString(), Remote: plan.RemotePath.ValueString(), Local: plan.LocalPath.ValueString(),
		Kind: plan.Kind.ValueString(), MaxBytes: plan.MaxSize.ValueInt64(), AllowMissing: plan.AllowMissing.ValueBool(),
		RunID: plan.RunID.ValueString(),
	}
	tflog.Info(ctx, "downloading", map[string]any{"sandbox_id": areq.SandboxID, "path": areq.Remote, "kind": areq.Kind, "to": areq.Local})
	res, err := DownloadArtifact(ctx, r.client, areq)
	if err != nil {
		resp.Diagnostics.AddError("Download failed", err.Error())
		return
	}
	if res.Stale {
		addStaleWarning(&resp.Diagnostics, path.Root("run_id"), []string{res.StaleWhy})
	}
	if !res.Exists {
		warnEarlierDownload(&resp.Diagnostics, areq.Local)
	}
	if len(res.Refused) > 0 {
		resp.Diagnostics.AddWarning("Archive entries refused",
			fmt.Sprintf("%s from sandbox %s held entries that were not unpacked into %s:%s", areq.Remote, areq.SandboxID, areq.Local, refusedSummary(res.Refused)))
	}
	plan.ID = types.StringValue(areq.SandboxID + ":" + areq.Remote)
	plan.Exists = types.BoolValue(res.Exists)
	plan.Files, plan.Refused = ArtifactFilesValue(res.Files), artifactRefusedValue(res.Refused)
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &plan)...)
}

// warnEarlierDownload warns when nothing was downloaded and something is
// at local_path already: an earlier download (its resource kept it on
// destroy), which is not this run's result. It is left alone: this
// resource did not write it.
func warnEarlierDownload(diags *diag.Diagnostics, local string) {
	if _, err := os.Lstat(local); err != nil {
		return
	}
	diags.AddAttributeWarning(path.Root("local_path"), "An earlier download is still on disk",
		fmt.Sprintf("Nothing was downloaded (exists = false), but %s exists: an earlier download left it there (the "+
			"artifact that wrote it kept it on destroy). It is not this run's result; it was left as it is.", local))
}

// Read checks the local files (sizes, not hashes); a missing or changed
// one removes the resource from state, so the next apply downloads again.
func (r *sandboxArtifactResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state sandboxArtifactModel
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !localFilesIntact(artifactFilesOf(state.Files)) {
		resp.Diagnostics.AddWarning("Downloaded files changed on disk",
			fmt.Sprintf("A file downloaded to %s is missing or changed size; the next apply downloads it again.", state.LocalPath.ValueString()))
		resp.State.RemoveResource(ctx)
		return
	}
	resp.State.Raw = req.State.Raw
}

// Update records the arguments that change nothing on disk.
func (r *sandboxArtifactResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state sandboxArtifactModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.Exists, plan.Files, plan.Refused = state.Exists, state.Files, state.Refused
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &plan)...)
}

// Delete keeps the files unless keep_on_destroy is false.
func (r *sandboxArtifactResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state sandboxArtifactModel
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	if resp.Diagnostics.HasError() || state.KeepOnDestroy.ValueBool() || !state.Exists.ValueBool() {
		return
	}
	if err := removeLocalArtifact(state.Kind.ValueString(), state.LocalPath.ValueString()); err != nil {
		resp.Diagnostics.AddError("Cannot remove the downloaded files", err.Error())
	}
}

type sandboxArtifactModel struct {
	ID            types.String `tfsdk:"id"`
	SandboxID     types.String `tfsdk:"sandbox_id"`
	RemotePath    types.String `tfsdk:"remote_path"`
	Kind          types.String `tfsdk:"kind"`
	LocalPath     types.String `tfsdk:"local_path"`
	MaxSize       types.Int64  `tfsdk:"max_size"`
	AllowMissing  types.Bool   `tfsdk:"allow_missing"`
	KeepOnDestroy types.Bool   `tfsdk:"keep_on_destroy"`
	Triggers      types.Map    `tfsdk:"triggers"`
	RunID         types.String `tfsdk:"run_id"`
	Exists        types.Bool   `tfsdk:"exists"`
	Files         types.List   `tfsdk:"files"`
	Refused       types.List   `tfsdk:"refused"`
}

var (
	artifactFileAttrTypes    = map[string]attr.Type{"path": types.StringType, "size": types.Int64Type, "sha256": types.StringType}
	artifactRefusedAttrTypes = map[string]attr.Type{"name": types.StringType, "reason": types.StringType}
)

func ArtifactFileType() types.ObjectType { return types.ObjectType{AttrTypes: artifactFileAttrTypes} }

func artifactRefusedType() types.ObjectType {
	return types.ObjectType{AttrTypes: artifactRefusedAttrTypes}
}

func ArtifactFilesValue(files []ArtifactFileRecord) types.List {
	elems := make([]attr.Value, len(files))
	for i, f := range files {
		elems[i] = types.ObjectValueMust(artifactFileAttrTypes, map[string]attr.Value{
			"path": types.StringValue(f.Path), "size": types.Int64Value(f.Size), "sha256": types.StringValue(f.SHA256)})
	}
	return types.ListValueMust(ArtifactFileType(), elems)
}

func artifactRefusedValue(refused []prime.RefusedEntry) types.List {
	elems := make([]attr.Value, len(refused))
	for i, r := range refused {
		elems[i] = types.ObjectValueMust(artifactRefusedAttrTypes, map[string]attr.Value{
			"name": types.StringValue(r.Name), "reason": types.StringValue(r.Reason)})
	}
	return types.ListValueMust(artifactRefusedType(), elems)
}

func artifactFilesOf(v types.List) []ArtifactFileRecord {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	out := make([]ArtifactFileRecord, 0, len(v.Elements()))
	for _, e := range v.Elements() {
		obj, ok := e.(types.Object)
		if !ok {
			continue
		}
		a := obj.Attributes()
		out = append(out, ArtifactFileRecord{Path: tfkit.StringAttr(a, "path").ValueString(), Size: tfkit.Int64Attr(a, "size").ValueInt64(),
			SHA256: tfkit.StringAttr(a, "sha256").ValueString()})
	}
	return out
}
