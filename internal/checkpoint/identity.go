package checkpoint

// prime_sandbox_checkpoint's resource identity (Terraform 1.12+): the
// checkpoint's ID, which the platform assigns and never changes.

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

type identityModel struct {
	ID types.String `tfsdk:"id"`
}

func identitySchema() identityschema.Schema {
	return identityschema.Schema{Attributes: map[string]identityschema.Attribute{
		"id": identityschema.StringAttribute{RequiredForImport: true, Description: "Checkpoint ID assigned by the platform."},
	}}
}

func setIdentity(ctx context.Context, identity *tfsdk.ResourceIdentity, id types.String) diag.Diagnostics {
	if identity == nil || id.IsNull() || id.IsUnknown() {
		return nil
	}
	return identity.Set(ctx, identityModel{ID: id})
}
