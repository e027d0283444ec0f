package provider_test

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
)

// base_url without a scheme fails at plan time, naming base_url, before any
// API call.
func TestAccProvider_baseURLWithoutScheme(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		Steps: []resource.TestStep{{
			Config: `
provider "prime" {
  base_url = "api.primeintellect.ai"
  api_key  = "test-key"
}
resource "prime_sandbox" "x" {
  name         = "x"
  docker_image = "img"
}
`,
			PlanOnly:    true,
			ExpectError: acctest.ExpectErr(`base_url: "api.primeintellect.ai" is not an absolute URL`),
		}},
	})
	m.NoAPICalls(t)
}

// A cleartext base URL to a remote host from the environment is refused
// too (the API key would travel in cleartext), unless insecure_http is set.
func TestAccProvider_cleartextBaseURLFromEnvironment(t *testing.T) {
	t.Setenv("PRIME_API_BASE_URL", "http://api.example.com")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		Steps: []resource.TestStep{{
			Config: `
provider "prime" {
  api_key = "test-key"
}
data "prime_sandbox" "x" {
  id = "x"
}
`,
			ExpectError: acctest.ExpectErr(`base_url (resolved from the environment or ~/.prime/config.json): "http://api.example.com" is plain http:// to a remote host`),
		}},
	})
}
