package sandbox

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

var (
	_ datasource.DataSourceWithConfigure = (*sandboxDataSource)(nil)
	_ datasource.DataSourceWithConfigure = (*sandboxesDataSource)(nil)
)

// sandboxDataAttributes is the computed schema of one sandbox, used by
// prime_sandbox and for each element of prime_sandboxes.
func sandboxDataAttributes() map[string]schema.Attribute {
	str := func(d string) schema.Attribute { return schema.StringAttribute{Computed: true, MarkdownDescription: d} }
	return map[string]schema.Attribute{
		"id":           str("Sandbox ID."),
		"name":         str("Display name."),
		"docker_image": str("Docker image."),
		"vm": schema.BoolAttribute{Computed: true, DeprecationMessage: vmDeprecation,
			MarkdownDescription: "Deprecated: always `true` (every sandbox is a VM since containers were retired)."},
		"start_argv":           schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "Start command in argv form, when one was given."},
		"arch":                 str("CPU architecture (`amd64` or `arm64`), when the platform reports it."),
		"cpu_cores":            schema.Int64Attribute{Computed: true, CustomType: wholeNumberType{}, MarkdownDescription: "Number of vCPUs."},
		"memory_gb":            schema.Float64Attribute{Computed: true, MarkdownDescription: "Memory in GB."},
		"disk_size_gb":         schema.Float64Attribute{Computed: true, MarkdownDescription: "Disk size in GB."},
		"gpu_count":            schema.Int64Attribute{Computed: true, MarkdownDescription: "Number of GPUs."},
		"gpu_type":             str("GPU model."),
		"timeout_minutes":      schema.Int64Attribute{Computed: true, MarkdownDescription: "Lifetime in minutes; `-1` is unlimited."},
		"idle_timeout_minutes": schema.Int64Attribute{Computed: true, MarkdownDescription: "Idle timeout in minutes."},
		"environment_vars":     schema.MapAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "Environment variables."},
		"labels":               schema.SetAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "Labels."},
		"team_id":              str("Owning team."),
		"region":               str("Region."),
		"status":               str("Lifecycle status: `PENDING`, `PROVISIONING`, `RUNNING`, `PAUSED`, `ERROR`, `TERMINATED` or `TIMEOUT`."),
		"created_at":           str("Creation time (RFC 3339)."),
		"started_at":           str("Time the sandbox started running (RFC 3339)."),
		"disk_mount_path":      str("Where the disk is mounted."),
		"user_id":              str("User that created the sandbox."),
	}
}

// sandboxObjectType is the object type of one prime_sandboxes element.
func sandboxObjectType() types.ObjectType {
	attrs := sandboxDataAttributes()
	attrTypes := make(map[string]attr.Type, len(attrs))
	for name, a := range attrs {
		attrTypes[name] = a.GetType()
	}
	return types.ObjectType{AttrTypes: attrTypes}
}

// NewDataSource is the prime_sandbox data source constructor.
func NewDataSource() datasource.DataSource { return &sandboxDataSource{} }

type sandboxDataSource struct{ client *prime.Client }

func (d *sandboxDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_sandbox"
}

func (d *sandboxDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.client = tfkit.ClientFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *sandboxDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	attrs := sandboxDataAttributes()
	attrs["id"] = schema.StringAttribute{Required: true, MarkdownDescription: "ID of the sandbox to read.",
		Validators: []validator.String{stringvalidator.LengthAtLeast(1)}}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads one sandbox by ID, in any status (a terminated sandbox is reported, not an error). " +
			"An unknown ID is an error.",
		Attributes: attrs,
	}
}

func (d *sandboxDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	if !tfkit.RequireClient(d.client, &resp.Diagnostics) {
		return
	}
	var m sandboxAttributes
	resp.Diagnostics.Append(tfkit.GetConfig(ctx, req.Config, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	sb, err := d.client.GetSandbox(ctx, m.ID.ValueString())
	switch {
	case errors.Is(err, prime.ErrNotFound):
		resp.Diagnostics.AddError("Sandbox not found", fmt.Sprintf("No sandbox has the ID %q.", m.ID.ValueString()))
		return
	case err != nil:
		resp.Diagnostics.AddError("Cannot read sandbox", err.Error())
		return
	}
	resp.Diagnostics.Append(applySandbox(ctx, &m, sb)...)
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &m)...)
}

