package image

// What an image reports, shared by the data source and the vm-build
// resource: its artifacts as attributes, and which image a configuration
// names.

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// DefaultTag is the tag of a reference that names none.
const DefaultTag = "latest"

// artifactAttrTypes is one element of `artifacts`.
var artifactAttrTypes = map[string]attr.Type{
	"artifact_type":   types.StringType,
	"status":          types.StringType,
	"error_message":   types.StringType,
	"size_bytes":      types.Int64Type,
	"full_image_path": types.StringType,
}

// artifactsValue is the image list's rows for one image as `artifacts`.
func artifactsValue(rows []prime.ImageListItem) (types.List, diag.Diagnostics) {
	elems := make([]attr.Value, 0, len(rows))
	var diags diag.Diagnostics
	for _, it := range rows {
		obj, d := types.ObjectValue(artifactAttrTypes, map[string]attr.Value{
			"artifact_type":   types.StringValue(it.ArtifactType),
			"status":          types.StringValue(it.Status),
			"error_message":   types.StringPointerValue(it.ErrorMessage),
			"size_bytes":      types.Int64PointerValue(it.SizeBytes),
			"full_image_path": types.StringPointerValue(it.FullImagePath),
		})
		diags.Append(d...)
		elems = append(elems, obj)
	}
	l, d := types.ListValue(types.ObjectType{AttrTypes: artifactAttrTypes}, elems)
	diags.Append(d...)
	return l, diags
}

// vmReadiness is what the list says of an image's VM artifact.
type vmReadiness struct {
	Found  bool   // the image has rows in the list
	Status string // the VM artifact's status; "" without one
	Error  string // its error message, if any
	Ready  bool
}

// readinessOf reads the list for name:tag.
func readinessOf(items []prime.ImageListItem, name, tag string) vmReadiness {
	r := vmReadiness{Found: len(prime.Artifacts(items, name, tag)) > 0}
	if vm, ok := prime.VMArtifact(items, name, tag); ok {
		r.Status, r.Ready = vm.Status, prime.ImageArtifactReady(vm.Status)
		if vm.ErrorMessage != nil {
			r.Error = *vm.ErrorMessage
		}
	}
	return r
}

// imageName resolves the configuration's image: a reference
// ([owner/]name[:tag]) or a name and an optional tag.
func imageName(reference, name, tag types.String) (prime.ImageRef, error) {
	if !reference.IsNull() {
		return prime.ParseImageRef(reference.ValueString())
	}
	ref := prime.ImageRef{Name: name.ValueString(), Tag: tag.ValueString()}
	if ref.Tag == "" {
		ref.Tag = DefaultTag
	}
	return ref, checkNameTag(ref.Name, ref.Tag)
}

// checkNameTag is the vm-build route's rule: a name and a tag without an
// owner, so neither holds "/" or ":".
func checkNameTag(name, tag string) error {
	for _, part := range []struct{ key, v string }{{"name", name}, {"tag", tag}} {
		switch {
		case part.v == "":
			return fmt.Errorf("%s must not be empty", part.key)
		case strings.ContainsAny(part.v, "/: \t@"):
			return fmt.Errorf("%s %q must not contain \"/\", \":\", \"@\" or blanks (name the owner, if any, in reference)", part.key, part.v)
		}
	}
	return nil
}

// listFor lists the images of team (or the configured team, or the
// caller's own).
func listFor(ctx context.Context, c *prime.Client, team types.String) ([]prime.ImageListItem, error) {
	return c.ListImages(ctx, prime.ListImagesOptions{TeamID: team.ValueString()})
}
