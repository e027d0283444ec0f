package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// setupOnceHCL is a template sandbox whose trusted setup writes a marker
// (network open), its checkpoint (after the setup), and the rest.
func setupOnceHCL(rest string) string {
	return `
resource "prime_sandbox" "template" {
  name         = "template"
  docker_image = "python:3.12-slim"
}
resource "prime_sandbox_command" "setup" {
  sandbox_id = prime_sandbox.template.id
  command    = "mkdir -p /opt/task && echo setup-done > /opt/task/marker"
}
resource "prime_sandbox_checkpoint" "setup" {
  sandbox_id = prime_sandbox.template.id
  depends_on = [prime_sandbox_command.setup]
}
` + rest
}

// A sandbox restored from a checkpoint has the source's files, takes the
// checkpoint's image and disk (docker_image stays null, nothing is sent for
// either), and plans nothing the second time.
func TestAccRestore_sandboxFromCheckpoint(t *testing.T) {
	m := newTestMock(t, fastMockOptions())
	cfg := m.config(setupOnceHCL(`
resource "prime_sandbox" "restored" {
  name          = "restored"
  checkpoint_id = prime_sandbox_checkpoint.setup.id
}
resource "prime_sandbox_command" "check" {
  sandbox_id = prime_sandbox.restored.id
  command    = "cat /opt/task/marker"
}
`))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories(t),
		CheckDestroy:             m.checkNoCheckpoints,
		Steps: []resource.TestStep{
			{
				Config: cfg,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("prime_sandbox.restored", tfjsonpath.New("docker_image"), knownvalue.Null()),
					statecheck.ExpectKnownValue("prime_sandbox.restored", tfjsonpath.New("disk_size_gb"), knownvalue.NotNull()),
					statecheck.ExpectKnownValue("prime_sandbox.restored", tfjsonpath.New("status"), knownvalue.StringExact("RUNNING")),
					statecheck.ExpectKnownValue("prime_sandbox_command.check", tfjsonpath.New("stdout"), knownvalue.StringExact("setup-done\n")),
				},
				Check: func(*terraform.State) error {
					bodies := m.createBodies(t)
					if len(bodies) != 2 {
						return fmt.Errorf("%d creates, want 2", len(bodies))
					}
					b := bodies[1]
					for _, k := range []string{"docker_image", "disk_size_gb", "network_allowlist", "restore_memory"} {
						if _, ok := b[k]; ok {
							return fmt.Errorf("the restore's create sent %s: %v", k, b)
						}
					}
					if b["checkpoint_id"] == nil {
						return fmt.Errorf("the restore's create has no checkpoint_id: %v", b)
					}
					return nil
				},
			},
			{
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
			},
		},
	})
}
