package sandbox_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// restore_memory from the pause checkpoint the platform takes when
// source_after = "pause" pauses the template: the restore continues with
// the paused shape (cpu_cores and memory_gb read back, not defaulted) and
// the second plan is empty. (From an API checkpoint the same restore is the
// 409 that TestAccRestore_memoryRefusedExplained covers.)
func TestAccRestore_memoryFromPauseCheckpoint(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cfg := m.Config(acctest.SandboxHCL("template", "template", `cpu_cores    = 2`, `memory_gb    = 4`) + `resource "prime_sandbox_command" "setup" {
  sandbox_id = prime_sandbox.template.id
  command    = "mkdir -p /opt/task && echo setup-done > /opt/task/marker"
}
resource "prime_sandbox_checkpoint" "setup" {
  sandbox_id   = prime_sandbox.template.id
  source_after = "pause"
  depends_on   = [prime_sandbox_command.setup]
}
resource "prime_sandbox" "forked" {
  name           = "forked"
  checkpoint_id  = prime_sandbox_checkpoint.setup.pause_checkpoint_id
  restore_memory = true
}` + acctest.CommandHCL("check", "prime_sandbox.forked.id", "cat /opt/task/marker"))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoCheckpoints,
		Steps: []resource.TestStep{
			{
				Config: cfg,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("prime_sandbox.forked", tfjsonpath.New("status"), knownvalue.StringExact(prime.StatusRunning)),
					statecheck.ExpectKnownValue("prime_sandbox.forked", tfjsonpath.New("cpu_cores"), knownvalue.Int64Exact(2)),
					statecheck.ExpectKnownValue("prime_sandbox.forked", tfjsonpath.New("memory_gb"), knownvalue.Float64Exact(4)),
					statecheck.ExpectKnownValue("prime_sandbox.forked", tfjsonpath.New("docker_image"), knownvalue.Null()),
					statecheck.ExpectKnownValue("prime_sandbox_command.check", tfjsonpath.New("stdout"), knownvalue.StringExact("setup-done\n")),
				},
				Check: func(*terraform.State) error {
					b := m.CreateBodies(t)[1]
					if b["restore_memory"] != true {
						return fmt.Errorf("the fork's create did not ask for memory: %v", b)
					}
					for _, k := range []string{"cpu_cores", "memory_gb", "disk_size_gb", "docker_image"} {
						if _, ok := b[k]; ok {
							return fmt.Errorf("the memory restore's create sent %s: %v", k, b)
						}
					}
					return nil
				},
			},
			{Config: cfg, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
		},
	})
}
