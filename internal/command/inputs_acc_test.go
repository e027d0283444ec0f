package command_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// Without after, a changed setup step that requires open egress refuses to
// run under the enforced lock: the apply fails, names the generation and
// shows the fix, and the command never reaches the sandbox.
func TestAccSandboxCommand_requireOpenEgressRefusesUnderLock(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{Config: m.Config(acctest.ProtocolHCL("v1", false))},
			{
				Config:      m.Config(acctest.ProtocolHCL("v2", false)),
				ExpectError: acctest.ExpectErr("holds a restricted egress policy (generation 1, allow example.com, enforced), so it was not run"),
			},
			{
				Config:      m.Config(acctest.ProtocolHCL("v2", false)),
				ExpectError: acctest.ExpectErr("after = [prime_sandbox_command.<this step>.id]"),
			},
		},
	})
	for _, e := range m.Events() {
		if e.Type == primemock.EventCommandExecuted && strings.Contains(e.Command, "installing v2") {
			t.Fatalf("the refused setup step reached the sandbox: %+v", e)
		}
	}
}

// Arguments that only judge the result update in place without running the
// command again, unless the recorded exit code is no longer allowed.
func TestAccSandboxCommand_resultArgumentsUpdateInPlace(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cmd := func(args string) string {
		return m.Config(commandSandbox + fmt.Sprintf(`
resource "prime_sandbox_command" "probe" {
  sandbox_id = prime_sandbox.box.id
  command    = "echo probing; exit 7"
  %s
}
`, args))
	}
	runs := func() int {
		n := 0
		for _, e := range m.Events() {
			if e.Type == primemock.EventCommandExecuted && strings.HasPrefix(e.Command, "echo probing") {
				n++
			}
		}
		return n
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: cmd(`allowed_exit_codes = [0, 7]`),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("prime_sandbox_command.probe", tfjsonpath.New("exit_code"), knownvalue.Int64Exact(7)),
					statecheck.ExpectKnownValue("prime_sandbox_command.probe", tfjsonpath.New("stdout"), knownvalue.StringExact("probing\n")),
				},
			},
			{
				Config: cmd(`
  allowed_exit_codes = [7, 1]
  timeout_seconds    = 60
  sensitive_output   = true
  require_open_egress = true`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox_command.probe", plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("prime_sandbox_command.probe", tfjsonpath.New("stdout"), knownvalue.Null()),
					statecheck.ExpectKnownValue("prime_sandbox_command.probe", tfjsonpath.New("sensitive_streams").AtMapKey("stdout"), knownvalue.StringExact("probing\n")),
				},
				Check: func(*terraform.State) error {
					if n := runs(); n != 1 {
						return fmt.Errorf("the command ran %d times, want once (an in-place update runs nothing)", n)
					}
					return nil
				},
			},
			{
				// 7 is no longer allowed: the recorded result would be a
				// failure, so the command runs again — and fails.
				Config:      cmd(`allowed_exit_codes = [0]`),
				ExpectError: acctest.ExpectErr("exited with code 7 (allowed: [0])"),
			},
		},
	})
	if n := runs(); n != 2 {
		t.Fatalf("the command ran %d times, want 2 (the first apply and the re-run)", n)
	}
}

