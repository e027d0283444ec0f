package examples_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// todaysProtocol is the evaluation protocol as today's docs write it: no
// vm attribute anywhere (every sandbox is a VM), no lifetime limit and a
// 60-minute idle timeout, as the eval-fleet module's defaults.
var todaysProtocol = acctest.SandboxHCL("box", "todays-docs", "timeout_minutes = -1", "idle_timeout_minutes = 60") + `
resource "prime_sandbox_file" "task" {
  sandbox_id = prime_sandbox.box.id
  path       = "/task/task.json"
  content    = jsonencode({ id = "t1" })
}

resource "prime_sandbox_command" "setup" {
  sandbox_id          = prime_sandbox_file.task.sandbox_id
  command             = "mkdir -p /results && cp /task/task.json /opt/setup-ran"
  require_open_egress = true
  triggers            = { task = prime_sandbox_file.task.id }
}
` + acctest.EgressPolicyHCL("lock", "prime_sandbox.box.id", []string{"api.openai.com"}, "after = [prime_sandbox_command.setup.id]") + acctest.BackgroundCommandHCL("agent", "prime_egress_policy.lock.sandbox_id", `test -f /opt/setup-ran && echo '{"reward": 1}' > /results/reward.json && echo agent-done`, "timeout_seconds = 600", "triggers = { lock = prime_egress_policy.lock.id }") + `
data "prime_sandbox_file" "reward" {
  sandbox_id = prime_sandbox_command.agent.sandbox_id
  path       = "/results/reward.json"

  depends_on = [prime_sandbox_command.agent]
}

output "reward" {
  value = jsondecode(data.prime_sandbox_file.reward.content).reward
}
`

// The Done-when of VM-only sandboxes: a configuration with no vm attribute
// at all runs the whole protocol — task in, setup with the network open,
// the lock enforced, the agent as a background job only after it, the
// result out — and the second plan (the harness's, after the apply) is
// empty. Nothing retired is sent.
func TestAccVMOnly_todaysDocsRunTheWholeProtocol(t *testing.T) {
	if regexp.MustCompile(`(?m)^\s*vm\s*=`).MatchString(todaysProtocol) {
		t.Fatal("the configuration must not set vm")
	}
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config: m.Config(todaysProtocol),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("prime_sandbox.box", tfjsonpath.New("vm"), knownvalue.Bool(true)),
				statecheck.ExpectKnownValue("prime_sandbox.box", tfjsonpath.New("timeout_minutes"), knownvalue.Int64Exact(-1)),
				statecheck.ExpectKnownValue("prime_egress_policy.lock", tfjsonpath.New("applied"), knownvalue.Bool(true)),
				statecheck.ExpectKnownValue("prime_sandbox_command.agent", tfjsonpath.New("stdout"), knownvalue.StringExact("agent-done\n")),
				statecheck.ExpectKnownOutputValue("reward", knownvalue.Int64Exact(1)),
			},
			Check: func(*terraform.State) error {
				for _, body := range m.CreateBodies(t) {
					for _, retired := range []string{"vm", "guaranteed", "registry_credentials_id", "start_command"} {
						if _, ok := body[retired]; ok {
							return fmt.Errorf("the create body carries %s: %v", retired, body)
						}
					}
					if body["timeout_minutes"] != -1.0 || body["idle_timeout_minutes"] != 60.0 {
						return fmt.Errorf("create body timeouts: %v", body)
					}
				}
				return protocolOrder(m.Events())
			},
		}},
	})
}

// protocolOrder checks the protocol's order in the mock's event log: the
// task upload, then the setup command, then the lock enforced, then the
// agent's start.
func protocolOrder(events []primemock.Event) error {
	at := map[string]int{}
	for i, e := range events {
		var step string
		switch {
		case e.Type == primemock.EventFileUploaded:
			step = "task uploaded"
		case e.Type == primemock.EventCommandExecuted && strings.Contains(e.Command, "/opt/setup-ran") && !strings.Contains(e.Command, "reward"):
			step = "setup ran"
		case e.Type == primemock.EventPolicyApplied:
			step = "lock enforced"
		case (e.Type == primemock.EventCommandStarted || e.Type == primemock.EventCommandExecuted) && strings.Contains(e.Command, "reward.json"):
			step = "agent started"
		default:
			continue
		}
		if _, seen := at[step]; !seen {
			at[step] = i
		}
	}
	order := []string{"task uploaded", "setup ran", "lock enforced", "agent started"}
	for i, step := range order {
		if _, ok := at[step]; !ok {
			return fmt.Errorf("no %q event in the mock's log", step)
		}
		if i > 0 && at[order[i-1]] > at[step] {
			return fmt.Errorf("%q came before %q", step, order[i-1])
		}
	}
	return nil
}
