package image

// The prime_image data source: an image's artifacts and whether it can
// boot a VM sandbox, read at plan time so a precondition stops a fleet
// before any create.

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/datasourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

var (
	_ datasource.DataSourceWithConfigure        = (*imageDataSource)(nil)
	_ datasource.DataSourceWithConfigValidators = (*imageDataSource)(nil)
	_ datasource.DataSourceWithValidateConfig   = (*imageDataSource)(nil)
)

// NewDataSource is the prime_image data source constructor.
func NewDataSource() datasource.DataSource { return &imageDataSource{} }

type imageDataSource struct{ client *prime.Client }

func (d *imageDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_image"
}

func (d *imageDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.client = tfkit.ClientFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *imageDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads one of your (or your team's) Prime images from the image list: each artifact " +
			"and its status, and whether the image can boot a VM sandbox (`vm_ready`).\n\n" +
			"A VM sandbox boots an image's VM artifact. An image pushed before VM images existed has none, and every " +
			"create from it fails with \"VM image not found\" — for a fleet, after N creates were attempted. Read the " +
			"image here and guard the sandbox or fleet with a `lifecycle` `precondition` on `vm_ready`: the plan then " +
			"fails, naming the image, before anything is created. `prime_image_vm_build` adds the VM artifact.\n\n" +
			"Only images in your image list are found (images you pushed, or your team's); a public registry image " +
			"that is not in it reads `found = false`.",
		Attributes: map[string]schema.Attribute{
			"reference": schema.StringAttribute{Optional: true,
				MarkdownDescription: "The image as a sandbox names it: `[owner/]name[:tag]` (tag `latest` when " +
					"omitted), e.g. `prime_sandbox.docker_image`. The owner is not used to match [I]: the list is " +
					"already yours or your team's. Exactly one of `reference` and `name` is required."},
			"name": schema.StringAttribute{Optional: true, Computed: true,
				MarkdownDescription: "The image's name, without owner or tag (instead of `reference`). Set from " +
					"`reference` when that is given."},
			"tag": schema.StringAttribute{Optional: true, Computed: true,
				MarkdownDescription: "The image's tag, with `name`. Default `latest`. Set from `reference` when that is given."},
			"team_id": schema.StringAttribute{Optional: true,
				MarkdownDescription: "Read the team's image list instead. Default: the provider's `team_id`, or your personal images."},
			"found": schema.BoolAttribute{Computed: true,
				MarkdownDescription: "Whether the image list has the image at all."},
			"vm_ready": schema.BoolAttribute{Computed: true,
				MarkdownDescription: "Whether the image has a VM artifact that is ready (`COMPLETED`): a VM sandbox can " +
					"boot it. The condition to put in a `precondition`."},
			"vm_status": schema.StringAttribute{Computed: true,
				MarkdownDescription: "The VM artifact's status (`PENDING`, `UPLOADING`, `BUILDING`, `COMPLETED`, " +
					"`FAILED`, `CANCELLED`); null when the image has no VM artifact (a `vm-build` adds one)."},
			"vm_error": schema.StringAttribute{Computed: true,
				MarkdownDescription: "The VM artifact's error message, when its build failed."},
			"artifacts": schema.ListNestedAttribute{Computed: true,
				MarkdownDescription: "Every row the image list has for the image: one per artifact (and per active build).",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"artifact_type":   schema.StringAttribute{Computed: true, MarkdownDescription: "`VM_SANDBOX` for the VM artifact; other values for other artifacts."},
					"status":          schema.StringAttribute{Computed: true, MarkdownDescription: "The artifact's (or build's) status."},
					"error_message":   schema.StringAttribute{Computed: true, MarkdownDescription: "Why its build failed, if it did."},
					"size_bytes":      schema.Int64Attribute{Computed: true, MarkdownDescription: "Its size, when reported."},
					"full_image_path": schema.StringAttribute{Computed: true, MarkdownDescription: "Its full path in the registry, when reported."},
				}},
			},
		},
	}
}

func (d *imageDataSource) ConfigValidators(context.Context) []datasource.ConfigValidator {
	return []datasource.ConfigValidator{
		datasourcevalidator.ExactlyOneOf(path.MatchRoot("reference"), path.MatchRoot("name")),
		datasourcevalidator.Conflicting(path.MatchRoot("reference"), path.MatchRoot("tag")),
	}
}

// ValidateConfig refuses a reference or name that names no image, at plan
// time.
func (d *imageDataSource) ValidateConfig(ctx context.Context, req datasource.ValidateConfigRequest, resp *datasource.ValidateConfigResponse) {
	var m dataModel
	resp.Diagnostics.Append(tfkit.GetConfig(ctx, req.Config, &m)...)
	if resp.Diagnostics.HasError() || m.Reference.IsUnknown() || m.Name.IsUnknown() || m.Tag.IsUnknown() ||
		(m.Reference.IsNull() && m.Name.IsNull()) {
		return
	}
	if _, err := imageName(m.Reference, m.Name, m.Tag); err != nil {
		attr := "name"
		if !m.Reference.IsNull() {
			attr = "reference"
		}
		resp.Diagnostics.AddAttributeError(path.Root(attr), "Invalid image", attr+": "+stripSentinel(err))
	}
}

func (d *imageDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	if !tfkit.RequireClient(d.client, &resp.Diagnostics) {
		return
	}
	var m dataModel
	resp.Diagnostics.Append(tfkit.GetConfig(ctx, req.Config, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ref, err := imageName(m.Reference, m.Name, m.Tag)
	if err != nil {
		resp.Diagnostics.AddError("Invalid image", stripSentinel(err))
		return
	}
	items, err := listFor(ctx, d.client, m.TeamID)
	if err != nil {
		resp.Diagnostics.AddError("Cannot list images", err.Error())
		return
	}
	rows := prime.Artifacts(items, ref.Name, ref.Tag)
	r := readinessOf(items, ref.Name, ref.Tag)
	m.Name, m.Tag = types.StringValue(ref.Name), types.StringValue(ref.Tag)
	m.Found, m.VMReady = types.BoolValue(r.Found), types.BoolValue(r.Ready)
	m.VMStatus, m.VMError = optString(r.Status), optString(r.Error)
	artifacts, diags := artifactsValue(rows)
	resp.Diagnostics.Append(diags...)
	m.Artifacts = artifacts
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &m)...)
}

func optString(s string) types.String {
	if s == "" {
		return types.StringNull()
	}
	return types.StringValue(s)
}

// stripSentinel is err's message without the "invalid request: " prefix of
// client-side checks.
func stripSentinel(err error) string {
	msg, prefix := err.Error(), prime.ErrInvalidRequest.Error()+": "
	if len(msg) > len(prefix) && msg[:len(prefix)] == prefix {
		return msg[len(prefix):]
	}
	return msg
}

type dataModel struct {
	Reference types.String `tfsdk:"reference"`
	Name      types.String `tfsdk:"name"`
	Tag       types.String `tfsdk:"tag"`
	TeamID    types.String `tfsdk:"team_id"`
	Found     types.Bool   `tfsdk:"found"`
	VMReady   types.Bool   `tfsdk:"vm_ready"`
	VMStatus  types.String `tfsdk:"vm_status"`
	VMError   types.String `tfsdk:"vm_error"`
	Artifacts types.List   `tfsdk:"artifacts"`
}
