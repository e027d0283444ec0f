package files

// prime_sandbox_file: one file or one directory put into a sandbox through
// the gateway's upload route, as the verifiers framework puts a task in
// (never inlined into a command line, which a task archive would overflow).

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

var (
	_ resource.ResourceWithConfigure      = (*sandboxFileResource)(nil)
	_ resource.ResourceWithValidateConfig = (*sandboxFileResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*sandboxFileResource)(nil)
)

// NewFileResource is the prime_sandbox_file constructor.
func NewFileResource() resource.Resource { return &sandboxFileResource{} }

type sandboxFileResource struct {
	client *prime.Client
}

func (r *sandboxFileResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_sandbox_file"
}

func (r *sandboxFileResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = tfkit.ClientFrom(req.ProviderData, &resp.Diagnostics)
}

func (r *sandboxFileResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := fileSourceAttributes()
	attrs["id"] = schema.StringAttribute{
		Computed: true,
		MarkdownDescription: "`<sandbox_id>:<path>@<fingerprint>`: the first 16 hex digits of `sha256` (with " +
			"`content_wo`, `wo` and `content_wo_version`). Known at plan time, it changes exactly when the bytes " +
			"uploaded, the path or the sandbox change, so a command whose `triggers` name it (the agent) runs again " +
			"after a change of the task; a replacement by `triggers` alone keeps it.",
	}
	attrs["sandbox_id"] = schema.StringAttribute{
		Required: true, PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
		MarkdownDescription: "Sandbox to put the file into; it must be `RUNNING`. Uploads go through the gateway, not " +
			"the sandbox's network, so they work under an enforced egress lock too." + reupload,
	}
	attrs["path"] = schema.StringAttribute{
		Required: true, PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
		MarkdownDescription: "Absolute path in the sandbox: the file to write, or with `source_dir` the directory to " +
			"unpack into. Missing parent directories are created. The bytes are uploaded beside it under a temporary " +
			"name and moved into place, so the path never holds a partial file." + reupload,
		Validators: []validator.String{remotePathValidator{}},
	}
	attrs["content_wo"] = schema.StringAttribute{
		Optional: true, WriteOnly: true,
		MarkdownDescription: "Text to write, write-only: sent to the sandbox, never stored in state or plan and never " +
			"logged (Terraform 1.11+). Terraform cannot see a change of a write-only value: bump `content_wo_version` " +
			"to upload new content. With it, `sha256` and `size` stay null, so nothing about the secret reaches state.",
	}
	attrs["content_wo_version"] = schema.Int64Attribute{
		Optional: true, PlanModifiers: []planmodifier.Int64{int64planmodifier.RequiresReplace()},
		MarkdownDescription: "Any number you change whenever `content_wo` changes, so that it is uploaded again." + reupload,
	}
	attrs["mode"] = schema.StringAttribute{
		Optional: true,
		MarkdownDescription: "Permission bits as an octal string, such as `\"0644\"` or `\"0755\"`, applied after the " +
			"upload (with `source_dir`, to the directory `path` itself; the files keep their archived modes). Unset, the " +
			"gateway's default for a file. Changing it updates in place (`chmod`); nothing is uploaded again.",
		Validators: []validator.String{modeValidator{}},
	}
	attrs["triggers"] = schema.MapAttribute{
		Optional: true, ElementType: types.StringType,
		PlanModifiers: []planmodifier.Map{mapplanmodifier.RequiresReplace()},
		MarkdownDescription: "Arbitrary values; changing any of them uploads again — for example after a command that " +
			"may have changed the file in the sandbox (the provider does not read files back on refresh)." + reupload,
	}
	attrs["sha256"] = schema.StringAttribute{
		Computed: true,
		MarkdownDescription: "SHA-256 of what is uploaded (hex): the bytes of a file, or of the tar archive of " +
			"`source_dir`. Known at plan time; a different value replaces the resource. Null with `content_wo`.",
	}
	attrs["size"] = schema.Int64Attribute{
		Computed:            true,
		MarkdownDescription: "Bytes uploaded (the archive's size with `source_dir`). Null with `content_wo`.",
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Puts one file or one directory into a sandbox at an absolute path, through the gateway's " +
			"upload route — the way to bring a task in (a task archive inlined into a command line would overflow the " +
			"command-length limit). Exactly one source: `content`, `content_base64`, `content_wo` (write-only), " +
			"`source` (a local file) or `source_dir` (a local directory, sent as one tar archive and unpacked in the " +
			"sandbox).\n\n" +
			"Local sources are fingerprinted at plan time (`sha256`): a file or directory whose bytes changed on disk " +
			"is a planned replacement, an unchanged one plans nothing. Uploads are retried as the Prime SDK retries " +
			"them (transient gateway errors, a refused token), never when the gateway says the sandbox is gone. The " +
			"gateway is not egress: uploads work under an enforced `prime_egress_policy`.\n\n" +
			"Refresh does not read the file back (that would cost a gateway call per file and plan): a file removed " +
			"with its sandbox leaves state, one changed inside the sandbox is not noticed — use `triggers`. Destroy " +
			"removes the file (or the directory) unless the sandbox is gone.",
		Attributes: attrs,
	}
}

