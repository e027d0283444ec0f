package sandbox

// Resource identity (Terraform 1.12+): what names the remote object of
// prime_sandbox and prime_sandbox_fleet (prime_egress_policy's is in
// internal/egress), stored in
// state beside it, importable with `import { identity = {...} }`, and what
// the list resources (`terraform query`) return for each result.

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

// sandboxIdentityModel is prime_sandbox's identity: the platform's ID.
type sandboxIdentityModel struct {
	ID types.String `tfsdk:"id"`
}

// fleetIdentityModel is prime_sandbox_fleet's; see fleetIdentityDoc.
type fleetIdentityModel struct {
	ID         types.String `tfsdk:"id"`
	Label      types.String `tfsdk:"label"`
	SandboxIDs types.List   `tfsdk:"sandbox_ids"`
}

// fleetIdentityV0Model is the fleet's identity before version 1 added id.
type fleetIdentityV0Model struct {
	Label      types.String `tfsdk:"label"`
	SandboxIDs types.List   `tfsdk:"sandbox_ids"`
}

// fleetIdentityVersion is the version of fleetIdentitySchema. Version 0
// was label and sandbox_ids alone: a fleet without a label of its own and
// without members (all gone, none created yet, or size = 0) had an
// identity of nothing but nulls and an empty list, which Terraform takes
// for no identity at all ("Missing Resource Identity After Read"), so the
// fleet could be neither planned nor destroyed. Version 1 adds id, which
// every fleet has.
const fleetIdentityVersion = 1

// fleetIdentityDoc explains the fleet's identity choice, for the resource
// description and the guide.
const fleetIdentityDoc = "A fleet has no object of its own on the platform: it is its members. Its identity is " +
	"`id`, the fleet's `id` (the provider's, which every fleet has, also one without members), `label`, the label " +
	"that finds the members — the one an import or a `prime_sandbox_fleet` list result named, else the fleet's only " +
	"label — and `sandbox_ids`, the members' IDs, sorted. An import by identity uses `label` when it is set (every " +
	"running sandbox that carries it, as `label:<label>`), else `sandbox_ids`, and keeps `id` as the fleet's `id` " +
	"when it is given (`id` alone finds no members). The label is what stays: `labels` cannot change without " +
	"replacing the fleet. The IDs follow the members, so they change when members are added, removed or " +
	"re-created, and the identity with them (the fleet declares a mutable identity); they are there for fleets " +
	"without a label of their own."

func sandboxIdentitySchema() identityschema.Schema {
	return identityschema.Schema{Attributes: map[string]identityschema.Attribute{
		"id": identityschema.StringAttribute{RequiredForImport: true, Description: "Sandbox ID assigned by the platform."},
	}}
}

func fleetIdentitySchema() identityschema.Schema {
	s := fleetIdentityV0Schema()
	s.Version = fleetIdentityVersion
	s.Attributes["id"] = identityschema.StringAttribute{OptionalForImport: true,
		Description: "The fleet's id (the provider's: a fleet has no platform object). An import by identity keeps " +
			"it as the fleet's id; it finds no members by itself. Null in `terraform query` results, whose import " +
			"gives the fleet a new id."}
	return s
}

// fleetIdentityV0Schema is the identity of version 0, which the upgrader
// reads (and version 1 extends).
func fleetIdentityV0Schema() identityschema.Schema {
	return identityschema.Schema{Attributes: map[string]identityschema.Attribute{
		"label": identityschema.StringAttribute{OptionalForImport: true,
			Description: "The label that finds the members: an import takes every running sandbox that carries it. " +
				"Null when the fleet has no label of its own."},
		"sandbox_ids": identityschema.ListAttribute{OptionalForImport: true, ElementType: types.StringType,
			Description: "The members' sandbox IDs, sorted; an import by identity uses them when label is null."},
	}}
}

// upgradeFleetIdentityV0 reads an identity stored by version 0 (label and
// sandbox_ids) into version 1. The id is left null: an identity upgrade
// sees no state, and the Read that follows every upgrade records it. A
// state written by Terraform before 1.12 stores no identity at all, yet
// Terraform 1.12+ asks to upgrade it (its stored version, 0, is older than
// the schema's): that upgrades to an empty identity, which the Read fills
// (the fleet's identity is mutable).
func upgradeFleetIdentityV0(ctx context.Context, req resource.UpgradeIdentityRequest, resp *resource.UpgradeIdentityResponse) {
	prior := fleetIdentityV0Model{Label: types.StringNull(), SandboxIDs: types.ListNull(types.StringType)}
	if req.RawIdentity != nil && (req.RawIdentity.JSON != nil || req.RawIdentity.Flatmap != nil) {
		v0 := fleetIdentityV0Schema()
		raw, err := req.RawIdentity.UnmarshalWithOpts(v0.Type().TerraformType(ctx),
			tfprotov6.UnmarshalOpts{ValueFromJSONOpts: tftypes.ValueFromJSONOpts{IgnoreUndefinedAttributes: true}})
		if err != nil {
			resp.Diagnostics.AddError("Cannot upgrade the fleet's identity", "Reading the stored version-0 identity: "+err.Error())
			return
		}
		stored := tfsdk.ResourceIdentity{Schema: v0, Raw: raw}
		resp.Diagnostics.Append(stored.Get(ctx, &prior)...)
		if resp.Diagnostics.HasError() {
			return
		}
	}
	if prior.SandboxIDs.IsNull() {
		prior.SandboxIDs = types.ListValueMust(types.StringType, nil)
	}
	resp.Diagnostics.Append(resp.Identity.Set(ctx, fleetIdentityModel{
		ID: types.StringNull(), Label: prior.Label, SandboxIDs: prior.SandboxIDs,
	})...)
}

