package network

// prime_sandbox_network: a private network and its rules. The rules are
// replaced in place (PUT …/rules); name and team replace the network.

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

var (
	_ resource.ResourceWithConfigure      = (*networkResource)(nil)
	_ resource.ResourceWithImportState    = (*networkResource)(nil)
	_ resource.ResourceWithValidateConfig = (*networkResource)(nil)
	_ resource.ResourceWithIdentity       = (*networkResource)(nil)
)

// NewNetworkResource is the prime_sandbox_network constructor.
func NewNetworkResource() resource.Resource { return &networkResource{} }

type networkResource struct{ client *prime.Client }

func (r *networkResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_sandbox_network"
}

func (r *networkResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = tfkit.ClientFrom(req.ProviderData, &resp.Diagnostics)
}

func (r *networkResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = networkIdentitySchema()
}

// rulesDoc describes `rules`, for the resource and the data source.
const rulesDoc = "Directed, allow-only TCP rules: a member may open a connection to another member when a rule's " +
	"`from` matches its own tags, the rule's `to` matches the peer's tags, and the port is listed. A selector is " +
	"`\"*\"` (every member) or `\"tag:<name>\"`. Connections no rule allows are refused."

func (r *networkResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A private network: running VM sandboxes of one owner (you, or a team) that reach each " +
			"other at `<sandbox-id>.sandbox.internal` over TCP where its `rules` allow. Members join with " +
			"`prime_sandbox_network_member`. Port exposure is gone from the platform, so a tool server that agents " +
			"call lives on such a network; traffic between members is governed by these rules, not by the members' " +
			"egress policies. See the private networks guide.\n\n" +
			"The provider **always sends `rules`**, an empty list included: the platform's published default for a " +
			"network created without rules is contradictory (its API reference says no member may reach another " +
			"until rules allow it; its guide's example says every member reaches every other on every port), so " +
			"nothing is left to that default. `rules = []` (the default) lets no member reach another.\n\n" +
			"Destroy deletes the network (its members stop reaching each other; a network already gone is success). " +
			"Import by network ID, or by identity.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{Computed: true, MarkdownDescription: "Network ID assigned by the platform.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			// [I] No rename is published (no PATCH of a network), so a new
			// name is a new network.
			"name": schema.StringAttribute{Required: true,
				MarkdownDescription: "Name of the network. Changing it replaces the network (the platform publishes no " +
					"rename), which drops every member: their `prime_sandbox_network_member` resources are replaced too.",
				Validators:    []validator.String{stringvalidator.LengthAtLeast(1)},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()}},
			"team_id": schema.StringAttribute{Optional: true, Computed: true,
				MarkdownDescription: "Team that owns the network; its members must belong to the same owner. Default: the " +
					"provider's `team_id`, else your personal scope (read back from the platform). Changing it replaces " +
					"the network.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown(), stringplanmodifier.RequiresReplace()}},
			"rules": schema.ListNestedAttribute{Optional: true, Computed: true,
				Default: listdefault.StaticValue(types.ListValueMust(ruleType(), []attr.Value{})),
				MarkdownDescription: rulesDoc + " Default `[]`: no member reaches another. Always sent, also when " +
					"empty (see above). Checked at plan: selectors, tags (1 to 63 letters, digits, `-`, `_`, `.`), and " +
					"ports (at least one per rule, each 1 to 65535). Changing it replaces the rule set **in place** " +
					"(connections already open are the platform's to keep or cut). A refresh shows rules changed outside " +
					"Terraform as drift; the same rules in another order are no change.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"from": schema.StringAttribute{Required: true,
						MarkdownDescription: "Members that may open the connection: `\"*\"` or `\"tag:<name>\"`."},
					"to": schema.StringAttribute{Required: true,
						MarkdownDescription: "Members that accept it: `\"*\"` or `\"tag:<name>\"`."},
					"ports": schema.ListAttribute{Required: true, ElementType: types.Int64Type,
						MarkdownDescription: "TCP ports the connection may use, at least one, each 1 to 65535."},
				}},
			},
		},
	}
}

func (r *networkResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m networkModel
	resp.Diagnostics.Append(tfkit.GetConfig(ctx, req.Config, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	addProblems(&resp.Diagnostics, "Invalid network rule", ruleProblems(path.Root("rules"), m.Rules))
}

func (r *networkResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var plan networkModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	rules, _ := rulesOf(plan.Rules)
	create := prime.CreateNetworkRequest{Name: plan.Name.ValueString(), Rules: rules}
	if !plan.TeamID.IsNull() && !plan.TeamID.IsUnknown() {
		create.TeamID = plan.TeamID.ValueStringPointer()
	}
	n, err := r.client.CreateNetwork(ctx, create)
	if err != nil {
		resp.Diagnostics.AddError("Cannot create network", err.Error())
		return
	}
	plan.fill(n)
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &plan)...)
	resp.Diagnostics.Append(setNetworkIdentity(ctx, resp.Identity, plan.ID)...)
}

func (r *networkResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var state networkModel
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	// The identity is set before the read: Terraform wants one after every
	// Read without errors, also one that removes the resource.
	resp.Diagnostics.Append(setNetworkIdentity(ctx, resp.Identity, state.ID)...)
	n, err := r.client.GetNetwork(ctx, state.ID.ValueString())
	switch {
	case errors.Is(err, prime.ErrNotFound):
		resp.Diagnostics.AddWarning("Network is gone",
			fmt.Sprintf("Network %s no longer exists; it is removed from state and the next apply creates it again.", state.ID.ValueString()))
		resp.State.RemoveResource(ctx)
		return
	case err != nil:
		resp.Diagnostics.AddError("Cannot read network", err.Error())
		return
	}
	state.fill(n)
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &state)...)
	resp.Diagnostics.Append(setNetworkIdentity(ctx, resp.Identity, state.ID)...)
}

// Update replaces the rule set: the only in-place change (name and team_id
// replace the network).
func (r *networkResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var plan networkModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	rules, _ := rulesOf(plan.Rules)
	if err := r.client.ReplaceNetworkRules(ctx, plan.ID.ValueString(), rules); err != nil {
		resp.Diagnostics.AddError("Cannot replace network rules", err.Error())
		return
	}
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &plan)...)
	resp.Diagnostics.Append(setNetworkIdentity(ctx, resp.Identity, plan.ID)...)
}

// Delete deletes the network (204); one already gone is success.
func (r *networkResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var state networkModel
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := r.client.DeleteNetwork(ctx, state.ID.ValueString()); err != nil && !errors.Is(err, prime.ErrNotFound) {
		resp.Diagnostics.AddError("Cannot delete network", err.Error())
	}
}

// ImportState takes a network ID, or the identity's id; Read fills the rest.
func (r *networkResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	id, d := tfkit.ImportIDOf(ctx, req, func(m networkIdentityModel) (string, error) { return m.ID.ValueString(), nil })
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), id)...)
	resp.Diagnostics.Append(setNetworkIdentity(ctx, resp.Identity, types.StringValue(id))...)
}
