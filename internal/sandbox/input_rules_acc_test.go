package sandbox_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
)

// The platform's input rules that prime-mock now enforces fail at plan,
// before any API call, naming the attribute and never echoing a value: a
// name over 100 characters, a NUL byte in a variable or secret, and one
// name both a variable and a secret.
func TestAccSandbox_platformInputRulesFailAtPlan(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"name of 101 characters", fmt.Sprintf(`name = %q`, strings.Repeat("n", 101)), `Attribute name UTF-8 character count must be at most 100, got: 101`},
		{"NUL in a variable", "name = \"x\"\nenvironment_vars = { A = \"x\\u0000y\" }", `environment_vars: the value of A must not contain NUL bytes`},
		{"NUL in a secret", "name = \"x\"\nsecrets = { TOKEN = \"x\\u0000y\" }", `secrets: the value of TOKEN must not contain NUL bytes`},
		{"variable and secret", "name = \"x\"\nenvironment_vars = { TOKEN = \"a\" }\nsecrets = { TOKEN = \"b\" }",
			`secrets: TOKEN is also in environment_vars; a name is either a variable or a secret, not both`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := mocktest.New(t, mocktest.Fast())
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: acctest.ProviderFactories(t),
				Steps: []resource.TestStep{{
					Config: m.Config(fmt.Sprintf(`
resource "prime_sandbox" "test" {
  %s
  docker_image = "img"
}
`, tc.body)),
					PlanOnly:    true,
					ExpectError: acctest.ExpectErr(tc.want),
				}},
			})
			m.NoAPICalls(t)
		})
	}
}
