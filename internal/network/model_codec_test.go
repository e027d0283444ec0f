package network

import (
	"testing"

	"github.com/primeintellect/terraform-provider-prime/internal/tfkit/tfkittest"
)

// The codec converts every network model exactly as the framework's Get
// and Set do, and handles each of them.
func TestModelCodecMatchesTheFramework(t *testing.T) {
	tfkittest.CheckCodec(t, []tfkittest.CodecCase{
		{Name: "prime_sandbox_network", Schema: tfkittest.ResourceSchema(t, NewNetworkResource()),
			Model: func() any { return &networkModel{} }},
		{Name: "prime_sandbox_network_member", Schema: tfkittest.ResourceSchema(t, NewMemberResource()),
			Model: func() any { return &memberModel{} }},
		{Name: "data prime_sandbox_network", Schema: tfkittest.DataSourceSchema(NewNetworkDataSource()),
			Model: func() any { return &networkDataModel{} }},
	})
}
