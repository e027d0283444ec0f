package network

// prime_sandbox_network_member: one sandbox, or every member of a fleet,
// on a private network with tags. Tags are replaced in place (PUT
// …/members/{id} replaces them); members that join or leave a fleet join or
// leave the network in place; a member removed outside Terraform is drift,
// put back by the next apply.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/resourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/setdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/memberkit"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

var (
	_ resource.ResourceWithConfigure        = (*memberResource)(nil)
	_ resource.ResourceWithImportState      = (*memberResource)(nil)
	_ resource.ResourceWithValidateConfig   = (*memberResource)(nil)
	_ resource.ResourceWithConfigValidators = (*memberResource)(nil)
	_ resource.ResourceWithModifyPlan       = (*memberResource)(nil)
)

// NewMemberResource is the prime_sandbox_network_member constructor.
func NewMemberResource() resource.Resource { return &memberResource{} }

type memberResource struct{ client *prime.Client }

func (r *memberResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_sandbox_network_member"
}

func (r *memberResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = tfkit.ClientFrom(req.ProviderData, &resp.Diagnostics)
}

func (r *memberResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	ids := memberkit.SandboxIDsAttribute("Member key → sandbox ID, usually `prime_sandbox_fleet.<name>.sandbox_ids`: " +
		"every member joins with `tags`. Exactly one of `sandbox_id` and `sandbox_ids`. Changing it updates in " +
		"place: new members (and members whose sandbox changed) join, sandboxes no key names any more leave, the " +
		"others are untouched. Members join concurrently.")
	ids.Required, ids.Optional = false, true
	resp.Schema = schema.Schema{
		MarkdownDescription: "Puts a sandbox, or every member of a fleet, on a private network " +
			"(`prime_sandbox_network`) with `tags`, which the network's rules select with `tag:<name>`. Each member " +
			"is then reachable from the members the rules allow at `<sandbox-id>.sandbox.internal` (see `host` and " +
			"`members`).\n\n" +
			"Only **running VM sandboxes** of the network's owner can join: a sandbox that is not running (still " +
			"starting, paused, stopped) fails the apply with an error that says so; depend on the sandbox or fleet " +
			"resource, which returns once its sandboxes run. A member that leaves the network outside Terraform (or " +
			"whose sandbox stopped) drops out of `members` at refresh, and the next apply puts it back. Destroy takes " +
			"every member off the network; a member, sandbox or network already gone is success.\n\n" +
			"Import the single-sandbox form by `<network_id>/<sandbox_id>`; the fleet form cannot be imported.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{Computed: true,
				MarkdownDescription: "`<network_id>/<sandbox_id>` for one sandbox; `<network_id>/<random>` for a fleet.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"network_id": schema.StringAttribute{Required: true,
				MarkdownDescription: "ID of the network, usually `prime_sandbox_network.<name>.id`. Changing it replaces " +
					"the membership (the members leave the old network and join the new one).",
				Validators:    []validator.String{stringvalidator.LengthAtLeast(1)},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()}},
			"sandbox_id": schema.StringAttribute{Optional: true,
				MarkdownDescription: "ID of one running VM sandbox to put on the network. Exactly one of `sandbox_id` " +
					"and `sandbox_ids`. Changing it replaces the membership.",
				Validators:    []validator.String{stringvalidator.LengthAtLeast(1)},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()}},
			"sandbox_ids": ids,
			"tags": schema.SetAttribute{Optional: true, Computed: true, ElementType: types.StringType,
				Default: setdefault.StaticValue(types.SetValueMust(types.StringType, []attr.Value{})),
				MarkdownDescription: "Tags of every member this resource puts on the network, each 1 to 63 letters, " +
					"digits, `-`, `_` and `.`, starting with a letter or digit (checked at plan). Default `[]`: the " +
					"member is matched only by `\"*\"` selectors. Changing it replaces the tags of every member **in " +
					"place**."},
			"host": schema.StringAttribute{Computed: true,
				MarkdownDescription: "For `sandbox_id`: the member's address on the network, " +
					"`<sandbox-id>.sandbox.internal`; null for `sandbox_ids` (see `members`)."},
			"members": schema.MapNestedAttribute{Computed: true,
				MarkdownDescription: "Member key (the key of `sandbox_ids`, or the sandbox ID for `sandbox_id`) → the " +
					"member as the platform holds it. Known at plan whenever the sandbox IDs are, so agents can be " +
					"given their peers' addresses. A member found off the network at refresh drops out; one whose tags " +
					"were changed outside Terraform shows them; the next apply puts either back.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"sandbox_id": schema.StringAttribute{Computed: true, MarkdownDescription: "Sandbox ID of the member."},
					"host": schema.StringAttribute{Computed: true,
						MarkdownDescription: "Its address on the network, `<sandbox-id>.sandbox.internal`."},
					"tags": schema.SetAttribute{Computed: true, ElementType: types.StringType,
						MarkdownDescription: "Its tags on the network."},
				}}},
		},
	}
}

