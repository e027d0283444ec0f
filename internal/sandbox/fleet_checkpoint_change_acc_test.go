package sandbox_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// setupOnceFleetHCL is setup once by hand: a template the checkpoint
// retires, its setup (setup is the command), the checkpoint with
// create_before_destroy on the chain, a fleet restored from it, and an
// agent that reads the setup's marker.
func setupOnceFleetHCL(version, setup string) string {
	return fmt.Sprintf(`
resource "prime_sandbox" "template" {
  name                    = "template-%[1]s"
  docker_image            = "python:3.12-slim"
  retire_after_checkpoint = true
  lifecycle {
    create_before_destroy = true
  }
}

resource "prime_sandbox_command" "setup" {
  sandbox_id = prime_sandbox.template.id
  command    = %[2]q
  lifecycle {
    create_before_destroy = true
  }
}

resource "prime_sandbox_checkpoint" "setup" {
  sandbox_id   = prime_sandbox.template.id
  source_after = "delete"
  triggers     = { setup = prime_sandbox_command.setup.id }
  lifecycle {
    create_before_destroy = true
  }
}

resource "prime_sandbox_fleet" "members" {
  name_prefix   = "member"
  size          = 2
  checkpoint_id = prime_sandbox_checkpoint.setup.id
}

resource "prime_fleet_command" "agent" {
  sandbox_ids = prime_sandbox_fleet.members.sandbox_ids
  commands    = ["cat /opt/setup/marker"]
}
`, version, setup)
}

func markerSetup(v string) string {
	return "mkdir -p /opt/setup && echo " + v + " > /opt/setup/marker"
}

// restoredMemberIDs reads the fleet's sandbox_ids from state.
func restoredMemberIDs(s *terraform.State) map[string]string {
	a := s.RootModule().Resources["prime_sandbox_fleet.members"].Primary.Attributes
	return map[string]string{"0": a["sandbox_ids.0"], "1": a["sandbox_ids.1"]}
}

// A fleet restored from another checkpoint is updated in place, after the
// new checkpoint is DURABLE: no member is deleted before that (the mock's
// log), each is restored from the new checkpoint, and the agent reads the
// new setup's marker. A new setup that fails leaves every member, and the
// checkpoint they came from, as they were; the fixed setup then converges.
// (A changed checkpoint_id replaced the fleet, whose destroy came first:
// a failing setup left the evaluation with no members.)
func TestAccSandboxFleet_newCheckpointRestoresInPlaceAfterDurable(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	var before map[string]string
	var durableCk string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoCheckpoints,
		Steps: []resource.TestStep{
			{
				Config: m.Config(setupOnceFleetHCL("v1", markerSetup("v1"))),
				Check: func(s *terraform.State) error {
					before = restoredMemberIDs(s)
					return nil
				},
			},
			{
				Config: m.Config(setupOnceFleetHCL("v2", markerSetup("v2"))),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox_fleet.members", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("prime_sandbox_checkpoint.setup", plancheck.ResourceActionCreateBeforeDestroy),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("prime_fleet_command.agent", "results.0.steps.0.stdout", "v2"),
					resource.TestCheckResourceAttr("prime_fleet_command.agent", "results.1.steps.0.stdout", "v2"),
					func(s *terraform.State) error {
						after := restoredMemberIDs(s)
						for k, id := range after {
							if id == before[k] {
								return fmt.Errorf("member %s was not restored again (%s)", k, id)
							}
						}
						durableCk = s.RootModule().Resources["prime_sandbox_checkpoint.setup"].Primary.ID
						if err := acctest.MembersDeletedAfterDurable(m.Events(), before, durableCk); err != nil {
							return err
						}
						before = after
						return nil
					},
				),
			},
			{Config: m.Config(setupOnceFleetHCL("v2", markerSetup("v2"))), PlanOnly: true},
			{
				// A new setup that fails: the members and their checkpoint stay.
				Config:      m.Config(setupOnceFleetHCL("v3", "echo broken && exit 3")),
				ExpectError: acctest.ExpectErr("exit"),
			},
			{
				Config: m.Config(setupOnceFleetHCL("v3", "echo broken && exit 3")),
				PreConfig: func() {
					for k, id := range before {
						if st := m.Status(t, id); st != prime.StatusRunning {
							t.Errorf("member %s (%s) is %s after the failed setup, want it untouched", k, id, st)
						}
					}
					if _, err := m.Client(t).GetCheckpoint(mocktest.WaitCtx(t), durableCk); err != nil {
						t.Errorf("the members' checkpoint %s is gone after the failed setup: %v", durableCk, err)
					}
				},
				ExpectError: acctest.ExpectErr("exit"),
			},
			{
				Config: m.Config(setupOnceFleetHCL("v4", markerSetup("v4"))),
				Check:  resource.TestCheckResourceAttr("prime_fleet_command.agent", "results.0.steps.0.stdout", "v4"),
			},
			{Config: m.Config(setupOnceFleetHCL("v4", markerSetup("v4"))), PlanOnly: true},
		},
	})
}
