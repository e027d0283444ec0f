package sandbox_test

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// A create the plan accepts and the platform's request validation refuses
// (cpu_cores above the platform's maximum, which the provider leaves to
// the platform) reads as the field and the platform's message, whichever
// shape the 422 takes: FastAPI's list, the overview's errors list, or a
// plain detail. Nothing is created.
func TestAccSandbox_validationErrorsAreReadable(t *testing.T) {
	for _, form := range []string{primemock.ValidationList, primemock.ValidationErrorsForm, primemock.ValidationString} {
		t.Run(form, func(t *testing.T) {
			o := mocktest.Fast()
			o.ValidationErrors = form
			m := mocktest.New(t, o)
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: acctest.ProviderFactories(t),
				Steps: []resource.TestStep{{
					Config: m.Config(`
resource "prime_sandbox" "vm" {
  name         = "too-big"
  docker_image = "python:3.12-slim"
  cpu_cores    = 32
}
`),
					ExpectError: acctest.ExpectErr("cpu_cores: Input should be less than or equal to 16"),
				}},
			})
			if n := m.Stats().SandboxesCreated; n != 0 {
				t.Fatalf("%d sandboxes created from a refused body", n)
			}
		})
	}
}
