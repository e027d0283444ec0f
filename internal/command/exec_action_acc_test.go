package command_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
)

// prime_sandbox_exec and prime_fleet_exec run from an action_trigger after
// their resources are created, once per sandbox, and keep nothing in state
// (the harness's second plan is empty).
func TestAccExecActions_actionTrigger(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cfg := m.Config(acctest.SandboxHCL("box", "triggered") + `
resource "prime_sandbox_command" "ready" {
  sandbox_id = prime_sandbox.box.id
  command    = "echo ready"
  lifecycle {
    action_trigger {
      events  = [after_create]
      actions = [action.prime_sandbox_exec.hello]
    }
  }
}

action "prime_sandbox_exec" "hello" {
  config {
    sandbox_id = prime_sandbox.box.id
    command    = "echo hello-from-trigger $TOKEN"
    env_wo     = { TOKEN = "s3cret-token" }
  }
}
` + acctest.SandboxFleetHCL("f", "trig", 2) + `
resource "prime_fleet_command" "ready" {
  sandbox_ids = prime_sandbox_fleet.f.sandbox_ids
  commands    = ["echo ready"]
  lifecycle {
    action_trigger {
      events  = [after_create]
      actions = [action.prime_fleet_exec.probe]
    }
  }
}

action "prime_fleet_exec" "probe" {
  config {
    sandbox_ids = prime_sandbox_fleet.f.sandbox_ids
    commands    = ["echo probe-one", "echo probe-two"]
  }
}
`)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		TerraformVersionChecks:   acctest.SkipBelow(acctest.Query),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: cfg,
				Check: func(s *terraform.State) error {
					box, err := acctest.StateID(s, "prime_sandbox.box")
					if err != nil {
						return err
					}
					if runs := acctest.CommandRuns(m, "echo hello-from-trigger"); len(runs) != 1 || runs[box] != 1 {
						return fmt.Errorf("prime_sandbox_exec ran %v, want once on %s", runs, box)
					}
					ids := s.RootModule().Resources["prime_sandbox_fleet.f"].Primary.Attributes
					for _, step := range []string{"echo probe-one", "echo probe-two"} {
						runs := acctest.CommandRuns(m, step)
						if len(runs) != 2 || runs[ids["sandbox_ids.0"]] != 1 || runs[ids["sandbox_ids.1"]] != 1 {
							return fmt.Errorf("prime_fleet_exec ran %q %v, want once on each member", step, runs)
						}
					}
					for addr := range s.RootModule().Resources {
						if strings.HasPrefix(addr, "action.") {
							return fmt.Errorf("%s is in state", addr)
						}
					}
					return nil
				},
			},
		},
	})
}

// Plan-time errors of the actions, before any API call: a sweep without
// labels, a duration that is not one, a variable both in env and env_wo.
func TestAccActions_planTimeErrors(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	invoke := func(action string) string {
		return m.Config(`
resource "prime_sandbox" "marker" {
  name         = "marker"
  docker_image = "python:3.12-slim"
  lifecycle {
    action_trigger {
      events  = [after_create]
      actions = [action.` + action + `]
    }
  }
}
` + actionBlocks)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		TerraformVersionChecks:   acctest.SkipBelow(acctest.Query),
		Steps: []resource.TestStep{
			{Config: invoke("prime_sandbox_sweep.everything"), ExpectError: acctest.ExpectErr(
				"prime_sandbox_sweep needs at least one label: without one it would delete every sandbox of the team.")},
			{Config: invoke("prime_sandbox_sweep.soon"), ExpectError: acctest.ExpectErr(`older_than: "soon" is not a duration such as 90m or 24h`)},
			{Config: invoke("prime_sandbox_exec.twice"), ExpectError: acctest.ExpectErr(`env_wo: "TOKEN" is also set in env; set each variable in one of them`)},
			{Config: invoke("prime_fleet_exec.twice"), ExpectError: acctest.ExpectErr(`env_wo: "TOKEN" is also set in env; set each variable in one of them`)},
		},
	})
	m.NoAPICalls(t)
}

// actionBlocks are invalid actions for TestAccActions_planTimeErrors.
const actionBlocks = `
action "prime_sandbox_sweep" "everything" {
  config {
    labels = []
  }
}
action "prime_sandbox_sweep" "soon" {
  config {
    labels     = ["stale"]
    older_than = "soon"
  }
}
action "prime_sandbox_exec" "twice" {
  config {
    sandbox_id = "sb-1"
    command    = "true"
    env        = { TOKEN = "a" }
    env_wo     = { TOKEN = "b" }
  }
}
action "prime_fleet_exec" "twice" {
  config {
    sandbox_ids = { a = "sb-1" }
    commands    = ["true"]
    env         = { TOKEN = "a" }
    env_wo      = { TOKEN = "b" }
  }
}
`

// A member whose step exits with a disallowed code fails the action with
// prime_fleet_command's error, naming the member and its sandbox.
func TestAccFleetExecAction_disallowedExitCode(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cfg := m.Config(acctest.SandboxFleetHCL("f", "fail", 1) + `resource "prime_fleet_command" "ready" {
  sandbox_ids = prime_sandbox_fleet.f.sandbox_ids
  commands    = ["echo ready"]
  lifecycle {
    action_trigger {
      events  = [after_create]
      actions = [action.prime_fleet_exec.probe]
    }
  }
}
action "prime_fleet_exec" "probe" {
  config {
    sandbox_ids = prime_sandbox_fleet.f.sandbox_ids
    commands    = ["echo failing >&2; exit 3"]
  }
}
`)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		TerraformVersionChecks:   acctest.SkipBelow(acctest.Query),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config: cfg,
			ExpectError: acctest.ExpectInOrder(`The command failed on 1 of the 1 members that ran: Member "0": sandbox`,
				`exited with code 3`, `An action records nothing: invoke it again to run the command again.`),
		}},
	})
}
