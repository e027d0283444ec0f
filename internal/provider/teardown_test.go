package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

// Teardown is never held hostage: with the data plane stalled after the
// apply (never_apply), destroying a sandbox and its policy leaves no
// sandbox running. The policy's restore is accepted but never enforced; its
// destroy completes with a warning instead of failing, so the sandbox's
// destroy runs. (CheckDestroy runs after the harness's destroy.)
func TestAccTeardown_stalledDataPlaneStillDeletesTheSandbox(t *testing.T) {
	m := newTestMock(t, fastMockOptions())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories(t),
		CheckDestroy:             m.checkNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config: m.config(vmSandbox + policyHCL(`allow = ["example.com"]`, `timeouts { delete = "1s" }`)),
			Check: func(*terraform.State) error {
				m.SetNeverApply(true) // stalls before the harness's destroy
				return nil
			},
		}},
	})
}

// The same for a fleet and its fleet policy.
func TestAccTeardown_stalledDataPlaneStillDeletesTheFleet(t *testing.T) {
	m := newTestMock(t, fastMockOptions())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories(t),
		CheckDestroy:             m.checkNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config: m.config(`
resource "prime_sandbox_fleet" "eval" {
  name_prefix  = "teardown"
  size         = 3
  docker_image = "python:3.12-slim"
  vm           = true
}

resource "prime_fleet_egress_policy" "lock" {
  sandbox_ids = prime_sandbox_fleet.eval.sandbox_ids
  allow       = ["example.com"]
  timeouts {
    delete = "1s"
  }
}
`),
			Check: func(*terraform.State) error {
				m.SetNeverApply(true)
				return nil
			},
		}},
	})
}

// The other path of the reuse guard: a KEPT sandbox whose policy goes while
// the data plane stalls is not left restricted for its next setup — the
// setup (require_open_egress) refuses to run while the restore is pending,
// and runs, with the network open, once the data plane has caught up.
func TestAccTeardown_keptSandboxRefusesSetupWhileRestorePending(t *testing.T) {
	m := newTestMock(t, fastMockOptions())
	setup := func(version string) string {
		return fmt.Sprintf(`
resource "prime_sandbox_command" "setup" {
  sandbox_id          = prime_sandbox.vm.id
  command             = "echo setup %s && probe pypi.org"
  require_open_egress = true
}
`, version)
	}
	lock := `
resource "prime_egress_policy" "agent" {
  sandbox_id = prime_sandbox.vm.id
  allow      = ["example.com"]
  after      = [prime_sandbox_command.setup.id]
  timeouts {
    delete = "1s"
  }
}
`
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories(t),
		CheckDestroy:             m.checkNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: m.config(vmSandbox + setup("v1") + lock),
			},
			{
				// The lock goes and the setup changes, with the data plane
				// stalled: the policy's destroy completes, the new setup
				// refuses (the previous lock still holds), the sandbox stays.
				PreConfig: func() { m.SetNeverApply(true) },
				Config:    m.config(vmSandbox + setup("v2")),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_egress_policy.agent", plancheck.ResourceActionDestroy),
					plancheck.ExpectResourceAction("prime_sandbox.vm", plancheck.ResourceActionNoop),
				}},
				ExpectError: expectInOrder(`Egress is restricted`, `is accepted and not yet enforced`, `the restriction before it still holds, so the command was not run`),
			},
			{
				// The data plane catches up: the setup runs open.
				PreConfig: func() { m.SetNeverApply(false) },
				Config:    m.config(vmSandbox + setup("v2")),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("prime_sandbox_command.setup", "exit_code", "0"),
					resource.TestCheckResourceAttr("prime_sandbox_command.setup", "stdout", "setup v2\n"),
				),
			},
		},
	})
}
