package egress

// The prime_egress_policy data source: the policy a sandbox holds, read
// from the platform in canonical form.

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

var _ datasource.DataSourceWithConfigure = (*egressPolicyDataSource)(nil)

// NewPolicyDataSource is the prime_egress_policy data source
// constructor.
func NewPolicyDataSource() datasource.DataSource { return &egressPolicyDataSource{} }

type egressPolicyDataSource struct{ client *prime.Client }

func (d *egressPolicyDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_egress_policy"
}

func (d *egressPolicyDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.client = tfkit.ClientFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *egressPolicyDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads the egress policy the platform holds for a sandbox, whoever wrote it, and " +
			"whether the data plane enforces it. Useful as a gate: `applied` is the platform's answer at read time.",
		Attributes: map[string]schema.Attribute{
			"sandbox_id": schema.StringAttribute{Required: true, MarkdownDescription: "ID of the sandbox.",
				Validators: []validator.String{stringvalidator.LengthAtLeast(1)}},
			"mode": schema.StringAttribute{Computed: true, MarkdownDescription: "`allow` (only the allowlist is " +
				"reachable; an empty allowlist denies all), `block` (everything but the denylist) or `open` (unrestricted)."},
			"allow": schema.ListAttribute{Computed: true, ElementType: types.StringType,
				MarkdownDescription: "The allowlist as the platform stores it (what `prime_egress_policy` calls " +
					"`effective_allow`: route hosts included); null unless `mode` is `allow`."},
			"block": schema.ListAttribute{Computed: true, ElementType: types.StringType,
				MarkdownDescription: "The blocklist as the platform stores it; null in allow mode, `[]` when open (null " +
					"if the platform reports no lists at all)."},
			"generation": schema.Int64Attribute{Computed: true, MarkdownDescription: "Number of accepted policy writes (0 before any)."},
			"applied_generation": schema.Int64Attribute{Computed: true,
				MarkdownDescription: "Last generation the data plane enforces; `-1` while none is."},
			"applied": schema.BoolAttribute{Computed: true,
				MarkdownDescription: "Whether the data plane enforces the current generation. Until it does, the previous " +
					"policy stays in force. A VM nobody has written a policy to reports generation 0, `applied_generation` " +
					"-1 and `applied = false`, as in the Prime SDK's fixture: its egress is open."},
		},
	}
}

func (d *egressPolicyDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	if !tfkit.RequireClient(d.client, &resp.Diagnostics) {
		return
	}
	var m egressPolicyDataModel
	resp.Diagnostics.Append(tfkit.GetConfig(ctx, req.Config, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id := m.SandboxID.ValueString()
	st, err := d.client.GetEgressPolicy(ctx, id)
	switch {
	case errors.Is(err, prime.ErrNotFound):
		resp.Diagnostics.AddError("Sandbox not found", fmt.Sprintf("No sandbox has the ID %q.", id))
		return
	case err != nil:
		resp.Diagnostics.AddError("Cannot read egress policy", err.Error())
		return
	}
	switch {
	case st.Policy.Allowlist != nil:
		m.Mode = types.StringValue("allow")
	case len(st.Policy.Denylist) > 0:
		m.Mode = types.StringValue("block")
	default:
		m.Mode = types.StringValue("open")
	}
	allow, diags := listValue(ctx, st.Policy.Allowlist)
	resp.Diagnostics.Append(diags...)
	deny, diags := listValue(ctx, st.Policy.Denylist)
	resp.Diagnostics.Append(diags...)
	m.Allow, m.Block = allow, deny
	m.Generation = types.Int64Value(st.Generation)
	m.AppliedGeneration = types.Int64Value(st.AppliedGeneration)
	m.Applied = types.BoolValue(st.Enforces(st.Generation))
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &m)...)
}

type egressPolicyDataModel struct {
	SandboxID         types.String `tfsdk:"sandbox_id"`
	Mode              types.String `tfsdk:"mode"`
	Allow             types.List   `tfsdk:"allow"`
	Block             types.List   `tfsdk:"block"`
	Generation        types.Int64  `tfsdk:"generation"`
	AppliedGeneration types.Int64  `tfsdk:"applied_generation"`
	Applied           types.Bool   `tfsdk:"applied"`
}
