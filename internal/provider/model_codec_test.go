package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"

	"github.com/primeintellect/terraform-provider-prime/internal/tfkit/tfkittest"
)

// The provider's own model converts exactly as the framework's Get and Set
// do (attributes all null, all unknown, or all known down to every nested
// value); the egress, files, sandbox and command packages check theirs.
func TestModelCodecMatchesTheFramework(t *testing.T) {
	tfkittest.CheckCodec(t, []tfkittest.CodecCase{{Name: "provider", Schema: func() tfsdk.State {
		var resp provider.SchemaResponse
		New("test")().Schema(context.Background(), provider.SchemaRequest{}, &resp)
		return tfsdk.State{Schema: resp.Schema}
	}, Model: func() any { return &providerModel{} }}})
}
