package sandbox

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit/tfkittest"
)

// The codec converts the sandbox domain's models exactly as the framework's
// Get and Set do.
func TestModelCodecMatchesTheFramework(t *testing.T) {
	res := func(r resource.Resource) func() tfsdk.State { return tfkittest.ResourceSchema(t, r) }
	ds := tfkittest.DataSourceSchema
	tfkittest.CheckCodec(t, []tfkittest.CodecCase{
		{Name: "prime_sandbox", Schema: res(NewResource()), Model: func() any { return &sandboxModel{} }},
		{Name: "prime_sandbox_fleet", Schema: res(NewFleetResource()), Model: func() any { return &sandboxFleetModel{} }},
		{Name: "data prime_sandbox", Schema: ds(NewDataSource()), Model: func() any { return &sandboxAttributes{} }},
		{Name: "data prime_sandboxes", Schema: ds(NewSandboxesDataSource()), Model: func() any { return &sandboxesModel{} }},
	})
}

// A null state goes to the framework, which reports it.
func TestModelCodecLeavesANullStateToTheFramework(t *testing.T) {
	ctx := context.Background()
	s := tfkittest.ResourceSchema(t, NewResource())()
	s.Raw = tftypes.NewValue(s.Schema.Type().TerraformType(ctx), nil)
	var m sandboxModel
	if d := tfkit.GetState(ctx, s, &m); !d.HasError() {
		t.Fatal("reading a null state into a model must fail as the framework's Get does")
	}
}
