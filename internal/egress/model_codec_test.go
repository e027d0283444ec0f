package egress

import (
	"testing"

	"github.com/primeintellect/terraform-provider-prime/internal/tfkit/tfkittest"
)

// The codec converts every egress model exactly as the framework's Get and
// Set do, and handles each of them.
func TestModelCodecMatchesTheFramework(t *testing.T) {
	tfkittest.CheckCodec(t, []tfkittest.CodecCase{
		{Name: "prime_egress_policy", Schema: tfkittest.ResourceSchema(t, NewPolicyResource()),
			Model: func() any { return &egressPolicyModel{} }},
		{Name: "prime_fleet_egress_policy", Schema: tfkittest.ResourceSchema(t, NewFleetPolicyResource()),
			Model: func() any { return &fleetEgressPolicyModel{} }},
		{Name: "data prime_egress_policy", Schema: tfkittest.DataSourceSchema(NewPolicyDataSource()),
			Model: func() any { return &egressPolicyDataModel{} }},
	})
}
