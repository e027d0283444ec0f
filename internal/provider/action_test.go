package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// commandRuns counts the finished executions of commands that start with
// prefix, per sandbox.
func commandRuns(m *testMock, prefix string) map[string]int {
	runs := map[string]int{}
	for _, e := range m.Events() {
		if e.Type == primemock.EventCommandExecuted && strings.HasPrefix(e.Command, prefix) {
			runs[e.SandboxID]++
		}
	}
	return runs
}

// liveLabelled counts the running sandboxes that carry label.
func liveLabelled(ctx context.Context, t *testing.T, c *prime.Client, label string) int {
	t.Helper()
	active := true
	list, err := c.ListSandboxes(ctx, prime.ListSandboxesOptions{Labels: []string{label}, IsActive: &active})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, sb := range list {
		if !prime.IsTerminalStatus(sb.Status) && prime.HasAllLabels(sb.Labels, []string{label}) {
			n++
		}
	}
	return n
}

// prime_sandbox_exec and prime_fleet_exec run from an action_trigger after
// their resources are created, once per sandbox, and keep nothing in state
// (the harness's second plan is empty).
func TestAccExecActions_actionTrigger(t *testing.T) {
	m := newTestMock(t, fastMockOptions())
	cfg := m.config(`
resource "prime_sandbox" "box" {
  name         = "triggered"
  docker_image = "python:3.12-slim"
}

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

resource "prime_sandbox_fleet" "f" {
  name_prefix  = "trig"
  docker_image = "python:3.12-slim"
  size         = 2
}

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
		ProtoV6ProviderFactories: providerFactories(t),
		TerraformVersionChecks:   skipBelow(tfQuery),
		CheckDestroy:             m.checkNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: cfg,
				Check: func(s *terraform.State) error {
					box, err := stateID(s, "prime_sandbox.box")
					if err != nil {
						return err
					}
					if runs := commandRuns(m, "echo hello-from-trigger"); len(runs) != 1 || runs[box] != 1 {
						return fmt.Errorf("prime_sandbox_exec ran %v, want once on %s", runs, box)
					}
					ids := s.RootModule().Resources["prime_sandbox_fleet.f"].Primary.Attributes
					for _, step := range []string{"echo probe-one", "echo probe-two"} {
						runs := commandRuns(m, step)
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

// prime_sandbox_sweep from an action_trigger deletes exactly the running
// sandboxes that carry all its labels; its default dry run deletes none.
func TestAccSandboxSweepAction_actionTrigger(t *testing.T) {
	m := newTestMock(t, fastMockOptions())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // the whole test, destroy included
	t.Cleanup(cancel)
	c := m.client(t)
	for i, labels := range [][]string{{"stale", "run-7"}, {"stale", "run-7"}, {"stale"}, {"keep"}} {
		if _, err := c.CreateSandbox(ctx, prime.CreateSandboxRequest{Name: fmt.Sprintf("left-%d", i), DockerImage: "img", Labels: labels}); err != nil {
			t.Fatal(err)
		}
	}
	sweep := func(name, dryRun string) string {
		return m.config(fmt.Sprintf(`
resource "prime_sandbox" "marker" {
  name         = %[1]q
  docker_image = "python:3.12-slim"
  lifecycle {
    action_trigger {
      events  = [after_create]
      actions = [action.prime_sandbox_sweep.leftovers]
    }
  }
}

action "prime_sandbox_sweep" "leftovers" {
  config {
    labels = ["stale", "run-7"]
    %[2]s
  }
}
`, name, dryRun))
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories(t),
		TerraformVersionChecks:   skipBelow(tfQuery),
		CheckDestroy: func(s *terraform.State) error {
			if _, err := c.BulkDeleteSandboxes(ctx, prime.BulkDeleteRequest{Labels: []string{"keep"}}); err != nil {
				return err
			}
			if _, err := c.BulkDeleteSandboxes(ctx, prime.BulkDeleteRequest{Labels: []string{"stale"}}); err != nil {
				return err
			}
			return m.checkNoLiveSandboxes(s)
		},
		Steps: []resource.TestStep{
			{
				Config: sweep("marker-1", ""),
				Check: func(*terraform.State) error {
					if n := liveLabelled(ctx, t, c, "stale"); n != 3 {
						return fmt.Errorf("after a dry run %d stale sandboxes live, want all 3", n)
					}
					return nil
				},
			},
			{
				Config: sweep("marker-2", "dry_run = false"),
				Check: func(*terraform.State) error {
					stale, run7, keep := liveLabelled(ctx, t, c, "stale"), liveLabelled(ctx, t, c, "run-7"), liveLabelled(ctx, t, c, "keep")
					if run7 != 0 || stale != 1 || keep != 1 {
						return fmt.Errorf("after the sweep: %d run-7, %d stale, %d keep live; want 0, 1 (stale only), 1", run7, stale, keep)
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
	m := newTestMock(t, fastMockOptions())
	invoke := func(action string) string {
		return m.config(`
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
		ProtoV6ProviderFactories: providerFactories(t),
		TerraformVersionChecks:   skipBelow(tfQuery),
		Steps: []resource.TestStep{
			{Config: invoke("prime_sandbox_sweep.everything"), ExpectError: expectErr(
				"prime_sandbox_sweep needs at least one label: without one it would delete every sandbox of the team.")},
			{Config: invoke("prime_sandbox_sweep.soon"), ExpectError: expectErr(`older_than: "soon" is not a duration such as 90m or 24h`)},
			{Config: invoke("prime_sandbox_exec.twice"), ExpectError: expectErr(`env_wo: "TOKEN" is also set in env; set each variable in one of them`)},
			{Config: invoke("prime_fleet_exec.twice"), ExpectError: expectErr(`env_wo: "TOKEN" is also set in env; set each variable in one of them`)},
		},
	})
	m.noAPICalls(t)
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
	m := newTestMock(t, fastMockOptions())
	cfg := m.config(`
resource "prime_sandbox_fleet" "f" {
  name_prefix  = "fail"
  docker_image = "python:3.12-slim"
  size         = 1
}
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
    commands    = ["echo failing >&2; exit 3"]
  }
}
`)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories(t),
		TerraformVersionChecks:   skipBelow(tfQuery),
		CheckDestroy:             m.checkNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config:      cfg,
			ExpectError: expectErr(`The command failed on 1 of the 1 members that ran: Member "0": sandbox`),
		}},
	})
}
