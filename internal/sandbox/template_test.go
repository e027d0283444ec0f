package sandbox

import (
	"context"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// prime_sandbox and a fleet's template declare each template attribute with
// the same type, so one sandboxTemplate (and one create rule) serves both.
func TestTemplateAttributesMatchInBothSchemas(t *testing.T) {
	ctx := context.Background()
	schemaOf := func(r resource.Resource) map[string]attr.Type {
		var resp resource.SchemaResponse
		r.Schema(ctx, resource.SchemaRequest{}, &resp)
		types := map[string]attr.Type{}
		for name, a := range resp.Schema.Attributes {
			types[name] = a.GetType()
		}
		for name, b := range resp.Schema.Blocks {
			types[name] = b.Type()
		}
		return types
	}
	single, fleet := schemaOf(NewResource()), schemaOf(NewFleetResource())
	for _, typ := range []reflect.Type{reflect.TypeFor[sandboxSpec](), reflect.TypeFor[sandboxInputs]()} {
		for i := range typ.NumField() {
			name := typ.Field(i).Tag.Get("tfsdk")
			s, f := single[name], fleet[name]
			if s == nil || f == nil || !s.Equal(f) {
				t.Errorf("%s: prime_sandbox %v, prime_sandbox_fleet %v", name, s, f)
			}
		}
	}
}

// A model's template is its spec and inputs as they are; an import's
// inputs are all null.
func TestTemplateOfModels(t *testing.T) {
	var m sandboxModel
	m.DockerImage, m.Secrets = types.StringValue("img"), types.MapNull(types.StringType)
	var f sandboxFleetModel
	f.sandboxSpec, f.sandboxInputs = m.sandboxSpec, m.sandboxInputs
	if !reflect.DeepEqual(m.template(), f.template()) || m.template().DockerImage.ValueString() != "img" {
		t.Fatalf("templates differ: %+v / %+v", m.template(), f.template())
	}
	in := reflect.ValueOf(nullInputs())
	for i := range in.NumField() {
		if v := in.Field(i).Interface().(attr.Value); !v.IsNull() {
			t.Errorf("nullInputs().%s = %v, want null", in.Type().Field(i).Name, v)
		}
	}
}
