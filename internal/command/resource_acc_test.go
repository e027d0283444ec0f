package command_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/command"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// fleetScenarios are the three sandboxes of the fleet tests, by index.
var fleetScenarios = []struct {
	name        string
	wantExample string // exit code of `probe example.com`
	wantGoogle  string // exit code of `curl https://google.com/`
}{
	{"open", "0", "0"},
	{"partial", "0", "7"},
	{"denyone", "7", "0"},
}

// fleetHCL is the whole protocol for three sandboxes: setup with the network
// open, then the policy, then an agent probing two hosts. The agent allows
// curl's exit code 7 (host unreachable) so both outcomes are recorded.
// (count, not for_each: the test harness cannot read for_each state,
// hashicorp/terraform-plugin-sdk#536; the eval-fleet module uses for_each
// and is tested with terraform test.)
func fleetHCL(timeout string) string {
	return fmt.Sprintf(`
locals {
  fleet = [
    { name = "open", allow = null, block = [] },
    { name = "partial", allow = ["example.com"], block = null },
    { name = "denyone", allow = null, block = ["example.com"] },
  ]
}

resource "prime_sandbox" "box" {
  count        = length(local.fleet)
  name         = "eval-${local.fleet[count.index].name}"
  docker_image = "python:3.12-slim"
}
`+acctest.CommandHCL("setup", "prime_sandbox.box[count.index].id", "echo installing && probe pypi.org", `count      = length(local.fleet)`)+`
resource "prime_egress_policy" "lock" {
  count      = length(local.fleet)
  sandbox_id = prime_sandbox.box[count.index].id
  allow      = local.fleet[count.index].allow
  block      = local.fleet[count.index].block
  routes     = ["https://intercept.example.net/v1"]
  timeouts {
    create = %q
  }
  depends_on = [prime_sandbox_command.setup]
}
`+acctest.CommandHCL("agent", "prime_sandbox.box[count.index].id", "echo probing && probe example.com", `count              = length(local.fleet)`, `allowed_exit_codes = [0, 7]`, `depends_on         = [prime_egress_policy.lock]`)+acctest.CommandHCL("agent_google", "prime_sandbox.box[count.index].id", "curl -sS https://google.com/", `count              = length(local.fleet)`, `allowed_exit_codes = [0, 7]`, `depends_on         = [prime_egress_policy.lock]`), timeout)
}

// The fleet chain end to end: for every sandbox the mock's event log shows
// setup executed < policy applied < agent executed, and each probe's exit
// code matches the policy.
func TestAccSandboxCommand_fleetChain(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config: m.Config(fleetHCL("30s")),
			Check: func(s *terraform.State) error {
				for i, sc := range fleetScenarios {
					google := fmt.Sprintf("prime_sandbox_command.agent_google.%d", i)
					if err := resource.TestCheckResourceAttr(google, "exit_code", sc.wantGoogle)(s); err != nil {
						return fmt.Errorf("%s: %w", sc.name, err)
					}
					agent := fmt.Sprintf("prime_sandbox_command.agent.%d", i)
					if err := resource.TestCheckResourceAttr(agent, "exit_code", sc.wantExample)(s); err != nil {
						return fmt.Errorf("%s: %w", sc.name, err)
					}
					id, err := acctest.StateID(s, fmt.Sprintf("prime_sandbox.box.%d", i))
					if err != nil {
						return err
					}
					if err := checkProtocolOrder(m.Events(), id); err != nil {
						return fmt.Errorf("%s: %w", sc.name, err)
					}
				}
				return nil
			},
		}},
	})
}

// checkProtocolOrder asserts setup < policy applied < agent for a sandbox.
func checkProtocolOrder(events []primemock.Event, sandboxID string) error {
	var setup, applied, agent int64 = -1, -1, -1
	for _, e := range events {
		if e.SandboxID != sandboxID {
			continue
		}
		switch {
		case e.Type == primemock.EventCommandExecuted && strings.HasPrefix(e.Command, "echo installing"):
			setup = e.Seq
		case e.Type == primemock.EventPolicyApplied && e.Generation >= 1 && applied < 0:
			applied = e.Seq
		case e.Type == primemock.EventCommandExecuted && (strings.HasPrefix(e.Command, "echo probing") || strings.HasPrefix(e.Command, "curl")):
			if agent < 0 {
				agent = e.Seq
			}
			if e.AppliedGeneration < 1 {
				return fmt.Errorf("agent command ran with applied generation %d, before the policy was enforced", e.AppliedGeneration)
			}
		}
	}
	if setup < 0 || applied < 0 || agent < 0 {
		return fmt.Errorf("missing events: setup %d, policy applied %d, agent %d", setup, applied, agent)
	}
	if !(setup < applied && applied < agent) {
		return fmt.Errorf("order setup %d, policy applied %d, agent %d; want setup < applied < agent", setup, applied, agent)
	}
	return nil
}

