package tfkit

import (
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// DiagSummary renders error diagnostics as one line.
func DiagSummary(diags diag.Diagnostics) string {
	var parts []string
	for _, d := range diags.Errors() {
		parts = append(parts, d.Summary()+": "+d.Detail())
	}
	return strings.Join(parts, "; ")
}

// RequireClient reports a clear error when the provider could not be
// configured (for example because its api_key is only known after apply).
func RequireClient(c *prime.Client, diags interface {
	AddError(summary, detail string)
}) bool {
	if c == nil {
		diags.AddError("Provider not configured",
			"The prime provider has no API client: its configuration was incomplete or not yet known. "+
				"Set api_key (or PRIME_API_KEY) to a value known at plan time.")
		return false
	}
	return true
}

// Configured is what the provider's Configure hands every resource, data
// source, list resource and action: the provider owns the concrete type,
// each package asks only for what it uses, so none imports the provider.
type Configured interface {
	PrimeClient() *prime.Client
}

// ClientFrom extracts the configured client in a Configure. It reports
// nothing while the provider is not yet configured (Terraform calls
// Configure early with nil data).
func ClientFrom(data any, diags interface {
	AddError(summary, detail string)
}) *prime.Client {
	if data == nil {
		return nil
	}
	c, ok := data.(Configured)
	if !ok {
		diags.AddError("Unexpected provider data",
			fmt.Sprintf("expected the provider's configured data, got %T; this is a bug in the provider", data))
		return nil
	}
	return c.PrimeClient()
}
