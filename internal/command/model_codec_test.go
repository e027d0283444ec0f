package command

import (
	"testing"

	"github.com/primeintellect/terraform-provider-prime/internal/tfkit/tfkittest"
)

// The codec converts the command resources' models exactly as the
// framework's Get and Set do.
func TestModelCodecMatchesTheFramework(t *testing.T) {
	tfkittest.CheckCodec(t, []tfkittest.CodecCase{
		{Name: "prime_sandbox_command", Schema: tfkittest.ResourceSchema(t, NewResource()), Model: func() any { return &sandboxCommandModel{} }},
		{Name: "prime_fleet_command", Schema: tfkittest.ResourceSchema(t, NewFleetResource()), Model: func() any { return &fleetCommandModel{} }},
	})
}
