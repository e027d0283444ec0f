package files

import (
	"testing"

	"github.com/primeintellect/terraform-provider-prime/internal/tfkit/tfkittest"
)

// The codec converts every files model exactly as the framework's Get and
// Set do, and handles each of them.
func TestModelCodecMatchesTheFramework(t *testing.T) {
	tfkittest.CheckCodec(t, []tfkittest.CodecCase{
		{Name: "prime_sandbox_file", Schema: tfkittest.ResourceSchema(t, NewFileResource()), Model: func() any { return &sandboxFileModel{} }},
		{Name: "prime_fleet_file", Schema: tfkittest.ResourceSchema(t, NewFleetFileResource()), Model: func() any { return &fleetFileModel{} }},
		{Name: "prime_sandbox_artifact", Schema: tfkittest.ResourceSchema(t, NewArtifactResource()), Model: func() any { return &sandboxArtifactModel{} }},
		{Name: "prime_fleet_artifact", Schema: tfkittest.ResourceSchema(t, NewFleetArtifactResource()), Model: func() any { return &fleetArtifactModel{} }},
		{Name: "data prime_sandbox_file", Schema: tfkittest.DataSourceSchema(NewFileDataSource()), Model: func() any { return &sandboxFileDataModel{} }},
		{Name: "data prime_fleet_file", Schema: tfkittest.DataSourceSchema(NewFleetFileDataSource()), Model: func() any { return &fleetFileDataModel{} }},
	})
}