// Description endings of the upload resources.
const (
	reupload      = " A change uploads again (the resource is replaced)."
	byFingerprint = " Changing it replaces the resource only when the bytes change (see `sha256`): the same bytes from another source update in place."
)

// fileSourceAttributes are the source arguments prime_sandbox_file and
// prime_fleet_file share, with the same meaning.
func fileSourceAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"content": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "Text to write, as UTF-8. Stored in state and shown in plans: for secrets use " +
				"`content_wo`. One of `content`, `content_base64`, `content_wo`, `source`, `source_dir`." + byFingerprint,
		},
		"content_base64": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "Bytes to write, base64-encoded (standard alphabet, padded), for binary content " +
				"such as `filebase64(\"task.tar.gz\")`. Stored in state." + byFingerprint,
		},
		"source": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "Local file to upload, relative to the directory Terraform runs in (use `path.module`). " +
				"It must exist at plan time: the plan reads it to fingerprint it (`sha256`), so a file whose bytes changed " +
				"on disk shows as a replacement in the plan, and an apply whose file changed after the plan fails " +
				"instead of uploading unplanned bytes. Streamed from disk: a large file never sits in memory." + byFingerprint,
		},
		"source_dir": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "Local directory to upload: it is sent as one tar archive (regular files, directories " +
				"and symbolic links, permission bits kept, times and owners dropped so the archive is the same for the " +
				"same tree) and unpacked in the sandbox into `path`, which is created. Fingerprinted at plan time like " +
				"`source` (the archive's `sha256`), so any change in the tree shows as a replacement. Unpacking merges " +
				"into what `path` already holds." + byFingerprint,
		},
	}
}

func (r *sandboxFileResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m sandboxFileModel
	resp.Diagnostics.Append(tfkit.GetConfig(ctx, req.Config, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !m.ContentWOVersion.IsNull() && m.ContentWO.IsNull() && !m.ContentWO.IsUnknown() {
		resp.Diagnostics.AddAttributeWarning(path.Root("content_wo_version"), "content_wo_version without content_wo",
			"content_wo_version only matters together with content_wo.")
	}
	if sourceArgsUnknown(m.Content, m.ContentBase64, m.ContentWO, m.Source, m.SourceDir) {
		return
	}
	src, err := sourceOf(sourceArgsOf(m))
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("content"), "Invalid file source", err.Error())
		return
	}
	if src.kind == sourceBase64 {
		if err := src.check(); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root(src.attribute()), "Invalid file source", err.Error())
		}
	}
}

