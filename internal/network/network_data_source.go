package network

// The prime_sandbox_network data source: a network by ID, with its rules
// and members as the platform holds them.

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

var _ datasource.DataSourceWithConfigure = (*networkDataSource)(nil)

// NewNetworkDataSource is the prime_sandbox_network data source
// constructor.
func NewNetworkDataSource() datasource.DataSource { return &networkDataSource{} }

type networkDataSource struct{ client *prime.Client }

func (d *networkDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_sandbox_network"
}

func (d *networkDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.client = tfkit.ClientFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *networkDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads a private network by ID: its rules and its members with their tags and " +
			"addresses, as the platform holds them, whoever made them.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{Required: true, MarkdownDescription: "Network ID.",
				Validators: []validator.String{stringvalidator.LengthAtLeast(1)}},
			"name":    schema.StringAttribute{Computed: true, MarkdownDescription: "Name of the network."},
			"team_id": schema.StringAttribute{Computed: true, MarkdownDescription: "Team that owns it; null when personal."},
			"rules": schema.ListNestedAttribute{Computed: true, MarkdownDescription: rulesDoc,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"from":  schema.StringAttribute{Computed: true, MarkdownDescription: "Members that may open the connection."},
					"to":    schema.StringAttribute{Computed: true, MarkdownDescription: "Members that accept it."},
					"ports": schema.ListAttribute{Computed: true, ElementType: types.Int64Type, MarkdownDescription: "TCP ports allowed."},
				}}},
			"members": schema.ListNestedAttribute{Computed: true, MarkdownDescription: "The members, in the platform's order.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"sandbox_id": schema.StringAttribute{Computed: true, MarkdownDescription: "Sandbox ID of the member."},
					"host": schema.StringAttribute{Computed: true,
						MarkdownDescription: "The member's address on its networks, `<sandbox-id>.sandbox.internal`."},
					"tags": schema.ListAttribute{Computed: true, ElementType: types.StringType,
						MarkdownDescription: "The member's tags, which rules select with `tag:<name>`."},
				}}},
		},
	}
}

func (d *networkDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	if !tfkit.RequireClient(d.client, &resp.Diagnostics) {
		return
	}
	var m networkDataModel
	resp.Diagnostics.Append(tfkit.GetConfig(ctx, req.Config, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	n, err := d.client.GetNetwork(ctx, m.ID.ValueString())
	switch {
	case errors.Is(err, prime.ErrNotFound):
		resp.Diagnostics.AddError("Network not found", fmt.Sprintf("No network has the ID %q.", m.ID.ValueString()))
		return
	case err != nil:
		resp.Diagnostics.AddError("Cannot read network", err.Error())
		return
	}
	base := networkModel{Rules: types.ListNull(ruleType())}
	base.fill(n)
	m.ID, m.Name, m.TeamID, m.Rules = base.ID, base.Name, base.TeamID, base.Rules
	m.Members = membersValue(n.Members)
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &m)...)
}
