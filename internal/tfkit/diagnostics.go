package tfkit

import (
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
