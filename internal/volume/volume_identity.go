package volume

// prime_volume's resource identity (Terraform 1.12+): its name and, for a
// team's volume, the team (a name is unique within its owner's scope).

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

type volumeIdentityModel struct {
	Name   types.String `tfsdk:"name"`
	TeamID types.String `tfsdk:"team_id"`
}

func volumeIdentitySchema() identityschema.Schema {
	return identityschema.Schema{Attributes: map[string]identityschema.Attribute{
		"name": identityschema.StringAttribute{RequiredForImport: true, Description: "Name of the volume."},
		"team_id": identityschema.StringAttribute{OptionalForImport: true,
			Description: "Team that owns the volume; null for a personal volume."},
	}}
}

func setVolumeIdentity(ctx context.Context, identity *tfsdk.ResourceIdentity, m volumeModel) diag.Diagnostics {
	if identity == nil || m.Name.IsNull() || m.Name.IsUnknown() || m.TeamID.IsUnknown() {
		return nil
	}
	return identity.Set(ctx, volumeIdentityModel{Name: m.Name, TeamID: m.TeamID})
}