func (r *memberResource) ConfigValidators(context.Context) []resource.ConfigValidator {
	return []resource.ConfigValidator{
		resourcevalidator.ExactlyOneOf(path.MatchRoot("sandbox_id"), path.MatchRoot("sandbox_ids")),
	}
}

func (r *memberResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m memberModel
	resp.Diagnostics.Append(tfkit.GetConfig(ctx, req.Config, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	addProblems(&resp.Diagnostics, "Invalid network member tag", tagProblems(path.Root("tags"), m.Tags))
}

// ModifyPlan plans `host` and `members` from the sandbox IDs and tags: a
// member missing from state (new, or removed outside Terraform) or holding
// other tags shows as a change, so the apply puts it.
func (r *memberResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy
	}
	var plan memberModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.Host = types.StringNull()
	if !plan.SandboxID.IsNull() {
		plan.Host = types.StringUnknown()
		if !plan.SandboxID.IsUnknown() {
			plan.Host = types.StringValue(prime.MemberHost(plan.SandboxID.ValueString()))
		}
	}
	plan.Members = types.MapUnknown(memberEntryType())
	if wanted, known := plan.wanted(); known {
		tags := tagsOf(plan.Tags)
		entries := map[string]attr.Value{}
		for key, id := range wanted {
			switch {
			case id == "":
				entries[key] = types.ObjectUnknown(memberEntryAttrTypes)
			case tags == nil:
				entries[key] = memberEntry{SandboxID: types.StringValue(id), Host: types.StringValue(prime.MemberHost(id)),
					Tags: types.SetUnknown(types.StringType)}.object()
			default:
				entries[key] = entryOf(id, tags).object()
			}
		}
		plan.Members = types.MapValueMust(memberEntryType(), entries)
	}
	if req.State.Raw.IsNull() && !plan.SandboxID.IsNull() {
		plan.ID = types.StringUnknown()
		if !plan.SandboxID.IsUnknown() && !plan.NetworkID.IsUnknown() {
			plan.ID = types.StringValue(memberID(plan.NetworkID.ValueString(), plan.SandboxID.ValueString()))
		}
	}
	resp.Diagnostics.Append(tfkit.SetPlan(ctx, &resp.Plan, &plan)...)
}

func (r *memberResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var plan memberModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	wanted, _ := plan.wanted()
	networkID := plan.NetworkID.ValueString()
	entries, problems, tried := converge(ctx, r.client, networkID, wanted, tagsOf(plan.Tags), nil)
	if plan.ID.IsUnknown() {
		own := prime.NewIdempotencyKey()[:16] // a fleet's: it has no one sandbox
		if !plan.SandboxID.IsNull() {
			own = plan.SandboxID.ValueString()
		}
		plan.ID = types.StringValue(memberID(networkID, own))
	}
	plan.Members = memberEntriesValue(entries)
	if problems.Len() > 0 {
		memberkit.AddMemberFailures(&resp.Diagnostics, "Network join failed", "", problems, tried, "could not join")
		if len(entries) == 0 {
			return // nothing joined: nothing to track
		}
		// The members that joined are recorded (the resource is then tainted:
		// the next apply takes them off and joins every member again).
	}
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &plan)...)
}