// ModifyPlan fingerprints the source (reading local files and directories),
// so the plan holds the bytes' sha256 and a change of them is a planned
// replacement. A local source that is missing fails the plan here.
func (r *sandboxFileResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan, config sandboxFileModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	resp.Diagnostics.Append(tfkit.GetConfig(ctx, req.Config, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.SHA256, plan.Size = plannedFingerprint(config, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.ID = sandboxFileID(plan)
	if !req.State.Raw.IsNull() {
		var state sandboxFileModel
		resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
		if plan.SHA256.IsUnknown() || !plan.SHA256.Equal(state.SHA256) {
			resp.RequiresReplace = append(resp.RequiresReplace, path.Root("sha256"))
		}
	}
	resp.Diagnostics.Append(tfkit.SetPlan(ctx, &resp.Plan, &plan)...)
}

func (r *sandboxFileResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var plan, config sandboxFileModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	resp.Diagnostics.Append(tfkit.GetConfig(ctx, req.Config, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	src, err := sourceOf(sourceArgsOf(config))
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("content"), "Invalid file source", err.Error())
		return
	}
	opened, err := src.open(plan.SHA256.ValueString())
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root(src.attribute()), "Cannot read the file source", err.Error())
		return
	}
	defer opened.Close()
	id, remote := plan.SandboxID.ValueString(), plan.Path.ValueString()
	tflog.Info(ctx, "uploading", map[string]any{"sandbox_id": id, "path": remote, "bytes": opened.Print.Size, "directory": src.isDir()})
	if _, err := r.client.PutFile(ctx, id, prime.PutFileRequest{
		Path: remote, Source: opened.Upload, Mode: modeOf(plan.Mode), Extract: src.isDir(),
	}); err != nil {
		resp.Diagnostics.AddError("Upload failed", fmt.Sprintf("sandbox %s, %s: %v", id, remote, err))
		return
	}
	plan.ContentWO = types.StringNull()
	if src.kind != sourceContentWO {
		plan.SHA256, plan.Size = types.StringValue(opened.Print.SHA256), types.Int64Value(opened.Print.Size)
	}
	plan.ID = sandboxFileID(plan)
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &plan)...)
}

// Read leaves state alone unless the sandbox is gone, which takes the file
// with it: the file is not read back (see the resource's description). A
// sandbox retired after its checkpoint (a template) keeps its file as
// history.
func (r *sandboxFileResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if r.client == nil {
		resp.State.Raw = req.State.Raw
		return
	}
	var state sandboxFileModel
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	gone, err := r.client.SandboxGone(ctx, state.SandboxID.ValueString())
	switch {
	case err == nil && gone && r.client.Retired(state.SandboxID.ValueString()):
		resp.State.Raw = req.State.Raw
	case err != nil:
		resp.Diagnostics.AddError("Cannot read the file's sandbox", err.Error())
	case gone:
		resp.Diagnostics.AddWarning("File's sandbox is gone",
			fmt.Sprintf("Sandbox %s no longer runs, and %s went with it; it is removed from state.",
				state.SandboxID.ValueString(), state.Path.ValueString()))
		resp.State.RemoveResource(ctx)
	default:
		resp.State.Raw = req.State.Raw
	}
}

// Update changes the mode; everything else replaces the resource.
func (r *sandboxFileResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state sandboxFileModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if mode := modeOf(plan.Mode); mode != nil && !plan.Mode.Equal(state.Mode) {
		if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
			return
		}
		if err := r.client.ChangeMode(ctx, plan.SandboxID.ValueString(), plan.Path.ValueString(), *mode); err != nil {
			resp.Diagnostics.AddError("Cannot change the mode", err.Error())
			return
		}
	}
	plan.ContentWO = types.StringNull()
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &plan)...)
}

// Delete removes the file (or directory) unless its sandbox is gone.
func (r *sandboxFileResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var state sandboxFileModel
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := removeUpload(ctx, r.client, state.SandboxID.ValueString(), state.Path.ValueString(), !state.SourceDir.IsNull()); err != nil {
		resp.Diagnostics.AddError("Cannot remove the file", err.Error())
	}
}

