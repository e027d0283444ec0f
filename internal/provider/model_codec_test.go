package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"

	"github.com/primeintellect/terraform-provider-prime/internal/tfkit/tfkittest"
)

func codecCases(t *testing.T) []tfkittest.CodecCase {
	ctx := context.Background()
	res := func(r resource.Resource) func() tfsdk.State { return tfkittest.ResourceSchema(t, r) }
	return []tfkittest.CodecCase{
		{Name: "prime_sandbox_command", Schema: res(NewSandboxCommandResource()), Model: func() any { return &sandboxCommandModel{} }},
		{Name: "prime_fleet_command", Schema: res(NewFleetCommandResource()), Model: func() any { return &fleetCommandModel{} }},
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
// files and sandbox packages check their own).
func TestModelCodecMatchesTheFramework(t *testing.T) {
	tfkittest.CheckCodec(t, codecCases(t))
}