// With a data plane that never applies, every policy fails closed and no
// agent command ever runs.
func TestAccSandboxCommand_neverAppliedAgentNeverRuns(t *testing.T) {
	o := mocktest.Fast()
	o.NeverApply = true
	m := mocktest.New(t, o)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config:      m.Config(fleetHCL("1s")),
			ExpectError: acctest.ExpectErr("Failing closed"),
		}},
	})
	setups, agents := 0, 0
	for _, e := range m.Events() {
		if e.Type != primemock.EventCommandExecuted {
			continue
		}
		switch {
		case strings.HasPrefix(e.Command, "echo installing"):
			setups++
		case e.Command == acctest.GatewayProbe:
		default:
			agents++
		}
	}
	if setups != 3 || agents != 0 {
		t.Fatalf("setup commands run: %d (want 3), agent commands run: %d (want 0)", setups, agents)
	}
}

const commandSandbox = `
resource "prime_sandbox" "box" {
  name         = "cmd"
  docker_image = "img"
}
`

// A failing command fails the apply with its exit code and output, and is
// not stored.
func TestAccSandboxCommand_failureReportsExitCode(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config:      m.Config(commandSandbox + acctest.CommandHCL("setup", "prime_sandbox.box.id", "echo pip failed >&2; exit 3")),
			ExpectError: acctest.ExpectErr("exited with code 3 (allowed: [0]). Last of stderr: pip failed"),
		}},
	})
}

// Output beyond 64 KiB keeps its last 64 KiB and is flagged.
func TestAccSandboxCommand_outputTruncated(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config: m.Config(commandSandbox + acctest.CommandHCL("big", "prime_sandbox.box.id", "repeat 40000 line; echo the-end") + `resource "prime_sandbox_command" "small" {
  sandbox_id  = prime_sandbox.box.id
  command     = "echo hello"
  working_dir = "/tmp"
  env         = { GREETING = "hi" }
  triggers    = { script = "v1" }
}
`),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("prime_sandbox_command.big", "output_truncated", "true"),
				resource.TestCheckResourceAttr("prime_sandbox_command.big", "exit_code", "0"),
				func(s *terraform.State) error {
					out := s.RootModule().Resources["prime_sandbox_command.big"].Primary.Attributes["stdout"]
					if len(out) != command.MaxOutput || !strings.HasSuffix(out, "line\nthe-end\n") {
						return fmt.Errorf("stdout is %d bytes ending %q; want the last %d bytes", len(out), out[max(0, len(out)-20):], command.MaxOutput)
					}
					return nil
				},
				resource.TestCheckResourceAttr("prime_sandbox_command.small", "output_truncated", "false"),
				resource.TestCheckResourceAttr("prime_sandbox_command.small", "stdout", "hello\n"),
			),
		}},
	})
}

func TestAccSandboxCommand_planTimeValidation(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		Steps: []resource.TestStep{{
			Config: m.Config(`
resource "prime_sandbox_command" "x" {
  sandbox_id = "sbx"
  command    = "true"
  env        = { "NOT VALID" = "x" }
}
`),
			PlanOnly:    true,
			ExpectError: acctest.ExpectErr(`env: "NOT VALID" is not a valid variable name`),
		}},
	})
	m.NoAPICalls(t)
}

func TestAccSandboxCommand_importUnsupported(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{Config: m.Config(commandSandbox + acctest.CommandHCL("x", "prime_sandbox.box.id", "echo hi"))},
			{
				ResourceName:  "prime_sandbox_command.x",
				ImportState:   true,
				ImportStateId: "anything",
				ExpectError:   acctest.ExpectErr("does not support import"),
			},
		},
	})
}
