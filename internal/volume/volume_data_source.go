package volume

// The prime_volume data source: a volume by name, as the platform holds it.

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

var _ datasource.DataSourceWithConfigure = (*volumeDataSource)(nil)

// NewVolumeDataSource is the prime_volume data source constructor.
func NewVolumeDataSource() datasource.DataSource { return &volumeDataSource{} }

type volumeDataSource struct{ client *prime.Client }

func (d *volumeDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_volume"
}

func (d *volumeDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.client = tfkit.ClientFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *volumeDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads a volume by name (in your personal scope or a team's), whoever made it: its " +
			"size, visibility and the checkpoint new attachments copy.",
		Attributes: map[string]schema.Attribute{
			"name": schema.StringAttribute{Required: true, MarkdownDescription: "Name of the volume.",
				Validators: []validator.String{nameValidator{}}},
			"team_id": schema.StringAttribute{Optional: true, Computed: true,
				MarkdownDescription: "Team whose volume to read. Default: the provider's `team_id`, else your personal scope."},
			"id": schema.StringAttribute{Computed: true,
				MarkdownDescription: "`<name>` for a personal volume, `<team_id>/<name>` for a team's."},
			"size_gb":            schema.Int64Attribute{Computed: true, MarkdownDescription: "Size in GiB."},
			"public":             schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether other owners may attach it."},
			"head_checkpoint_id": schema.StringAttribute{Computed: true, MarkdownDescription: headDoc},
		},
	}
}

func (d *volumeDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	if !tfkit.RequireClient(d.client, &resp.Diagnostics) {
		return
	}
	var m volumeModel
	resp.Diagnostics.Append(tfkit.GetConfig(ctx, req.Config, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	v, err := d.client.GetVolume(ctx, m.Name.ValueString(), m.TeamID.ValueString())
	switch {
	case errors.Is(err, prime.ErrNotFound):
		resp.Diagnostics.AddError("Volume not found", fmt.Sprintf("No volume is named %q in this scope.", m.Name.ValueString()))
		return
	case err != nil:
		resp.Diagnostics.AddError("Cannot read volume", err.Error())
		return
	}
	m.fill(v)
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &m)...)
}