// setSandboxIdentity records a sandbox's identity (nil: the resource has
// none, as in Terraform before 1.12).
func setSandboxIdentity(ctx context.Context, identity *tfsdk.ResourceIdentity, id types.String) diag.Diagnostics {
	if identity == nil || id.IsNull() || id.IsUnknown() {
		return nil
	}
	return identity.Set(ctx, sandboxIdentityModel{ID: id})
}

// setFleetIdentity records a fleet's identity: the label it is known by
// (priorLabel, the label of the identity it had, while that is still one of
// the fleet's labels) and its members' IDs.
func setFleetIdentity(ctx context.Context, identity *tfsdk.ResourceIdentity, priorLabel string, f sandboxFleetModel) diag.Diagnostics {
	if identity == nil {
		return nil
	}
	var diags diag.Diagnostics
	labels, d := tfkit.StringSet(ctx, f.Labels)
	diags.Append(d...)
	members := sandboxFleetMembers(f, &diags)
	ids := make([]string, 0, len(members))
	for _, m := range members {
		ids = append(ids, m.ID.ValueString())
	}
	id, d := fleetIdentityValue(ctx, f.ID.ValueString(), fleetIdentityLabel(priorLabel, labels), ids)
	diags.Append(d...)
	diags.Append(identity.Set(ctx, id)...)
	return diags
}

// fleetLabelOf is the label of a fleet's stored identity ("" when it has
// none, or no identity).
func fleetLabelOf(ctx context.Context, identity *tfsdk.ResourceIdentity) string {
	if identity == nil || identity.Raw.IsNull() {
		return ""
	}
	var m fleetIdentityModel
	if diags := identity.Get(ctx, &m); diags.HasError() {
		return ""
	}
	return m.Label.ValueString()
}

// fleetIdentityLabel is the label a fleet is known by: the one it was
// imported (or listed) by while the fleet still carries it, else its only
// label, else none.
func fleetIdentityLabel(prior string, labels []string) string {
	switch {
	case prior != "" && slices.Contains(labels, prior):
		return prior
	case len(labels) == 1:
		return labels[0]
	}
	return ""
}

// fleetIdentityValue builds the identity from the fleet's id and a label
// ("" for none of either) and member IDs (sorted here).
func fleetIdentityValue(ctx context.Context, id, label string, ids []string) (fleetIdentityModel, diag.Diagnostics) {
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	if sorted == nil {
		sorted = []string{} // an empty list, not null: the identity says there are no members
	}
	list, diags := types.ListValueFrom(ctx, types.StringType, sorted)
	m := fleetIdentityModel{ID: types.StringNull(), Label: types.StringNull(), SandboxIDs: list}
	if id != "" {
		m.ID = types.StringValue(id)
	}
	if label != "" {
		m.Label = types.StringValue(label)
	}
	return m, diags
}

// fleetImportID turns an import's identity into the ID form ImportState
// takes: `label:<label>`, else the comma-separated sandbox IDs.
func fleetImportID(m fleetIdentityModel) (string, error) {
	if label := m.Label.ValueString(); label != "" {
		return "label:" + label, nil
	}
	var ids []string
	for _, v := range m.SandboxIDs.Elements() {
		if s, ok := v.(types.String); ok && s.ValueString() != "" {
			ids = append(ids, s.ValueString())
		}
	}
	if len(ids) == 0 {
		return "", errors.New("the identity of a prime_sandbox_fleet needs label or sandbox_ids (id alone names " +
			"no sandbox: a fleet has no platform object)")
	}
	return strings.Join(ids, ","), nil
}

// fleetIDOfIdentity is the fleet id an import by identity names ("" when
// it names none, or the import is by ID): the import keeps it, so a fleet
// imported again after `removed` keeps the id its dependents know.
func fleetIDOfIdentity(ctx context.Context, req resource.ImportStateRequest) string {
	if req.ID != "" || req.Identity == nil || req.Identity.Raw.IsNull() {
		return ""
	}
	var m fleetIdentityModel
	if req.Identity.Get(ctx, &m).HasError() {
		return ""
	}
	return m.ID.ValueString()
}
