package image

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit/tfkittest"
)

func TestModelCodecMatchesTheFramework(t *testing.T) {
	tfkittest.CheckCodec(t, []tfkittest.CodecCase{
		{Name: "prime_image_vm_build", Schema: tfkittest.ResourceSchema(t, NewVMBuildResource()), Model: func() any { return &vmBuildModel{} }},
		{Name: "data prime_image", Schema: tfkittest.DataSourceSchema(NewDataSource()), Model: func() any { return &dataModel{} }},
	})
}

func TestImageName(t *testing.T) {
	null := types.StringNull()
	for _, c := range []struct {
		name               string
		reference, nm, tag types.String
		wantName, wantTag  string
		wantErr            string
	}{
		{"reference with owner and tag", types.StringValue("u1/agent:v1"), null, null, "agent", "v1", ""},
		{"reference without tag", types.StringValue("agent"), null, null, "agent", "latest", ""},
		{"name and tag", null, types.StringValue("agent"), types.StringValue("v2"), "agent", "v2", ""},
		{"name alone", null, types.StringValue("agent"), null, "agent", "latest", ""},
		{"digest refused", types.StringValue("agent@sha256:abc"), null, null, "", "", "is not [owner/]name:tag"},
		{"owner in name refused", null, types.StringValue("u1/agent"), null, "", "", `name "u1/agent" must not contain`},
		{"tag with colon refused", null, types.StringValue("agent"), types.StringValue("a:b"), "", "", `tag "a:b" must not contain`},
		{"empty name refused", null, types.StringValue(""), null, "", "", "name must not be empty"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ref, err := imageName(c.reference, c.nm, c.tag)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil || ref.Name != c.wantName || ref.Tag != c.wantTag {
				t.Fatalf("imageName = %+v, %v; want %s:%s", ref, err, c.wantName, c.wantTag)
			}
		})
	}
}

func TestReadinessOf(t *testing.T) {
	failedMsg := "no amd64 layer"
	row := func(kind, status string) prime.ImageListItem {
		return prime.ImageListItem{ArtifactType: kind, ImageName: "agent", ImageTag: "v1", Status: status}
	}
	failed := row(prime.ArtifactVM, prime.ImageBuildFailed)
	failed.ErrorMessage = &failedMsg
	for _, c := range []struct {
		name  string
		items []prime.ImageListItem
		want  vmReadiness
	}{
		{"not listed", []prime.ImageListItem{{ImageName: "other", ImageTag: "v1", ArtifactType: prime.ArtifactVM, Status: "COMPLETED"}}, vmReadiness{}},
		{"container only", []prime.ImageListItem{row("CONTAINER", "COMPLETED")}, vmReadiness{Found: true}},
		{"vm building", []prime.ImageListItem{row("CONTAINER", "COMPLETED"), row(prime.ArtifactVM, "BUILDING")}, vmReadiness{Found: true, Status: "BUILDING"}},
		{"vm ready", []prime.ImageListItem{row(prime.ArtifactVM, "COMPLETED")}, vmReadiness{Found: true, Status: "COMPLETED", Ready: true}},
		{"vm ready as the guide words it", []prime.ImageListItem{row(prime.ArtifactVM, "Ready")}, vmReadiness{Found: true, Status: "Ready", Ready: true}},
		{"vm failed", []prime.ImageListItem{failed}, vmReadiness{Found: true, Status: "FAILED", Error: failedMsg}},
		{"a ready row wins over a failed one", []prime.ImageListItem{failed, row(prime.ArtifactVM, "COMPLETED")}, vmReadiness{Found: true, Status: "COMPLETED", Ready: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := readinessOf(c.items, "agent", "v1"); got != c.want {
				t.Fatalf("readinessOf = %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestArtifactsValue(t *testing.T) {
	size, path := int64(42), "reg/agent:v1"
	l, d := artifactsValue([]prime.ImageListItem{{ArtifactType: prime.ArtifactVM, Status: "COMPLETED", SizeBytes: &size, FullImagePath: &path}})
	if d.HasError() || len(l.Elements()) != 1 {
		t.Fatalf("artifactsValue: %v %v", l, d)
	}
	attrs := l.Elements()[0].(types.Object).Attributes()
	if attrs["size_bytes"].(types.Int64).ValueInt64() != 42 || !attrs["error_message"].IsNull() || attrs["artifact_type"].(types.String).ValueString() != prime.ArtifactVM {
		t.Fatalf("artifact = %v", attrs)
	}
	if empty, d := artifactsValue(nil); d.HasError() || empty.IsNull() || len(empty.Elements()) != 0 {
		t.Fatalf("no rows must be an empty list, got %v", empty)
	}
}
