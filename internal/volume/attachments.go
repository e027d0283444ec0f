package volume

// Volume attachments: the list of volumes a sandbox declares at create
// ({name, mount_path, read_only}, at most 8). The sandbox resources put
// AttachmentsAttribute in their schema, call ValidateAttachments at plan
// and send MountsOf. [I] The element shape of the create request's
// `volumes` is not published; this is the CLI's --volume
// NAME:/mount/path[:ro] as an object, kept minimal.

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

var attachmentAttrTypes = map[string]attr.Type{
	"name": types.StringType, "mount_path": types.StringType, "read_only": types.BoolType,
}

// AttachmentType is the element type of an attachment list.
func AttachmentType() types.ObjectType { return types.ObjectType{AttrTypes: attachmentAttrTypes} }

// AttachmentsAttribute is the `volumes` argument of a sandbox resource.
// replaces says what a change does there (a create field: it replaces the
// sandbox, or the fleet's members).
func AttachmentsAttribute(replaces string) schema.ListNestedAttribute {
	return schema.ListNestedAttribute{
		Optional: true,
		MarkdownDescription: fmt.Sprintf("Volumes (`prime_volume`) to attach at create, at most %d. Each sandbox gets a "+
			"private copy of the volume's latest published checkpoint at its mount path; its writes stay its own "+
			"until published. Checked at plan: names, absolute and clean mount paths (not `/`), no volume or mount "+
			"path twice. %s", prime.MaxVolumesPerSandbox, replaces),
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"name": schema.StringAttribute{Required: true,
				MarkdownDescription: "The volume: its name, or `<owner>/<name>` for another owner's public volume."},
			"mount_path": schema.StringAttribute{Required: true,
				MarkdownDescription: "Absolute path in the sandbox where the copy is mounted."},
			"read_only": schema.BoolAttribute{Optional: true,
				MarkdownDescription: "Mount read-only (the sandbox can neither write nor publish it). Default `false`: read-write."},
		}},
	}
}

// ValidateAttachments checks an attachment list at p, before any API call:
// the same rules the client applies to a create (prime.VolumeMountRules),
// reported at the attribute. Lists not yet known are checked at apply.
func ValidateAttachments(p path.Path, v types.List, diags *diag.Diagnostics) {
	mounts, known := MountsOf(v)
	if !known {
		return
	}
	for _, msg := range prime.VolumeMountRules(mounts) {
		diags.AddAttributeError(p, "Invalid volume attachment", fmt.Sprintf("%s: %s", p, msg))
	}
}

// MountsOf reads an attachment list as the create request's volumes; known
// is false while any part of it is unknown. A null list is none.
func MountsOf(v types.List) (mounts []prime.VolumeMount, known bool) {
	if v.IsUnknown() {
		return nil, false
	}
	for _, e := range tfkit.ObjectsOf(v) {
		obj, ok := e.(types.Object)
		if !ok || obj.IsUnknown() {
			return nil, false
		}
		a := obj.Attributes()
		name, mountPath, ro := tfkit.StringAttr(a, "name"), tfkit.StringAttr(a, "mount_path"), tfkit.BoolAttr(a, "read_only")
		if name.IsUnknown() || mountPath.IsUnknown() || ro.IsUnknown() {
			return nil, false
		}
		mounts = append(mounts, prime.VolumeMount{Name: name.ValueString(), MountPath: mountPath.ValueString(), ReadOnly: ro.ValueBool()})
	}
	return mounts, true
}

// AttachmentsValue is mounts as an attachment list (read back into state).
func AttachmentsValue(mounts []prime.VolumeMount) types.List {
	elems := make([]attr.Value, len(mounts))
	for i, m := range mounts {
		elems[i] = types.ObjectValueMust(attachmentAttrTypes, map[string]attr.Value{
			"name": types.StringValue(m.Name), "mount_path": types.StringValue(m.MountPath), "read_only": types.BoolValue(m.ReadOnly),
		})
	}
	return types.ListValueMust(AttachmentType(), elems)
}
