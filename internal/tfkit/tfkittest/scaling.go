package tfkittest

import (
	"context"
	"runtime"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// PlanSnapshot is what a no-change plan of a resource with n members
// starts from: its prior state (also Terraform's proposed new state, as
// when nothing changed) and its configuration, attribute by attribute;
// attributes left out are null.
type PlanSnapshot func(n int) (state, config map[string]tftypes.Value)

// PlanBytesPerMember runs, for each n, the no-change plan of newResource
// with n members through the framework's protocol server, as Terraform's
// second plan does, and returns the bytes it allocated per member (the
// second of two runs; the first warms caches up). Allocated bytes do not
// depend on the machine's load, so a test can compare them across n: a
// plan whose work per member grows with n allocates more per member at a
// larger n.
func PlanBytesPerMember(t *testing.T, newResource func() resource.Resource, snapshot PlanSnapshot, ns ...int) []float64 {
	t.Helper()
	ctx := context.Background()
	server, err := providerserver.NewProtocol6WithError(&oneResourceProvider{newResource: newResource})()
	if err != nil {
		t.Fatal(err)
	}
	var md resource.MetadataResponse
	newResource().Metadata(ctx, resource.MetadataRequest{ProviderTypeName: oneResourceProviderName}, &md)
	schemas, err := server.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil || schemas.ResourceSchemas[md.TypeName] == nil {
		t.Fatalf("schema of %s: %v %v", md.TypeName, err, schemas.Diagnostics)
	}
	typ := schemas.ResourceSchemas[md.TypeName].ValueType().(tftypes.Object)
	if _, err := server.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{Config: dynamicValue(t, tftypes.Object{}, map[string]tftypes.Value{})}); err != nil {
		t.Fatal(err)
	}
	out := make([]float64, 0, len(ns))
	for _, n := range ns {
		stateVals, configVals := snapshot(n)
		state := dynamicValue(t, typ, stateVals)
		req := &tfprotov6.PlanResourceChangeRequest{
			TypeName: md.TypeName, PriorState: state, ProposedNewState: state,
			Config: dynamicValue(t, typ, configVals),
		}
		var bytes uint64
		for range 2 {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			resp, err := server.PlanResourceChange(ctx, req)
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range resp.Diagnostics {
				if d.Severity == tfprotov6.DiagnosticSeverityError {
					t.Fatalf("plan with %d members: %s: %s", n, d.Summary, d.Detail)
				}
			}
			bytes = after.TotalAlloc - before.TotalAlloc
		}
		out = append(out, float64(bytes)/float64(n))
	}
	return out
}

// dynamicValue is typ's value with vals, every other attribute null.
func dynamicValue(t *testing.T, typ tftypes.Object, vals map[string]tftypes.Value) *tfprotov6.DynamicValue {
	t.Helper()
	all := make(map[string]tftypes.Value, len(typ.AttributeTypes))
	for name, at := range typ.AttributeTypes {
		if v, ok := vals[name]; ok {
			all[name] = v
		} else {
			all[name] = tftypes.NewValue(at, nil)
		}
	}
	dv, err := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, all))
	if err != nil {
		t.Fatal(err)
	}
	return &dv
}

const oneResourceProviderName = "prime"

// oneResourceProvider serves one resource and configures nothing.
type oneResourceProvider struct {
	newResource func() resource.Resource
}

func (p *oneResourceProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = oneResourceProviderName
}

func (p *oneResourceProvider) Schema(context.Context, provider.SchemaRequest, *provider.SchemaResponse) {
}

func (p *oneResourceProvider) Configure(context.Context, provider.ConfigureRequest, *provider.ConfigureResponse) {
}

func (p *oneResourceProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{p.newResource}
}

func (p *oneResourceProvider) DataSources(context.Context) []func() datasource.DataSource { return nil }
