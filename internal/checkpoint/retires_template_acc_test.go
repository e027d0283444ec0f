package checkpoint_test

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

// retiredTemplateHCL is setup once with a template the checkpoint retires:
// a file and a setup command in the template, its checkpoint with
// source_after = "delete", and a sandbox restored from it. setup is the
// setup's version (a new one replaces the template).
func retiredTemplateHCL(setup string) string {
	return fmt.Sprintf(`
resource "prime_sandbox" "template" {
  name                    = "template-%[1]s"
  docker_image            = "python:3.12-slim"
  retire_after_checkpoint = true
}

resource "prime_sandbox_file" "task" {
  sandbox_id = prime_sandbox.template.id
  path       = "/task/prompt.txt"
  content    = "the task"
}

resource "prime_sandbox_command" "setup" {
  sandbox_id = prime_sandbox.template.id
  command    = "mkdir -p /opt/setup && echo %[1]s > /opt/setup/marker"
  depends_on = [prime_sandbox_file.task]
}

resource "prime_sandbox_checkpoint" "setup" {
  sandbox_id   = prime_sandbox.template.id
  source_after = "delete"
  triggers     = { setup = prime_sandbox_command.setup.id }
}

resource "prime_sandbox" "restored" {
  name          = "restored"
  checkpoint_id = prime_sandbox_checkpoint.setup.id
}

resource "prime_sandbox_command" "agent" {
  sandbox_id = prime_sandbox.restored.id
  command    = "cat /opt/setup/marker /task/prompt.txt"
}
`, setup)
}

// templateGone checks that no template is billed once its checkpoint is
// DURABLE: every sandbox named template-* has ended.
func templateGone(t *testing.T, m *mocktest.Mock, s *terraform.State) error {
	t.Helper()
	id := s.RootModule().Resources["prime_sandbox.template"].Primary.ID
	if st := m.Status(t, id); !prime.IsTerminalStatus(st) {
		return fmt.Errorf("the template %s is %s: still billed after its checkpoint", id, st)
	}
	return nil
}

// source_after = "delete" ends the template once its checkpoint is
// DURABLE (it outlives the template), and retire_after_checkpoint keeps
// the template in state, retired: the plan after the apply is empty, the
// file and the setup in it are not planned again. A checkpoint deleted out
// of band is no dead end: the template is no longer retired (no DURABLE
// checkpoint of it), so the next apply makes a new one, uploads, runs the
// setup, checkpoints and retires it again, and restores anew; a new setup
// does the same. Destroy leaves no sandbox and no checkpoint.
func TestAccCheckpoint_deleteRetiresTemplate(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	v1, v2 := m.Config(retiredTemplateHCL("v1")), m.Config(retiredTemplateHCL("v2"))
	var ck string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoCheckpoints,
		Steps: []resource.TestStep{
			{
				Config: v1,
				Check: resource.ComposeAggregateTestCheckFunc(
					func(s *terraform.State) error { return templateGone(t, m, s) },
					resource.TestCheckResourceAttr("prime_sandbox_command.agent", "stdout", "v1\nthe task"),
					func(s *terraform.State) (err error) {
						ck, err = acctest.StateID(s, "prime_sandbox_checkpoint.setup")
						return err
					},
				),
			},
			{Config: v1, PlanOnly: true},
			{
				PreConfig: func() {
					if err := m.Client(t).DeleteCheckpoint(mocktest.WaitCtx(t), ck); err != nil {
						t.Fatal(err)
					}
				},
				Config: v1,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox.template", plancheck.ResourceActionCreate),
					plancheck.ExpectResourceAction("prime_sandbox_checkpoint.setup", plancheck.ResourceActionCreate),
					plancheck.ExpectResourceAction("prime_sandbox.restored", plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					func(s *terraform.State) error { return templateGone(t, m, s) },
					resource.TestCheckResourceAttr("prime_sandbox_command.agent", "stdout", "v1\nthe task"),
				),
			},
			{Config: v1, PlanOnly: true},
			{
				Config: v2,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox.template", plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					func(s *terraform.State) error { return templateGone(t, m, s) },
					resource.TestCheckResourceAttr("prime_sandbox_command.agent", "stdout", "v2\nthe task"),
				),
			},
			{Config: v2, PlanOnly: true},
		},
	})
}
