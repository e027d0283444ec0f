package tfkit

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

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
