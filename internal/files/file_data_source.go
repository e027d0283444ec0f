package files

// The prime_sandbox_file data source: one small file of one sandbox
// (data_source_read.go).

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

var _ datasource.DataSourceWithConfigure = (*sandboxFileDataSource)(nil)

// NewFileDataSource is the prime_sandbox_file data source constructor.
func NewFileDataSource() datasource.DataSource { return &sandboxFileDataSource{} }

type sandboxFileDataSource struct{ client *prime.Client }

func (d *sandboxFileDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_sandbox_file"
}

func (d *sandboxFileDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.client = tfkit.ClientFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *sandboxFileDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	attrs := readArgumentAttributes()
	for k, v := range readResultAttributes(true) {
		attrs[k] = v
	}
	attrs["id"] = schema.StringAttribute{Computed: true, MarkdownDescription: "`<sandbox_id>:<path>`."}
	attrs["sandbox_id"] = schema.StringAttribute{Required: true, MarkdownDescription: "Sandbox to read from."}
	attrs["path"] = schema.StringAttribute{
		Required: true, MarkdownDescription: "Absolute path of the file in the sandbox.",
		Validators: []validator.String{remotePathValidator{}},
	}
	attrs["run_id"] = schema.StringAttribute{
		Optional: true,
		MarkdownDescription: "The run whose result the file must be: the `run_id` of the `prime_sandbox_command` that " +
			"writes it (which also orders the read after that run). The file is checked in the sandbox against the " +
			"stamp that run left as it started (a run with `result_paths` leaves one): a file older than the run's " +
			"start, or a run that never started there, reads as missing with `stale = true` (an error without " +
			"`allow_missing`), never as the run's result. One command more per read. Unset, the file is read as it is.",
		Validators: []validator.String{runIDValidator{}},
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads a small file from a sandbox — a reward JSON, a verdict — so that `jsondecode(...)` can use " +
			"it in outputs and other resources. Read it after the command that writes it: reference the command (for " +
			"example `depends_on = [prime_sandbox_command.agent]`), so Terraform reads it once the command has run. " +
			"One gateway call (the download route, bytes exactly as written), which works under an egress lock.\n\n" +
			"Files over `max_size` (default 1 MiB) are refused with an error: large results and directories belong on " +
			"disk, through `prime_sandbox_artifact`. The sandbox is untrusted (its agent wrote the file): the content is " +
			"data, and `sensitive = true` keeps it out of plans and CLI output." + ResultPathsAdvice,
		Attributes: attrs,
	}
}

func (d *sandboxFileDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	if !tfkit.RequireClient(d.client, &resp.Diagnostics) {
		return
	}
	var m sandboxFileDataModel
	resp.Diagnostics.Append(tfkit.GetConfig(ctx, req.Config, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id, remote := m.SandboxID.ValueString(), m.Path.ValueString()
	f, err := readSmallFile(ctx, d.client, id, remote, maxSizeOf(m.MaxSize), m.AllowMissing.ValueBool(), m.RunID.ValueString())
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the file", err.Error())
		return
	}
	if f.Stale {
		addStaleWarning(&resp.Diagnostics, path.Root("run_id"), []string{f.StaleWhy})
	}
	if f.SandboxGone {
		resp.Diagnostics.AddWarning("Sandbox is gone",
			fmt.Sprintf("Sandbox %s no longer exists, so %s reads as missing (exists = false). Its resource drops it at "+
				"refresh, and the next apply creates it again.", id, remote))
	}
	v := fileReadValuesOf(f, m.Sensitive.ValueBool())
	if v.NotText {
		resp.Diagnostics.AddAttributeWarning(path.Root("content"), "File is not text",
			fmt.Sprintf("%s in sandbox %s is not valid UTF-8, so content is null; use content_base64.", remote, id))
	}
	m.ID = types.StringValue(id + ":" + remote)
	m.Exists = v.Exists.(types.Bool)
	m.SHA256, m.Size = v.SHA256.(types.String), v.Size.(types.Int64)
	m.Content, m.ContentBase64, m.SensitiveContent = v.Content.(types.String), v.ContentBase64.(types.String), v.Sensitive
	m.Stale = v.Stale.(types.Bool)
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &m)...)
}

type sandboxFileDataModel struct {
	ID               types.String `tfsdk:"id"`
	SandboxID        types.String `tfsdk:"sandbox_id"`
	Path             types.String `tfsdk:"path"`
	MaxSize          types.Int64  `tfsdk:"max_size"`
	Sensitive        types.Bool   `tfsdk:"sensitive"`
	AllowMissing     types.Bool   `tfsdk:"allow_missing"`
	RunID            types.String `tfsdk:"run_id"`
	Exists           types.Bool   `tfsdk:"exists"`
	Stale            types.Bool   `tfsdk:"stale"`
	SHA256           types.String `tfsdk:"sha256"`
	Size             types.Int64  `tfsdk:"size"`
	Content          types.String `tfsdk:"content"`
	ContentBase64    types.String `tfsdk:"content_base64"`
	SensitiveContent types.Object `tfsdk:"sensitive_content"`
}