// sourceArgsOf reads the source arguments of a model (content_wo from the
// configuration, where alone it exists).
func sourceArgsOf(m sandboxFileModel) sourceArgs {
	return sourceArgs{Content: m.Content.ValueStringPointer(), ContentBase64: m.ContentBase64.ValueStringPointer(),
		ContentWO: m.ContentWO.ValueStringPointer(), Source: m.Source.ValueStringPointer(), SourceDir: m.SourceDir.ValueStringPointer()}
}

// sourceArgsUnknown reports whether any source argument is unknown.
func sourceArgsUnknown(vals ...types.String) bool {
	for _, v := range vals {
		if v.IsUnknown() {
			return true
		}
	}
	return false
}

// sandboxFileID is the ID of what m uploads (see the id attribute):
// unknown while the sandbox, the path or the bytes are.
func sandboxFileID(m sandboxFileModel) types.String {
	if m.SandboxID.IsUnknown() || m.Path.IsUnknown() || m.SHA256.IsUnknown() || m.ContentWOVersion.IsUnknown() {
		return types.StringUnknown()
	}
	mark := "wo"
	switch {
	case !m.SHA256.IsNull():
		mark = m.SHA256.ValueString()[:16]
	case !m.ContentWOVersion.IsNull():
		mark = fmt.Sprintf("wo%d", m.ContentWOVersion.ValueInt64())
	}
	return types.StringValue(m.SandboxID.ValueString() + ":" + m.Path.ValueString() + "@" + mark)
}

// plannedFingerprint is the sha256 and size a configuration uploads:
// unknown while a source is unknown, null for content_wo (nothing of a
// secret goes to state).
func plannedFingerprint(config sandboxFileModel, diags *diag.Diagnostics) (types.String, types.Int64) {
	if sourceArgsUnknown(config.Content, config.ContentBase64, config.ContentWO, config.Source, config.SourceDir) {
		return types.StringUnknown(), types.Int64Unknown()
	}
	src, err := sourceOf(sourceArgsOf(config))
	if err != nil {
		diags.AddAttributeError(path.Root("content"), "Invalid file source", err.Error())
		return types.StringUnknown(), types.Int64Unknown()
	}
	if src.kind == sourceContentWO {
		return types.StringNull(), types.Int64Null()
	}
	fp, err := src.fingerprint()
	if err != nil {
		diags.AddAttributeError(path.Root(src.attribute()), "Invalid file source", err.Error())
		return types.StringUnknown(), types.Int64Unknown()
	}
	return types.StringValue(fp.SHA256), types.Int64Value(fp.Size)
}

// modeOf is the parsed mode argument, nil when unset.
func modeOf(v types.String) *uint32 {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	m, err := parseMode(v.ValueString())
	if err != nil {
		return nil // refused at validation
	}
	return &m
}

// removeUpload removes an uploaded file or directory; a sandbox that is
// gone took it along, which is success.
func removeUpload(ctx context.Context, c *prime.Client, sandboxID, remote string, dir bool) error {
	if gone, err := c.SandboxGone(ctx, sandboxID); err == nil && gone {
		return nil
	}
	err := c.RemovePath(ctx, sandboxID, remote, dir)
	if err == nil || prime.GoneWithSandbox(err) {
		return nil
	}
	return fmt.Errorf("sandbox %s, %s: %w", sandboxID, remote, err)
}

type sandboxFileModel struct {
	ID               types.String `tfsdk:"id"`
	SandboxID        types.String `tfsdk:"sandbox_id"`
	Path             types.String `tfsdk:"path"`
	Content          types.String `tfsdk:"content"`
	ContentBase64    types.String `tfsdk:"content_base64"`
	ContentWO        types.String `tfsdk:"content_wo"`
	ContentWOVersion types.Int64  `tfsdk:"content_wo_version"`
	Source           types.String `tfsdk:"source"`
	SourceDir        types.String `tfsdk:"source_dir"`
	Mode             types.String `tfsdk:"mode"`
	Triggers         types.Map    `tfsdk:"triggers"`
	SHA256           types.String `tfsdk:"sha256"`
	Size             types.Int64  `tfsdk:"size"`
}