// NewSandboxesDataSource is the prime_sandboxes data source constructor.
func NewSandboxesDataSource() datasource.DataSource { return &sandboxesDataSource{} }

type sandboxesDataSource struct{ client *prime.Client }

type sandboxesModel struct {
	Labels    types.Set    `tfsdk:"labels"`
	Status    types.String `tfsdk:"status"`
	IDs       types.List   `tfsdk:"ids"`
	Sandboxes types.List   `tfsdk:"sandboxes"`
}

func (d *sandboxesDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_sandboxes"
}

func (d *sandboxesDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.client = tfkit.ClientFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *sandboxesDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Lists the sandboxes of the provider's team (or account) that match the filters, paging " +
			"through all of them. Without `status`, no `is_active` filter is sent, as the Prime SDK sends none: the " +
			"platform's default decides whether terminated sandboxes are listed (prime-mock lists them). With " +
			"`status`, sandboxes in that status are listed, terminal ones included.",
		Attributes: map[string]schema.Attribute{
			"labels": schema.SetAttribute{
				Optional: true, ElementType: types.StringType,
				MarkdownDescription: "Only sandboxes that carry **all** of these labels.",
				Validators:          []validator.Set{setvalidator.ValueStringsAre(stringvalidator.LengthAtLeast(1))},
			},
			"status": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Only sandboxes in this status (`PENDING`, `PROVISIONING`, `RUNNING`, `PAUSED`, `ERROR`, `TERMINATED` or `TIMEOUT`).",
				Validators: []validator.String{stringvalidator.OneOf(prime.StatusPending, prime.StatusProvisioning,
					prime.StatusRunning, prime.StatusPaused, prime.StatusError, prime.StatusTerminated, prime.StatusTimeout)},
			},
			"ids": schema.ListAttribute{
				Computed: true, ElementType: types.StringType,
				MarkdownDescription: "IDs of the matching sandboxes, sorted.",
			},
			"sandboxes": schema.ListNestedAttribute{
				Computed:            true,
				MarkdownDescription: "The matching sandboxes, in the order of `ids`.",
				NestedObject:        schema.NestedAttributeObject{Attributes: sandboxDataAttributes()},
			},
		},
	}
}

func (d *sandboxesDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	if !tfkit.RequireClient(d.client, &resp.Diagnostics) {
		return
	}
	var m sandboxesModel
	resp.Diagnostics.Append(tfkit.GetConfig(ctx, req.Config, &m)...)
	labels, diags := tfkit.StringSet(ctx, m.Labels)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	opts := prime.ListSandboxesOptions{Labels: labels, Status: m.Status.ValueString()}
	if opts.Status != "" {
		// The CLI sends is_active=false with a status filter: "do not hide
		// terminal sandboxes", or TERMINATED could never match.
		inactive := false
		opts.IsActive = &inactive
	}
	list, err := d.client.ListSandboxes(ctx, opts)
	if err != nil {
		resp.Diagnostics.AddError("Cannot list sandboxes", err.Error())
		return
	}
	sort.Slice(list, func(i, j int) bool { return list[i].ID < list[j].ID })
	ids := make([]string, 0, len(list))
	items := make([]sandboxAttributes, 0, len(list))
	for i := range list {
		sb := &list[i]
		// Filter again client-side: the contract does not promise that the
		// server applies every filter.
		if opts.Status != "" && sb.Status != opts.Status || !prime.HasAllLabels(sb.Labels, labels) {
			continue
		}
		var item sandboxAttributes
		item.EnvironmentVars = types.MapNull(types.StringType)
		item.Labels = types.SetNull(types.StringType)
		resp.Diagnostics.Append(applySandbox(ctx, &item, sb)...)
		ids = append(ids, sb.ID)
		items = append(items, item)
	}
	idList, diags := types.ListValueFrom(ctx, types.StringType, ids)
	resp.Diagnostics.Append(diags...)
	sbList, diags := types.ListValueFrom(ctx, sandboxObjectType(), items)
	resp.Diagnostics.Append(diags...)
	m.IDs, m.Sandboxes = idList, sbList
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &m)...)
}
