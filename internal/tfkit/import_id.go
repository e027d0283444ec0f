package tfkit

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// HeldID is the id of a resource Terraform already holds: its prior
// state's id attribute, "" on a create or when it cannot be read. A plan
// that shows it is when a crash journal's entry for it can go.
func HeldID(ctx context.Context, state tfsdk.State) string {
	if state.Raw.IsNull() {
		return ""
	}
	var id types.String
	if state.GetAttribute(ctx, path.Root("id"), &id).HasError() {
		return ""
	}
	return id.ValueString()
}

// ImportIDOf is the ID an import names: the `id` of an import block or of
// `terraform import`, else read from its identity by fromIdentity.
func ImportIDOf[M any](ctx context.Context, req resource.ImportStateRequest, fromIdentity func(M) (string, error)) (string, diag.Diagnostics) {
	if req.ID != "" || req.Identity == nil || req.Identity.Raw.IsNull() {
		return req.ID, nil
	}
	var m M
	diags := req.Identity.Get(ctx, &m)
	if diags.HasError() {
		return "", diags
	}
	id, err := fromIdentity(m)
	if err != nil {
		diags.AddError("Invalid import identity", err.Error())
	}
	return id, diags
}
