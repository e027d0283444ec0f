package network

// prime_sandbox_network's resource identity (Terraform 1.12+): the
// platform's network ID.

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

type networkIdentityModel struct {
	ID types.String `tfsdk:"id"`
}

func networkIdentitySchema() identityschema.Schema {
	return identityschema.Schema{Attributes: map[string]identityschema.Attribute{
		"id": identityschema.StringAttribute{RequiredForImport: true, Description: "Network ID assigned by the platform."},
	}}
}

func setNetworkIdentity(ctx context.Context, identity *tfsdk.ResourceIdentity, id types.String) diag.Diagnostics {
	if identity == nil || id.IsNull() || id.IsUnknown() {
		return nil
	}
	return identity.Set(ctx, networkIdentityModel{ID: id})
}
