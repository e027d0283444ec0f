package tfkittest

import (
	"context"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

// CodecCase is a schema and the model its Get and Set use.
type CodecCase struct {
	Name   string
	Schema func() tfsdk.State
	Model  func() any // a pointer to a zero model
}

// ResourceSchema is an empty state of r's schema.
func ResourceSchema(t *testing.T, r resource.Resource) func() tfsdk.State {
	return func() tfsdk.State {
		var resp resource.SchemaResponse
		r.Schema(context.Background(), resource.SchemaRequest{}, &resp)
		if resp.Diagnostics.HasError() {
			t.Fatal(resp.Diagnostics)
		}
		return tfsdk.State{Schema: resp.Schema}
	}
}

// DataSourceSchema is an empty state of d's schema.
func DataSourceSchema(d datasource.DataSource) func() tfsdk.State {
	return func() tfsdk.State {
		var resp datasource.SchemaResponse
		d.Schema(context.Background(), datasource.SchemaRequest{}, &resp)
		return tfsdk.State{Schema: resp.Schema}
	}
}

// CheckCodec checks that the codec converts each model exactly as the
// framework's Get and Set do (attributes all null, all unknown, or all
// known down to every nested value), and that it handles the model.
func CheckCodec(t *testing.T, cases []CodecCase) {
	ctx := context.Background()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			if !tfkit.CodecHandles(tc.Model()) {
				t.Fatal("the model is not handled by the codec: its Get and Set pay for reflection")
			}
			for i, raw := range []func(tfsdk.State) tftypes.Value{
				func(s tfsdk.State) tftypes.Value { return objectOf(ctx, s, false) },
				func(s tfsdk.State) tftypes.Value { return objectOf(ctx, s, true) },
				func(s tfsdk.State) tftypes.Value { return sampleOf(s.Schema.Type().TerraformType(ctx)) },
			} {
				unknown := []string{"null", "unknown", "known"}[i]
				s := tc.Schema()
				s.Raw = raw(s)
				viaCodec, viaFramework := tc.Model(), tc.Model()
				if d := tfkit.GetState(ctx, s, viaCodec); d.HasError() {
					t.Fatal(d)
				}
				if d := s.Get(ctx, viaFramework); d.HasError() {
					t.Fatal(d)
				}
				if !reflect.DeepEqual(viaCodec, viaFramework) {
					t.Fatalf("%s attributes: codec read %+v, framework %+v", unknown, viaCodec, viaFramework)
				}
				back, fw := tc.Schema(), tc.Schema()
				if d := tfkit.SetState(ctx, &back, viaCodec); d.HasError() {
					t.Fatal(d)
				}
				if d := fw.Set(ctx, viaFramework); d.HasError() {
					t.Fatal(d)
				}
				if !back.Raw.Equal(fw.Raw) || !back.Raw.Equal(s.Raw) {
					t.Fatalf("%s attributes: codec wrote %s, framework %s, read %s", unknown, back.Raw, fw.Raw, s.Raw)
				}
			}
		})
	}
}

// sampleOf is a known value of type t with every nested value known: a
// string "s", the number 1, true, and one element or key in collections.
func sampleOf(t tftypes.Type) tftypes.Value {
	switch {
	case t.Is(tftypes.String):
		return tftypes.NewValue(t, "s")
	case t.Is(tftypes.Number):
		return tftypes.NewValue(t, 1)
	case t.Is(tftypes.Bool):
		return tftypes.NewValue(t, true)
	case t.Is(tftypes.List{}):
		return tftypes.NewValue(t, []tftypes.Value{sampleOf(t.(tftypes.List).ElementType)})
	case t.Is(tftypes.Set{}):
		return tftypes.NewValue(t, []tftypes.Value{sampleOf(t.(tftypes.Set).ElementType)})
	case t.Is(tftypes.Map{}):
		return tftypes.NewValue(t, map[string]tftypes.Value{"k": sampleOf(t.(tftypes.Map).ElementType)})
	case t.Is(tftypes.Object{}):
		attrs := map[string]tftypes.Value{}
		for name, at := range t.(tftypes.Object).AttributeTypes {
			attrs[name] = sampleOf(at)
		}
		return tftypes.NewValue(t, attrs)
	}
	return tftypes.NewValue(t, nil)
}

// objectOf is an object of the schema's type whose attributes are all
// null, or all unknown.
func objectOf(ctx context.Context, s tfsdk.State, unknown bool) tftypes.Value {
	typ := s.Schema.Type().TerraformType(ctx).(tftypes.Object)
	attrs := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		if unknown {
			attrs[name] = tftypes.NewValue(at, tftypes.UnknownValue)
		} else {
			attrs[name] = tftypes.NewValue(at, nil)
		}
	}
	return tftypes.NewValue(typ, attrs)
}
