package files

// The prime_fleet_file data source: the same small file of every member of
// a fleet, read concurrently (data_source_read.go).

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/memberkit"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

var _ datasource.DataSourceWithConfigure = (*fleetFileDataSource)(nil)

// NewFleetFileDataSource is the prime_fleet_file data source constructor.
func NewFleetFileDataSource() datasource.DataSource { return &fleetFileDataSource{} }

type fleetFileDataSource struct{ client *prime.Client }

func (d *fleetFileDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_fleet_file"
}

func (d *fleetFileDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.client = tfkit.ClientFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *fleetFileDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	attrs := readArgumentAttributes()
	entry := readResultAttributes(false)
	entry["sandbox_id"] = schema.StringAttribute{Computed: true, MarkdownDescription: "Sandbox the file was read from."}
	attrs["id"] = schema.StringAttribute{Computed: true, MarkdownDescription: "The path read."}
	attrs["sandbox_ids"] = memberkit.SandboxIDsDataSourceAttribute("Member key → sandbox ID, usually " +
		"`prime_sandbox_fleet.<name>.sandbox_ids` or, for what a command wrote, the members it succeeded on: " +
		"`{ for k, r in prime_fleet_command.agent.results : k => r.sandbox_id if !r.failed }` (which also orders " +
		"the read after it).")
	attrs["path"] = schema.StringAttribute{
		Required: true, MarkdownDescription: "Absolute path of the file, the same in every member.",
		Validators: []validator.String{remotePathValidator{}},
	}
	attrs["max_concurrency"] = schema.Int64Attribute{
		Optional: true, MarkdownDescription: fmt.Sprintf("How many members are read at once. Default `%d`.", memberkit.DefaultConcurrency),
		Validators: []validator.Int64{int64validator.AtLeast(1)},
	}
	attrs["files"] = schema.MapNestedAttribute{
		Computed: true,
		MarkdownDescription: "Member key → the member's file: `sandbox_id`, `exists`, `sha256`, `size`, `content` and " +
			"`content_base64` (both null with `sensitive`; see `sensitive_files`).",
		NestedObject: schema.NestedAttributeObject{Attributes: entry},
	}
	attrs["sensitive_files"] = schema.MapAttribute{
		Computed: true, Sensitive: true, ElementType: sensitiveContentType(),
		MarkdownDescription: "With `sensitive`: member key → `content` and `content_base64`, hidden in plans and CLI output. Null otherwise.",
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads the same small file from every member of a fleet — each rollout's reward, say — as " +
			"the `prime_sandbox_file` data source reads one (same limits, same errors): one gateway call per member, " +
			"concurrently. Every member that fails is named in one error." + ResultPathsAdvice,
		Attributes: attrs,
	}
}

func (d *fleetFileDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	if !tfkit.RequireClient(d.client, &resp.Diagnostics) {
		return
	}
	var m fleetFileDataModel
	resp.Diagnostics.Append(tfkit.GetConfig(ctx, req.Config, &m)...)
	ids := tfkit.StringMapOf(ctx, m.SandboxIDs, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	remote, maxSize, sensitive := m.Path.ValueString(), maxSizeOf(m.MaxSize), m.Sensitive.ValueBool()
	limit := memberkit.DefaultConcurrency
	if !m.MaxConcurrency.IsNull() {
		limit = int(m.MaxConcurrency.ValueInt64())
	}
	var mu sync.Mutex
	files := make(map[string]attr.Value, len(ids))
	secret := make(map[string]attr.Value, len(ids))
	var notText, gone []string
	var problems memberkit.Problems
	memberkit.ForEachMember(ctx, tfkit.SortedKeys(ids), limit, func(ctx context.Context, key string) {
		f, err := readSmallFile(ctx, d.client, ids[key], remote, maxSize, m.AllowMissing.ValueBool())
		if err != nil {
			problems.Add(key, "%v", err)
			return
		}
		v := fileReadValuesOf(f, sensitive)
		obj := types.ObjectValueMust(fleetReadAttrTypes, map[string]attr.Value{
			"sandbox_id": types.StringValue(ids[key]), "exists": v.Exists, "sha256": v.SHA256, "size": v.Size,
			"content": v.Content, "content_base64": v.ContentBase64,
		})
		mu.Lock()
		defer mu.Unlock()
		files[key] = obj
		if sensitive {
			secret[key] = v.Sensitive
		}
		if v.NotText {
			notText = append(notText, key)
		}
		if f.SandboxGone {
			gone = append(gone, fmt.Sprintf("%q (%s)", key, ids[key]))
		}
	})
	if problems.Len() > 0 {
		resp.Diagnostics.AddError("Cannot read the fleet's files",
			fmt.Sprintf("Reading %s failed on %d of %d members:\n\n%s", remote, problems.Len(), len(ids), problems.String()))
		return
	}
	if len(gone) > 0 {
		slices.Sort(gone)
		resp.Diagnostics.AddWarning("Fleet members' sandboxes are gone",
			fmt.Sprintf("These members' sandboxes no longer exist, so %s reads as missing there (exists = false): %s. "+
				"The fleet drops them at refresh, and its next apply creates them again.", remote, strings.Join(gone, ", ")))
	}
	if len(notText) > 0 {
		resp.Diagnostics.AddWarning("Files are not text", fmt.Sprintf("%s is not valid UTF-8 on members %s, so their content "+
			"is null; use content_base64.", remote, tfkit.QuoteKeys(tfkit.SortedKeys(tfkit.SetOf(notText)))))
	}
	m.ID = types.StringValue(remote)
	m.Files = types.MapValueMust(fleetReadType(), files)
	m.SensitiveFiles = types.MapNull(sensitiveContentType())
	if sensitive {
		m.SensitiveFiles = types.MapValueMust(sensitiveContentType(), secret)
	}
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &m)...)
}

type fleetFileDataModel struct {
	ID             types.String `tfsdk:"id"`
	SandboxIDs     types.Map    `tfsdk:"sandbox_ids"`
	Path           types.String `tfsdk:"path"`
	MaxSize        types.Int64  `tfsdk:"max_size"`
	Sensitive      types.Bool   `tfsdk:"sensitive"`
	AllowMissing   types.Bool   `tfsdk:"allow_missing"`
	MaxConcurrency types.Int64  `tfsdk:"max_concurrency"`
	Files          types.Map    `tfsdk:"files"`
	SensitiveFiles types.Map    `tfsdk:"sensitive_files"`
}

var fleetReadAttrTypes = map[string]attr.Type{
	"sandbox_id": types.StringType, "exists": types.BoolType, "sha256": types.StringType, "size": types.Int64Type,
	"content": types.StringType, "content_base64": types.StringType,
}

func fleetReadType() types.ObjectType { return types.ObjectType{AttrTypes: fleetReadAttrTypes} }
