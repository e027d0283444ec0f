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
)

// sandboxSecretsHCL: a sandbox whose secrets_wo holds API_TOKEN and one
// whose secrets hold DB_PASSWORD, and commands that print them, in the
// foreground and in the background (with output_dir), single and fleet.
func sandboxSecretsHCL(m *mocktest.Mock, outDir, run string) string {
	return m.Config(fmt.Sprintf(`
variable "token" {
  type      = string
  ephemeral = true
}

variable "plain" {
  type      = string
  sensitive = true
}
`+acctest.SandboxHCL("wo", "secrets-wo", "secrets_wo = { API_TOKEN = var.token }", "secrets_wo_version = 1")+acctest.SandboxHCL("plain", "secrets-plain", "secrets = { DB_PASSWORD = var.plain }")+`
resource "prime_sandbox_command" "fg" {
  sandbox_id = prime_sandbox.wo.id
  command    = "printenv API_TOKEN; echo token=$API_TOKEN >&2"
  triggers   = { run = %[2]q }
}

resource "prime_sandbox_command" "bg" {
  sandbox_id = prime_sandbox.wo.id
  command    = "echo bg $API_TOKEN"
  background = true
  output_dir = "%[1]s/bg"
  triggers   = { run = %[2]q }
}

resource "prime_sandbox_command" "plain" {
  sandbox_id = prime_sandbox.plain.id
  command    = "printenv DB_PASSWORD"
  triggers   = { run = %[2]q }
}

resource "prime_fleet_command" "fleet" {
  sandbox_ids = { a = prime_sandbox.wo.id, b = prime_sandbox.plain.id }
  commands    = ["echo first $API_TOKEN$DB_PASSWORD", "echo second $API_TOKEN$DB_PASSWORD"]
  background  = true
  output_dir  = "%[1]s/fleet"
  step_output = "tail"
  triggers    = { run = %[2]q }
}
`, outDir, run))
}

// A sandbox secret (secrets_wo or secrets) that a command prints is masked
// as *** like an env_wo value: in state (and so in plans), in output_dir,
// in errors and in the TRACE log, foreground and background. Not parallel:
// it sets the log environment.
func TestAccSandboxCommand_sandboxSecretsMasked(t *testing.T) {
	const token, plain = "wo-sandbox-secret-83c2", "plain-secret-5e1d"
	logFile := filepath.Join(t.TempDir(), "trace.log")
	t.Setenv("TF_ACC_LOG_PATH", logFile)
	t.Setenv("TF_VAR_token", token)
	t.Setenv("TF_VAR_plain", plain)
	m := mocktest.New(t, mocktest.Fast())
	out := t.TempDir()
	str := func(addr, attr, want string) statecheck.StateCheck {
		return statecheck.ExpectKnownValue(addr, tfjsonpath.New(attr), knownvalue.StringExact(want))
	}
	step := func(member string, i int) tfjsonpath.Path {
		return tfjsonpath.New("results").AtMapKey(member).AtMapKey("steps").AtSliceIndex(i).AtMapKey("stdout")
	}
	neverStored := func(s *terraform.State) error {
		for addr, rs := range s.RootModule().Resources {
			if !strings.Contains(addr, "_command") {
				continue // the sandbox's own (sensitive) secrets argument holds plain's value by design
			}
			for k, v := range rs.Primary.Attributes {
				if strings.Contains(v, token) || strings.Contains(v, plain) {
					return fmt.Errorf("%s.%s holds a sandbox secret: %q", addr, k, v)
				}
			}
		}
		var logs int
		err := filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			logs++
			if strings.Contains(string(b), token) || strings.Contains(string(b), plain) {
				return fmt.Errorf("%s holds a sandbox secret: %q", p, b)
			}
			return nil
		})
		if err == nil && logs == 0 {
			err = fmt.Errorf("output_dir %s holds no logs", out)
		}
		return err
	}
	masked := []statecheck.StateCheck{
		str("prime_sandbox_command.fg", "stdout", "***\n"),
		str("prime_sandbox_command.fg", "stderr", "token=***\n"),
		str("prime_sandbox_command.bg", "stdout", "bg ***\n"),
		str("prime_sandbox_command.plain", "stdout", "***\n"),
		statecheck.ExpectKnownValue("prime_fleet_command.fleet", step("a", 0), knownvalue.StringExact("first ***\n")),
		statecheck.ExpectKnownValue("prime_fleet_command.fleet", step("b", 1), knownvalue.StringExact("second ***\n")),
	}
	failedMasked := false
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		ErrorCheck: func(err error) error {
			switch msg := err.Error(); {
			case strings.Contains(msg, token), strings.Contains(msg, plain):
				return fmt.Errorf("an error shows a sandbox secret: %s", msg)
			case !strings.Contains(msg, "leaked=***"):
				return err
			}
			failedMasked = true
			return nil
		},
		Steps: []resource.TestStep{
			{Config: sandboxSecretsHCL(m, out, "1"), ConfigStateChecks: masked, Check: neverStored},
			{
				// Every command runs again: the plan shows what they printed.
				Config: sandboxSecretsHCL(m, out, "2"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_fleet_command.fleet", plancheck.ResourceActionReplace),
					commandsPlanNeverContains(token), commandsPlanNeverContains(plain),
				}},
				ConfigStateChecks: masked, Check: neverStored,
			},
			{
				Config: sandboxSecretsHCL(m, out, "2") + acctest.BackgroundCommandHCL("fails", "prime_sandbox.wo.id", "echo leaked=$API_TOKEN >&2; exit 3"),
			},
		},
	})
	if !failedMasked {
		t.Fatal("the failing command's error was not seen")
	}
	data, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "printenv API_TOKEN") {
		t.Fatalf("the trace log (%d bytes) shows no command; the check below would prove nothing", len(data))
	}
	for _, secret := range []string{token, plain} {
		if i := strings.Index(string(data), secret); i >= 0 {
			t.Fatalf("the TRACE log contains %q: …%s…", secret, data[max(0, i-1500):min(len(data), i+300)])
		}
	}
}

// commandsPlanNeverContains fails when a value appears in what a plan holds
// of the command resources (the sandboxes' own secrets arguments hold
// theirs, sensitive, by design).
func commandsPlanNeverContains(secret string) plancheck.PlanCheck { return commandsPlanCheck{secret} }

type commandsPlanCheck struct{ secret string }

func (c commandsPlanCheck) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	found := 0
	for _, rc := range req.Plan.ResourceChanges {
		if !strings.HasSuffix(rc.Type, "_command") {
			continue
		}
		found++
		b, err := json.Marshal(rc)
		if err != nil {
			resp.Error = err
			return
		}
		if strings.Contains(string(b), c.secret) {
			resp.Error = fmt.Errorf("the plan of %s contains the secret %q", rc.Address, c.secret)
			return
		}
	}
	if found == 0 {
		resp.Error = fmt.Errorf("the plan has no command resources")
	}
}