// env_wo reaches the command and appears in neither state, plan nor the
// TRACE logs; sensitive_output keeps a secret the command prints out of
// stdout and out of the logs. Not parallel: it sets the log environment.
func TestAccSandboxCommand_writeOnlyEnvNeverStored(t *testing.T) {
	const hidden, printed = "wo-secret-never-stored-7f3a", "wo-secret-printed-b21c"
	logFile := filepath.Join(t.TempDir(), "trace.log")
	t.Setenv("TF_ACC_LOG_PATH", logFile)
	// The secrets come in as ephemeral variables, as a user's would: the
	// test harness logs the configuration text at TRACE, which must not be
	// what finds them.
	t.Setenv("TF_VAR_hidden", hidden)
	t.Setenv("TF_VAR_printed", printed)
	m := mocktest.New(t, mocktest.Fast())
	cfg := m.Config(commandSandbox + `
variable "hidden" {
  type      = string
  ephemeral = true
}
variable "printed" {
  type      = string
  ephemeral = true
}
resource "prime_sandbox_command" "quiet" {
  sandbox_id     = prime_sandbox.box.id
  command        = "echo the token is set"
  env_wo         = { TOKEN = var.hidden }
  env_wo_version = 1
}
resource "prime_sandbox_command" "loud" {
  sandbox_id       = prime_sandbox.box.id
  command          = "printenv TOKEN"
  env_wo           = { TOKEN = var.printed }
  sensitive_output = true
}
resource "prime_sandbox_command" "echoed" {
  sandbox_id = prime_sandbox.box.id
  command    = "printenv TOKEN && printenv TOKEN >&2"
  env_wo     = { TOKEN = var.hidden }
}
`)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config: cfg,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectUnknownValue("prime_sandbox_command.quiet", tfjsonpath.New("exit_code")),
				planNeverContains(hidden),
			}},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("prime_sandbox_command.quiet", tfjsonpath.New("env_wo"), knownvalue.Null()),
				statecheck.ExpectKnownValue("prime_sandbox_command.loud", tfjsonpath.New("env_wo"), knownvalue.Null()),
				// A write-only value the command prints is scrubbed from what
				// is recorded, sensitive or not.
				statecheck.ExpectKnownValue("prime_sandbox_command.loud", tfjsonpath.New("sensitive_streams").AtMapKey("stdout"), knownvalue.StringExact("***\n")),
				statecheck.ExpectKnownValue("prime_sandbox_command.loud", tfjsonpath.New("stdout"), knownvalue.Null()),
				statecheck.ExpectKnownValue("prime_sandbox_command.echoed", tfjsonpath.New("stdout"), knownvalue.StringExact("***\n")),
				statecheck.ExpectKnownValue("prime_sandbox_command.echoed", tfjsonpath.New("stderr"), knownvalue.StringExact("***\n")),
			},
			Check: func(s *terraform.State) error {
				for addr, rs := range s.RootModule().Resources {
					for k, v := range rs.Primary.Attributes {
						if strings.Contains(v, hidden) {
							return fmt.Errorf("%s.%s holds the write-only value", addr, k)
						}
					}
				}
				return nil
			},
		}},
	})
	data, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	log := string(data)
	if !strings.Contains(log, "printenv TOKEN") && !strings.Contains(log, "running command") {
		t.Fatalf("the trace log (%d bytes) shows no provider activity; the check below would prove nothing", len(log))
	}
	for _, secret := range []string{hidden, printed} {
		if i := strings.Index(log, secret); i >= 0 {
			t.Fatalf("the TRACE log contains %q: …%s…", secret, log[max(0, i-600):min(len(log), i+200)])
		}
	}
}

// A command that fails after printing a write-only value: the error shows
// its output tail with the value scrubbed.
func TestAccSandboxCommand_writeOnlyEnvScrubbedFromErrors(t *testing.T) {
	const secret = "wo-secret-in-a-failure-93d1"
	m := mocktest.New(t, mocktest.Fast())
	cfg := m.Config(commandSandbox + fmt.Sprintf(`
resource "prime_sandbox_command" "fails" {
  sandbox_id = prime_sandbox.box.id
  command    = "echo token=$TOKEN >&2 && exit 3"
  env_wo     = { TOKEN = %q }
}
`, secret))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		ErrorCheck: func(err error) error {
			switch msg := err.Error(); {
			case strings.Contains(msg, secret):
				return fmt.Errorf("the error shows the write-only value: %s", msg)
			case !strings.Contains(msg, "token=***"):
				return err
			}
			return nil
		},
		Steps: []resource.TestStep{{Config: cfg}},
	})
}

// planNeverContains fails when a value appears anywhere in the plan.
func planNeverContains(secret string) plancheck.PlanCheck { return planSecretCheck{secret} }

type planSecretCheck struct{ secret string }

// CheckPlan looks at what the plan holds of the resources — planned values,
// prior state, changes — not at the configuration snapshot, which carries
// this test's own literal.
func (c planSecretCheck) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	b, err := json.Marshal([]any{req.Plan.PlannedValues, req.Plan.PriorState, req.Plan.ResourceChanges, req.Plan.OutputChanges})
	if err != nil {
		resp.Error = err
		return
	}
	if strings.Contains(string(b), c.secret) {
		resp.Error = fmt.Errorf("the plan contains the write-only value %q", c.secret)
	}
}
