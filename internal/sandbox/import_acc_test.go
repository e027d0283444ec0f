package sandbox_test

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
)

// Importing a sandbox whose configuration sets what the platform cannot
// report (secrets_wo_version) plans an in-place update that records it,
// never a replacement.
func TestAccSandbox_importNeverReplaces(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cfg := m.Config(acctest.SandboxHCL("test", "imported", `secrets_wo = { OTHER = "wo-value" }`, "secrets_wo_version = 1"))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				Config:             cfg,
				ResourceName:       "prime_sandbox.test",
				ImportState:        true,
				ImportStateKind:    resource.ImportBlockWithID,
				ExpectNonEmptyPlan: true,
				ImportPlanChecks: resource.ImportPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox.test", plancheck.ResourceActionUpdate),
				}},
			},
		},
	})
}
