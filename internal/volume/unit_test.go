package volume

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

func TestShrinkProblem(t *testing.T) {
	for _, c := range []struct {
		recorded, planned int64
		want              string
	}{
		{10, 10, ""}, {10, 20, ""},
		{20, 10, "size_gb: the volume holds 20 GiB and cannot shrink to 10 GiB"},
		{2, 1, "Set size_gb to 2 or more"},
	} {
		got := shrinkProblem(c.recorded, c.planned)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("shrinkProblem(%d, %d) = %q, want %q", c.recorded, c.planned, got, c.want)
		}
	}
}

func TestSizeAndNameValidators(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		v    types.Int64
		want string
	}{
		{types.Int64Value(1), ""}, {types.Int64Value(100), ""}, {types.Int64Unknown(), ""},
		{types.Int64Value(0), "size_gb: 0 GiB is not a volume size: a volume holds 1 to 100 GiB."},
		{types.Int64Value(101), "size_gb: 101 GiB is not a volume size"},
	} {
		var resp validator.Int64Response
		sizeValidator{}.ValidateInt64(ctx, validator.Int64Request{Path: path.Root("size_gb"), ConfigValue: c.v}, &resp)
		if got := errorsOf(resp.Diagnostics); (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("size %s: %q, want %q", c.v, got, c.want)
		}
	}
	for _, c := range []struct{ name, want string }{
		{"data", ""}, {"a-1", ""}, {"Data", `name: volume name "Data": use 1 to 40 lowercase`}, {"-a", "volume name"},
		{strings.Repeat("a", 41), "volume name"}, {"a/b", "volume name"},
	} {
		var resp validator.StringResponse
		nameValidator{}.ValidateString(ctx, validator.StringRequest{Path: path.Root("name"), ConfigValue: types.StringValue(c.name)}, &resp)
		if got := errorsOf(resp.Diagnostics); (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("name %q: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestVolumeIDs(t *testing.T) {
	team := "team-1"
	if volumeID("data", nil) != "data" || volumeID("data", &team) != "team-1/data" {
		t.Error("volumeID")
	}
	for _, c := range []struct{ id, name, team, err string }{
		{"data", "data", "", ""}, {"team-1/data", "data", "team-1", ""},
		{"/data", "", "", "import a volume by"}, {"a/b/c", "", "", "import a volume by"}, {"Bad", "", "", "volume name"},
	} {
		name, team, err := parseVolumeID(c.id)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("parseVolumeID(%q) err = %v, want %q", c.id, err, c.err)
			}
			continue
		}
		if err != nil || name != c.name || team != c.team {
			t.Errorf("parseVolumeID(%q) = %q, %q, %v", c.id, name, team, err)
		}
	}
	if !isPublic("PUBLIC") || !isPublic("public") || isPublic("PRIVATE") || isPublic("") {
		t.Error("isPublic")
	}
	if visibilityOf(true) != prime.VolumePublic || visibilityOf(false) != prime.VolumePrivate {
		t.Error("visibilityOf")
	}
}

func attachment(name, mount string, ro attr.Value) attr.Value {
	return types.ObjectValueMust(attachmentAttrTypes, map[string]attr.Value{
		"name": types.StringValue(name), "mount_path": types.StringValue(mount), "read_only": ro,
	})
}

// The attachment check is the client's create rule, reported at the
// attribute before any API call.
func TestValidateAttachments(t *testing.T) {
	null := types.BoolNull()
	many := make([]attr.Value, 9)
	for i := range many {
		many[i] = attachment("v"+string(rune('a'+i)), "/mnt/"+string(rune('a'+i)), null)
	}
	for _, c := range []struct {
		name string
		list types.List
		want []string
	}{
		{"valid", types.ListValueMust(AttachmentType(), []attr.Value{attachment("data", "/data", null), attachment("owner/models", "/models", types.BoolValue(true))}), nil},
		{"null", types.ListNull(AttachmentType()), nil},
		{"unknown", types.ListUnknown(AttachmentType()), nil},
		{"nine", types.ListValueMust(AttachmentType(), many), []string{"volumes: at most 8 volumes per sandbox, got 9"}},
		{"relative", types.ListValueMust(AttachmentType(), []attr.Value{attachment("data", "data", null)}), []string{`the mount path "data" must be absolute`}},
		{"root", types.ListValueMust(AttachmentType(), []attr.Value{attachment("data", "/", null)}), []string{"cannot be mounted over the root"}},
		{"unclean", types.ListValueMust(AttachmentType(), []attr.Value{attachment("data", "/a/../b", null)}), []string{"must be clean"}},
		{"twice", types.ListValueMust(AttachmentType(), []attr.Value{attachment("data", "/a", null), attachment("data", "/a", null)}),
			[]string{`volume "data" is attached twice`, "two volumes are mounted at /a"}},
		{"bad name", types.ListValueMust(AttachmentType(), []attr.Value{attachment("Data", "/a", null)}), []string{`"Data" is not a volume name`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var diags diag.Diagnostics
			ValidateAttachments(path.Root("volumes"), c.list, &diags)
			got := errorsOf(diags)
			if len(diags.Errors()) != len(c.want) {
				t.Fatalf("errors %q, want %d", got, len(c.want))
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("errors %q lack %q", got, w)
				}
			}
		})
	}
	mounts, known := MountsOf(types.ListValueMust(AttachmentType(), []attr.Value{attachment("data", "/data", types.BoolValue(true))}))
	if !known || len(mounts) != 1 || mounts[0] != (prime.VolumeMount{Name: "data", MountPath: "/data", ReadOnly: true}) {
		t.Errorf("MountsOf = %v %v", mounts, known)
	}
	if back, _ := MountsOf(AttachmentsValue(mounts)); len(back) != 1 || back[0] != mounts[0] {
		t.Errorf("AttachmentsValue round trip = %v", back)
	}
}

func errorsOf(d diag.Diagnostics) string {
	var out []string
	for _, e := range d.Errors() {
		out = append(out, e.Detail())
	}
	return strings.Join(out, "\n")
}
