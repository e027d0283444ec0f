package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit/tfkittest"
)

func codecCases(t *testing.T) []tfkittest.CodecCase {
	ctx := context.Background()
	res := func(r resource.Resource) func() tfsdk.State { return tfkittest.ResourceSchema(t, r) }
	ds := tfkittest.DataSourceSchema
	return []tfkittest.CodecCase{
		{Name: "prime_sandbox", Schema: res(NewSandboxResource()), Model: func() any { return &sandboxModel{} }},
		{Name: "prime_sandbox_command", Schema: res(NewSandboxCommandResource()), Model: func() any { return &sandboxCommandModel{} }},
		{Name: "prime_sandbox_fleet", Schema: res(NewSandboxFleetResource()), Model: func() any { return &sandboxFleetModel{} }},
		{Name: "prime_fleet_command", Schema: res(NewFleetCommandResource()), Model: func() any { return &fleetCommandModel{} }},
		{Name: "data prime_sandbox", Schema: ds(NewSandboxDataSource()), Model: func() any { return &sandboxAttributes{} }},
		{Name: "data prime_sandboxes", Schema: ds(NewSandboxesDataSource()), Model: func() any { return &sandboxesModel{} }},
		{Name: "provider", Schema: func() tfsdk.State {
			var resp provider.SchemaResponse
			New("test")().Schema(ctx, provider.SchemaRequest{}, &resp)
			return tfsdk.State{Schema: resp.Schema}
		}, Model: func() any { return &providerModel{} }},
	}
}

// The codec converts every model exactly as the framework's Get and Set do
// (attributes all null, all unknown, or all known down to every nested
// value), and handles every model of the provider (the egress
// and files packages check their own).
func TestModelCodecMatchesTheFramework(t *testing.T) {
	tfkittest.CheckCodec(t, codecCases(t))
}

// A null state goes to the framework, which reports it.
func TestModelCodecLeavesANullStateToTheFramework(t *testing.T) {
	ctx := context.Background()
	s := codecCases(t)[0].Schema()
	s.Raw = tftypes.NewValue(s.Schema.Type().TerraformType(ctx), nil)
	var m sandboxModel
	if d := tfkit.GetState(ctx, s, &m); !d.HasError() {
		t.Fatal("reading a null state into a model must fail as the framework's Get does")
	}
}
