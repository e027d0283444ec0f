package checkpoint

// The prime_sandbox_checkpoint data source: one checkpoint by ID, as the
// platform reports it now.

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

var _ datasource.DataSourceWithConfigure = (*checkpointDataSource)(nil)

// NewDataSource is the prime_sandbox_checkpoint data source constructor.
func NewDataSource() datasource.DataSource { return &checkpointDataSource{} }

type checkpointDataSource struct{ client *prime.Client }

func (d *checkpointDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_sandbox_checkpoint"
}

func (d *checkpointDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.client = tfkit.ClientFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *checkpointDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: dataSrcDesc,
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{Required: true, MarkdownDescription: idDoc,
				Validators: []validator.String{stringvalidator.LengthBetween(1, prime.MaxCheckpointIDLength)}},
			"sandbox_id":      schema.StringAttribute{Computed: true, MarkdownDescription: "ID of the sandbox that was checkpointed (it may be gone: a `DURABLE` checkpoint outlives it)."},
			"state":           schema.StringAttribute{Computed: true, MarkdownDescription: stateDoc},
			"parent_id":       schema.StringAttribute{Computed: true, MarkdownDescription: parentDoc},
			"depth":           schema.Int64Attribute{Computed: true, MarkdownDescription: depthDoc},
			"docker_image":    schema.StringAttribute{Computed: true, MarkdownDescription: imageDoc},
			"disk_size_bytes": schema.Int64Attribute{Computed: true, MarkdownDescription: diskDoc},
			"stored_bytes":    schema.Int64Attribute{Computed: true, MarkdownDescription: storedDoc},
			"created_at":      schema.StringAttribute{Computed: true, MarkdownDescription: createdDoc},
		},
	}
}

func (d *checkpointDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	if !tfkit.RequireClient(d.client, &resp.Diagnostics) {
		return
	}
	var m Fields
	resp.Diagnostics.Append(tfkit.GetConfig(ctx, req.Config, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id := m.ID.ValueString()
	ck, err := d.client.GetCheckpoint(ctx, id)
	switch {
	case errors.Is(err, prime.ErrNotFound):
		resp.Diagnostics.AddError("Checkpoint not found", fmt.Sprintf("No checkpoint has the ID %q: it was deleted, "+
			"expired, or lost with its sandbox before it was DURABLE.", id))
		return
	case err != nil:
		resp.Diagnostics.AddError("Cannot read checkpoint", err.Error())
		return
	}
	m = fieldsOf(*ck)
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &m)...)
}
