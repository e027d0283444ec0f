package volume

import (
	"testing"

	"github.com/primeintellect/terraform-provider-prime/internal/tfkit/tfkittest"
)

// The codec converts the volume model exactly as the framework's Get and
// Set do, for the resource and the data source that share it.
func TestModelCodecMatchesTheFramework(t *testing.T) {
	tfkittest.CheckCodec(t, []tfkittest.CodecCase{
		{Name: "prime_volume", Schema: tfkittest.ResourceSchema(t, NewVolumeResource()),
			Model: func() any { return &volumeModel{} }},
		{Name: "data prime_volume", Schema: tfkittest.DataSourceSchema(NewVolumeDataSource()),
			Model: func() any { return &volumeModel{} }},
	})
}
