package volume

// What prime_volume and its data source share: the model, its filling from
// a platform answer, and the size rules at plan.

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// volumeModel is prime_volume's, and its data source's.
type volumeModel struct {
	ID               types.String `tfsdk:"id"`
	Name             types.String `tfsdk:"name"`
	TeamID           types.String `tfsdk:"team_id"`
	SizeGB           types.Int64  `tfsdk:"size_gb"`
	Public           types.Bool   `tfsdk:"public"`
	HeadCheckpointID types.String `tfsdk:"head_checkpoint_id"`
}

// fill sets the model from a platform answer.
func (m *volumeModel) fill(v *prime.Volume) {
	m.Name, m.TeamID = types.StringValue(v.Name), teamValue(v.TeamID)
	m.ID = types.StringValue(volumeID(v.Name, v.TeamID))
	m.SizeGB = types.Int64Value(int64(v.SizeGB))
	m.Public = types.BoolValue(isPublic(v.Visibility))
	m.HeadCheckpointID = types.StringPointerValue(v.HeadCheckpointID)
}

// isPublic reads a visibility [I: PUBLIC|PRIVATE, as the images API spells
// it; anything else is taken as private, which never widens access].
func isPublic(visibility string) bool { return strings.EqualFold(visibility, prime.VolumePublic) }

// visibilityOf is the visibility to send for public.
func visibilityOf(public bool) string {
	if public {
		return prime.VolumePublic
	}
	return prime.VolumePrivate
}

func teamValue(team *string) types.String {
	if team == nil || strings.TrimSpace(*team) == "" {
		return types.StringNull()
	}
	return types.StringValue(*team)
}

// volumeID is the resource ID: the name, or `<team_id>/<name>` for a team's
// volume, which is also what an import takes.
func volumeID(name string, team *string) string {
	if team == nil || *team == "" {
		return name
	}
	return *team + "/" + name
}

// parseVolumeID reads an import ID: `<name>` or `<team_id>/<name>`.
func parseVolumeID(id string) (name, team string, err error) {
	team, name, qualified := strings.Cut(id, "/")
	if !qualified {
		name, team = team, ""
	}
	if team == "" && qualified || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("import a volume by <name> or <team_id>/<name>, got %q", id)
	}
	if err := prime.ValidateVolumeName(name); err != nil {
		return "", "", err
	}
	return name, team, nil
}

// shrinkProblem explains why planning size_gb from recorded to planned is
// refused, or "". A volume only grows: the platform refuses a smaller size,
// and replacing the volume to shrink it would lose its data.
func shrinkProblem(recorded, planned int64) string {
	if planned >= recorded {
		return ""
	}
	return fmt.Sprintf("size_gb: the volume holds %d GiB and cannot shrink to %d GiB. Volumes only grow (in place); "+
		"the provider never replaces a volume to make it smaller, because the replacement would start empty and "+
		"the data would be lost. Set size_gb to %d or more (if the volume was grown outside Terraform, this records "+
		"its size); to start over with a smaller volume, destroy this one explicitly and create a new one under "+
		"another name.", recorded, planned, recorded)
}

// sizeValidator checks size_gb against the published limit (1 to 100 GiB).
type sizeValidator struct{}

func (sizeValidator) Description(context.Context) string {
	return fmt.Sprintf("must be between 1 and %d (GiB)", prime.MaxVolumeSizeGB)
}
func (v sizeValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }
func (sizeValidator) ValidateInt64(_ context.Context, req validator.Int64Request, resp *validator.Int64Response) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	n := req.ConfigValue.ValueInt64()
	if n < 1 || n > prime.MaxVolumeSizeGB {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid volume size",
			fmt.Sprintf("%s: %d GiB is not a volume size: a volume holds 1 to %d GiB.", req.Path, n, prime.MaxVolumeSizeGB))
	}
}

// nameValidator checks a volume name against the published pattern.
type nameValidator struct{}

func (nameValidator) Description(context.Context) string {
	return "1 to 40 lowercase letters, digits and hyphens, starting and ending with a letter or digit"
}
func (v nameValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }
func (nameValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if err := prime.ValidateVolumeName(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid volume name",
			fmt.Sprintf("%s: %s", req.Path, strings.TrimPrefix(err.Error(), prime.ErrInvalidRequest.Error()+": ")))
	}
}