// Read refreshes the members with one read of the network. A member off
// the network drops out of `members` (the next apply puts it back); a
// network that is gone removes the resource.
func (r *memberResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var state memberModel
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	prior := memberEntriesOf(state.Members, &resp.Diagnostics)
	imported := prior == nil
	if imported && !state.SandboxID.IsNull() {
		prior = map[string]memberEntry{state.SandboxID.ValueString(): {SandboxID: state.SandboxID}}
	}
	networkID := state.NetworkID.ValueString()
	n, err := r.client.GetNetwork(ctx, networkID)
	switch {
	case errors.Is(err, prime.ErrNotFound):
		resp.Diagnostics.AddWarning("Network is gone",
			fmt.Sprintf("Network %s no longer exists, so its members are removed from state.", networkID))
		resp.State.RemoveResource(ctx)
		return
	case err != nil:
		resp.Diagnostics.AddError("Cannot read network members", err.Error())
		return
	}
	entries := map[string]memberEntry{}
	var gone memberkit.Problems
	for key, p := range prior {
		id := p.SandboxID.ValueString()
		m, ok := n.Member(id)
		if !ok {
			gone.Add(key, "sandbox %s is no longer on network %s.", id, networkID)
			continue
		}
		entries[key] = entryOf(id, m.Tags)
	}
	if imported {
		e, ok := entries[state.SandboxID.ValueString()]
		if !ok {
			resp.Diagnostics.AddError("Cannot import network member",
				fmt.Sprintf("Sandbox %s is not a member of network %s.", state.SandboxID.ValueString(), networkID))
			return
		}
		state.Tags = e.Tags
		state.SandboxIDs = types.MapNull(types.StringType)
	} else if gone.Len() > 0 {
		resp.Diagnostics.AddWarning("Network members removed outside Terraform",
			"These members are no longer on the network; the next apply puts them back.\n\n"+gone.String())
	}
	if !state.SandboxID.IsNull() {
		state.Host = types.StringValue(prime.MemberHost(state.SandboxID.ValueString()))
	}
	state.Members = memberEntriesValue(entries)
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &state)...)
}

// Update joins new members, takes off the sandboxes no key names any more,
// and replaces the tags of members that hold others (every member when
// `tags` changed). What succeeded is recorded; what failed is retried by
// the next apply.
func (r *memberResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var plan, state memberModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	prior := memberEntriesOf(state.Members, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	wanted, _ := plan.wanted()
	entries, problems, tried := converge(ctx, r.client, plan.NetworkID.ValueString(), wanted, tagsOf(plan.Tags), prior)
	plan.ID = state.ID
	plan.Members = memberEntriesValue(entries)
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &plan)...)
	if problems.Len() > 0 {
		memberkit.AddMemberFailures(&resp.Diagnostics, "Network join failed", "", problems, tried, "could not join")
	}
}

// Delete takes every member off the network; a member, sandbox or network
// already gone is success. Members that could not leave stay in state, so
// destroy can run again.
func (r *memberResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var state memberModel
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	prior := memberEntriesOf(state.Members, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	entries, problems, tried := converge(ctx, r.client, state.NetworkID.ValueString(), nil, nil, prior)
	if problems.Len() > 0 {
		state.Members = memberEntriesValue(entries)
		resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &state)...)
		memberkit.AddMemberFailures(&resp.Diagnostics, "Network leave failed", "", problems, tried, "could not leave the network (they stay in state; destroy again)")
	}
}

// ImportState takes `<network_id>/<sandbox_id>`: the single-sandbox form.
func (r *memberResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	networkID, sandboxID, ok := strings.Cut(req.ID, "/")
	if !ok || networkID == "" || sandboxID == "" || strings.Contains(sandboxID, "/") {
		resp.Diagnostics.AddError("Invalid import ID",
			fmt.Sprintf("Import a network member by <network_id>/<sandbox_id>, got %q. A fleet's membership cannot be imported.", req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), memberID(networkID, sandboxID))...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("network_id"), networkID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("sandbox_id"), sandboxID)...)
}

// memberID is `<network_id>/<member>`.
func memberID(networkID, member string) string { return networkID + "/" + member }

type memberModel struct {
	ID         types.String `tfsdk:"id"`
	NetworkID  types.String `tfsdk:"network_id"`
	SandboxID  types.String `tfsdk:"sandbox_id"`
	SandboxIDs types.Map    `tfsdk:"sandbox_ids"`
	Tags       types.Set    `tfsdk:"tags"`
	Host       types.String `tfsdk:"host"`
	Members    types.Map    `tfsdk:"members"`
}

// wanted is member key → sandbox ID: the fleet's map, or the one sandbox
// under its own ID. An unknown sandbox ID in a known map reads as ""; known
// is false while the keys are not known.
func (m memberModel) wanted() (ids map[string]string, known bool) {
	if !m.SandboxID.IsNull() {
		if m.SandboxID.IsUnknown() {
			return nil, false
		}
		id := m.SandboxID.ValueString()
		return map[string]string{id: id}, true
	}
	if m.SandboxIDs.IsNull() || m.SandboxIDs.IsUnknown() {
		return nil, false
	}
	ids = map[string]string{}
	for k, v := range m.SandboxIDs.Elements() {
		s, _ := v.(types.String)
		ids[k] = s.ValueString() // "" while unknown
	}
	return ids, true
}
