package provider

import (
	"context"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

// codecCase is a schema and the model its Get and Set use.
type codecCase struct {
	name   string
	schema func() tfsdk.State
	model  func() any // a pointer to a zero model
}

func codecCases(t *testing.T) []codecCase {
	ctx := context.Background()
	res := func(r resource.Resource) func() tfsdk.State {
		return func() tfsdk.State {
			var resp resource.SchemaResponse
			r.Schema(ctx, resource.SchemaRequest{}, &resp)
			if resp.Diagnostics.HasError() {
				t.Fatal(resp.Diagnostics)
			}
			return tfsdk.State{Schema: resp.Schema}
		}
	}
	ds := func(d datasource.DataSource) func() tfsdk.State {
		return func() tfsdk.State {
			var resp datasource.SchemaResponse
			d.Schema(ctx, datasource.SchemaRequest{}, &resp)
			return tfsdk.State{Schema: resp.Schema}
		}
	}
	return []codecCase{
		{name: "prime_sandbox", schema: res(NewSandboxResource()), model: func() any { return &sandboxModel{} }},
		{name: "prime_egress_policy", schema: res(NewEgressPolicyResource()), model: func() any { return &egressPolicyModel{} }},
		{name: "prime_sandbox_command", schema: res(NewSandboxCommandResource()), model: func() any { return &sandboxCommandModel{} }},
		{name: "prime_sandbox_fleet", schema: res(NewSandboxFleetResource()), model: func() any { return &sandboxFleetModel{} }},
		{name: "prime_fleet_command", schema: res(NewFleetCommandResource()), model: func() any { return &fleetCommandModel{} }},
		{name: "prime_fleet_egress_policy", schema: res(NewFleetEgressPolicyResource()), model: func() any { return &fleetEgressPolicyModel{} }},
		{name: "prime_sandbox_file", schema: res(NewSandboxFileResource()), model: func() any { return &sandboxFileModel{} }},
		{name: "prime_fleet_file", schema: res(NewFleetFileResource()), model: func() any { return &fleetFileModel{} }},
		{name: "prime_sandbox_artifact", schema: res(NewSandboxArtifactResource()), model: func() any { return &sandboxArtifactModel{} }},
		{name: "prime_fleet_artifact", schema: res(NewFleetArtifactResource()), model: func() any { return &fleetArtifactModel{} }},
		{name: "data prime_sandbox_file", schema: ds(NewSandboxFileDataSource()), model: func() any { return &sandboxFileDataModel{} }},
		{name: "data prime_fleet_file", schema: ds(NewFleetFileDataSource()), model: func() any { return &fleetFileDataModel{} }},
		{name: "data prime_sandbox", schema: ds(NewSandboxDataSource()), model: func() any { return &sandboxAttributes{} }},
		{name: "data prime_egress_policy", schema: ds(NewEgressPolicyDataSource()), model: func() any { return &egressPolicyDataModel{} }},
		{name: "data prime_sandboxes", schema: ds(NewSandboxesDataSource()), model: func() any { return &sandboxesModel{} }},
		{name: "provider", schema: func() tfsdk.State {
			var resp provider.SchemaResponse
			New("test")().Schema(ctx, provider.SchemaRequest{}, &resp)
			return tfsdk.State{Schema: resp.Schema}
		}, model: func() any { return &providerModel{} }},
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

// The codec converts every model exactly as the framework's Get and Set do
// (attributes all null, all unknown, or all known down to every nested
// value), and handles every model of the provider.
func TestModelCodecMatchesTheFramework(t *testing.T) {
	ctx := context.Background()
	for _, tc := range codecCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			if !tfkit.CodecHandles(tc.model()) {
				t.Fatal("the model is not handled by the codec: its Get and Set pay for reflection")
			}
			for i, raw := range []func(tfsdk.State) tftypes.Value{
				func(s tfsdk.State) tftypes.Value { return objectOf(ctx, s, false) },
				func(s tfsdk.State) tftypes.Value { return objectOf(ctx, s, true) },
				func(s tfsdk.State) tftypes.Value { return sampleOf(s.Schema.Type().TerraformType(ctx)) },
			} {
				unknown := []string{"null", "unknown", "known"}[i]
				s := tc.schema()
				s.Raw = raw(s)
				viaCodec, viaFramework := tc.model(), tc.model()
				if d := tfkit.GetState(ctx, s, viaCodec); d.HasError() {
					t.Fatal(d)
				}
				if d := s.Get(ctx, viaFramework); d.HasError() {
					t.Fatal(d)
				}
				if !reflect.DeepEqual(viaCodec, viaFramework) {
					t.Fatalf("%s attributes: codec read %+v, framework %+v", unknown, viaCodec, viaFramework)
				}
				back, fw := tc.schema(), tc.schema()
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

// A null state goes to the framework, which reports it.
func TestModelCodecLeavesANullStateToTheFramework(t *testing.T) {
	ctx := context.Background()
	s := codecCases(t)[0].schema()
	s.Raw = tftypes.NewValue(s.Schema.Type().TerraformType(ctx), nil)
	var m sandboxModel
	if d := tfkit.GetState(ctx, s, &m); !d.HasError() {
		t.Fatal("reading a null state into a model must fail as the framework's Get does")
	}
}
