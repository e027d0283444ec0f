package egress

// prime_egress_policy's resource identity (Terraform 1.12+): its sandbox, a
// sandbox holds one policy.

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// egressPolicyIdentityModel is prime_egress_policy's: its sandbox (a
// sandbox holds one policy).
type egressPolicyIdentityModel struct {
	SandboxID types.String `tfsdk:"sandbox_id"`
}

func egressPolicyIdentitySchema() identityschema.Schema {
	return identityschema.Schema{Attributes: map[string]identityschema.Attribute{
		"sandbox_id": identityschema.StringAttribute{RequiredForImport: true,
			Description: "ID of the VM sandbox whose egress policy this is (a sandbox has one)."},
	}}
}

func setEgressPolicyIdentity(ctx context.Context, identity *tfsdk.ResourceIdentity, sandboxID types.String) diag.Diagnostics {
	if identity == nil || sandboxID.IsNull() || sandboxID.IsUnknown() {
		return nil
	}
	return identity.Set(ctx, egressPolicyIdentityModel{SandboxID: sandboxID})
}
