package command_test

import (
	"fmt"
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
	"github.com/primeintellect/terraform-provider-prime/internal/command"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// fleetCommandHCL is a prime_fleet_command "run" over the boxes.
func fleetCommandHCL(commands []string, extra ...string) string {
	quoted := make([]string, len(commands))
	for i, c := range commands {
		quoted[i] = fmt.Sprintf("%q", c)
	}
	return fmt.Sprintf(`
resource "prime_fleet_command" "run" {
  sandbox_ids = %s
  commands    = [%s]
  %s
}
`, acctest.FleetMemberIDs, strings.Join(quoted, ", "), strings.Join(extra, "\n  "))
}

// commandRunsBySandbox counts command_executed events per sandbox for
// commands with the prefix.
func commandRunsBySandbox(events []primemock.Event, prefix string) map[string]int {
	out := map[string]int{}
	for _, e := range events {
		if e.Type == primemock.EventCommandExecuted && strings.HasPrefix(e.Command, prefix) {
			out[e.SandboxID]++
		}
	}
	return out
}

// Steps run in order on every member; a member stops at its first step with
// a disallowed exit code while the others go on; the one error names the
// failed member with its step, exit code and stderr; nothing is stored, so
// the next plan creates the resource again.
func TestAccFleetCommand_memberStopsAtFirstDisallowedStep(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cfg := m.Config(acctest.FleetMemberBoxes(3, 1) + fleetCommandHCL([]string{
		"echo step-one", "echo step-two failed with $FAIL_CODE >&2; exit $FAIL_CODE", "echo step-three",
	}))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: cfg,
				ExpectError: acctest.ExpectInOrder(`Fleet command failed`, `The command failed on 1 of the 3 members that ran:`,
					`Member "1": sandbox`, `step 2 of 3: Command exited with a disallowed code.`,
					`exited with code 3 (allowed: [0]). Last of stderr: step-two failed with 3`),
			},
			{
				Config:             cfg,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_fleet_command.run", plancheck.ResourceActionCreate),
				}},
			},
		},
	})
	failing := ""
	order := map[string][]string{}
	for _, e := range m.Events() {
		if e.Type != primemock.EventCommandExecuted || !strings.HasPrefix(e.Command, "echo step-") {
			continue // the sandbox's own readiness probe
		}
		step := strings.Fields(e.Command)[1]
		order[e.SandboxID] = append(order[e.SandboxID], fmt.Sprintf("%s=%d", step, e.ExitCode))
		if e.ExitCode == 3 {
			failing = e.SandboxID
		}
	}
	if len(order) != 3 || failing == "" {
		t.Fatalf("executions per sandbox: %v; want 3 sandboxes, one failing", order)
	}
	for id, got := range order {
		want := "step-one=0 step-two=0 step-three=0"
		if id == failing {
			want = "step-one=0 step-two=3"
		}
		if strings.Join(got, " ") != want {
			t.Errorf("sandbox %s ran %v, want %s", id, got, want)
		}
	}
}

// An update runs only a new member (the others' results are kept and
// planned known, the new one unknown) and keeps the ID; removing a member
// drops its result without running anything. With step_output = "tail",
// step output keeps its last 4 KiB.
func TestAccFleetCommand_updateRunsOnlyNewMembers(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	commands := []string{"echo hello-$FAIL_CODE", "repeat 1000 line; echo the-end"}
	fleetCommandHCL := func(commands []string) string { return fleetCommandHCL(commands, `step_output = "tail"`) }
	var firstID string
	runs := func(want int) resource.TestCheckFunc {
		return func(*terraform.State) error {
			per := commandRunsBySandbox(m.Events(), "echo hello")
			total := 0
			for id, n := range per {
				if n != 1 {
					return fmt.Errorf("sandbox %s ran the first step %d times, want once", id, n)
				}
				total += n
			}
			if total != want {
				return fmt.Errorf("the first step ran on %d sandboxes, want %d", total, want)
			}
			return nil
		}
	}
	results := tfjsonpath.New("results")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: m.Config(acctest.FleetMemberBoxes(2) + fleetCommandHCL(commands)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectUnknownValue("prime_fleet_command.run", results.AtMapKey("0")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("prime_fleet_command.run", results.AtMapKey("1").AtMapKey("steps").AtSliceIndex(0).AtMapKey("stdout"),
						knownvalue.StringExact("hello-0\n")),
					statecheck.ExpectKnownValue("prime_fleet_command.run", results.AtMapKey("1").AtMapKey("exit_code"), knownvalue.Int64Exact(0)),
					statecheck.ExpectKnownValue("prime_fleet_command.run", results.AtMapKey("1").AtMapKey("steps").AtSliceIndex(1).AtMapKey("output_truncated"),
						knownvalue.Bool(true)),
					statecheck.ExpectKnownValue("prime_fleet_command.run", tfjsonpath.New("sensitive_streams"), knownvalue.Null()),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					runs(2),
					func(s *terraform.State) error {
						attrs := s.RootModule().Resources["prime_fleet_command.run"].Primary.Attributes
						firstID = attrs["id"]
						out := attrs["results.0.steps.1.stdout"]
						if len(out) != command.FleetStepOutput || !strings.HasSuffix(out, "line\nthe-end\n") {
							return fmt.Errorf("step 2 stdout is %d bytes; want the last %d", len(out), command.FleetStepOutput)
						}
						if attrs["results.0.executed_at"] == "" {
							return fmt.Errorf("executed_at is empty")
						}
						return nil
					},
				),
			},
			{
				Config: m.Config(acctest.FleetMemberBoxes(3) + fleetCommandHCL(commands)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_fleet_command.run", plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue("prime_fleet_command.run", results.AtMapKey("2")),
					plancheck.ExpectKnownValue("prime_fleet_command.run", results.AtMapKey("0").AtMapKey("exit_code"), knownvalue.Int64Exact(0)),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					runs(3),
					resource.TestCheckResourceAttr("prime_fleet_command.run", "results.2.steps.0.stdout", "hello-0\n"),
					resource.TestCheckResourceAttrWith("prime_fleet_command.run", "id", func(id string) error {
						if id != firstID {
							return fmt.Errorf("id changed from %s to %s on a partial run", firstID, id)
						}
						return nil
					}),
				),
			},
			{
				Config: m.Config(acctest.FleetMemberBoxes(2) + fleetCommandHCL(commands)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_fleet_command.run", plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					runs(3),
					resource.TestCheckResourceAttr("prime_fleet_command.run", "results.%", "2"),
				),
			},
		},
	})
}

// Arguments that judge or record the results update in place without
// running anything; narrowing allowed_exit_codes runs again only the member
// whose recorded exit code is no longer allowed, and its failure keeps the
// other member's result.
func TestAccFleetCommand_resultArgumentsUpdateInPlace(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cfg := func(extra ...string) string {
		return m.Config(acctest.FleetMemberBoxes(2, 1) + fleetCommandHCL([]string{"echo probing; exit $FAIL_CODE"}, extra...))
	}
	runs := func() map[string]int { return commandRunsBySandbox(m.Events(), "echo probing") }
	results := tfjsonpath.New("results")
	var ids [2]string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: cfg(`allowed_exit_codes = [0, 3]`),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("prime_fleet_command.run", "results.0.exit_code", "0"),
					resource.TestCheckResourceAttr("prime_fleet_command.run", "results.1.exit_code", "3"),
					func(s *terraform.State) (err error) {
						for i := range ids {
							if ids[i], err = acctest.StateID(s, fmt.Sprintf("prime_sandbox.box.%d", i)); err != nil {
								return err
							}
						}
						return nil
					},
				),
			},
			{
				Config: cfg(`allowed_exit_codes = [3, 0, 1]`, `timeout_seconds = 60`, `sensitive_output = true`,
					`require_open_egress = true`, `max_concurrency = 1`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_fleet_command.run", plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue("prime_fleet_command.run", results.AtMapKey("1").AtMapKey("exit_code"), knownvalue.Int64Exact(3)),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("prime_fleet_command.run", results.AtMapKey("0").AtMapKey("steps").AtSliceIndex(0).AtMapKey("stdout"), knownvalue.Null()),
					statecheck.ExpectKnownValue("prime_fleet_command.run", tfjsonpath.New("sensitive_streams").AtMapKey("0").AtSliceIndex(0).AtMapKey("stdout"),
						knownvalue.StringExact("probing")),
					statecheck.ExpectKnownValue("prime_fleet_command.run", tfjsonpath.New("sensitive_streams").AtMapKey("1").AtSliceIndex(0).AtMapKey("stdout"),
						knownvalue.StringExact("probing")),
				},
				Check: func(*terraform.State) error {
					if r := runs(); r[ids[0]] != 1 || r[ids[1]] != 1 {
						return fmt.Errorf("runs per sandbox %v; an in-place update runs nothing", r)
					}
					return nil
				},
			},
			{
				// A refresh reads nothing back and changes nothing.
				RefreshState: true,
			},
			{
				// 3 is no longer allowed: member 1 runs again (and fails),
				// member 0 keeps its result.
				Config: cfg(`allowed_exit_codes = [0]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_fleet_command.run", plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue("prime_fleet_command.run", results.AtMapKey("1")),
					plancheck.ExpectKnownValue("prime_fleet_command.run", results.AtMapKey("0").AtMapKey("exit_code"), knownvalue.Int64Exact(0)),
				}},
				ExpectError: acctest.ExpectInOrder(`The command failed on 1 of the 1 members that ran:`, `Member "1"`, `exited with code 3 (allowed: [0])`),
			},
			{
				// The failed member is recorded as failed, member 0 as it
				// was, so the next apply would run member 1 only.
				Config:             cfg(`allowed_exit_codes = [0]`),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_fleet_command.run", plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue("prime_fleet_command.run", results.AtMapKey("1")),
					plancheck.ExpectKnownValue("prime_fleet_command.run", results.AtMapKey("0").AtMapKey("sandbox_id"), knownvalue.NotNull()),
				}},
			},
		},
	})
	if r := runs(); r[ids[0]] != 1 || r[ids[1]] != 2 {
		t.Fatalf("runs per sandbox %v; want member 0 once and member 1 twice", r)
	}
}

// require_open_egress is checked per member before its first step: the
// member under a lock refuses with prime_sandbox_command's message and runs
// nothing; the open member runs.
func TestAccFleetCommand_requireOpenEgressRefusesLockedMember(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	var locked, open string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: m.Config(acctest.FleetMemberBoxes(2) + acctest.EgressPolicyHCL("lock", "prime_sandbox.box[1].id", []string{"example.com"})),
				Check: func(s *terraform.State) (err error) {
					if open, err = acctest.StateID(s, "prime_sandbox.box.0"); err != nil {
						return err
					}
					locked, err = acctest.StateID(s, "prime_sandbox.box.1")
					return err
				},
			},
			{
				Config: m.Config(acctest.FleetMemberBoxes(2) + acctest.EgressPolicyHCL("lock", "prime_sandbox.box[1].id", []string{"example.com"}) + fleetCommandHCL([]string{"echo setup-one", "echo setup-two"}, `require_open_egress = true`, `depends_on = [prime_egress_policy.lock]`)),
				ExpectError: acctest.ExpectInOrder(`Member "1": sandbox`, `step 1 of 2: Egress is restricted.`,
					`holds a restricted egress policy (generation 1, allow example.com, enforced), so it was not run`),
			},
		},
	})
	r := commandRunsBySandbox(m.Events(), "echo setup-")
	if r[locked] != 0 || r[open] != 2 {
		t.Fatalf("commandRunsBySandbox per sandbox %v: want none on the locked member %s and both steps on %s", r, locked, open)
	}
}

// With sensitive_output the failure names the member and the exit code but
// withholds the output.
func TestAccFleetCommand_sensitiveFailureWithholdsOutput(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config: m.Config(acctest.FleetMemberBoxes(1) + fleetCommandHCL([]string{"echo very-secret-token >&2; exit 4"}, `sensitive_output = true`)),
			ExpectError: acctest.ExpectInOrder(`Member "0": sandbox`, `step 1 of 1: Command exited with a disallowed code.`,
				`exited with code 4 (allowed: [0]). Its output is not shown: sensitive_output is set.`),
		}},
	})
}

// Plan-time errors, before any API call.
func TestAccFleetCommand_planTimeValidation(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"no steps", `commands = []`, "Attribute commands list must contain at least 1 elements"},
		{"empty step", `commands = ["true", ""]`, "string length must be at least 1"},
		{"bad env name", "commands = [\"true\"]\n env = { \"NOT VALID\" = \"x\" }", `env: "NOT VALID" is not a valid variable name`},
		{"env twice", "commands = [\"true\"]\n env = { A = \"x\" }\n env_wo = { A = \"y\" }", `env_wo: "A" is also set in env`},
		{"concurrency", "commands = [\"true\"]\n max_concurrency = 0", "Attribute max_concurrency value must be at least 1"},
		{"exit codes", "commands = [\"true\"]\n allowed_exit_codes = [256]", "value must be between 0 and 255"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := mocktest.New(t, mocktest.Fast())
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: acctest.ProviderFactories(t),
				Steps: []resource.TestStep{{
					Config: m.Config(fmt.Sprintf(`
resource "prime_fleet_command" "x" {
  sandbox_ids = { a = "sbx-a" }
  %s
}
`, tc.body)),
					PlanOnly:    true,
					ExpectError: acctest.ExpectErr(tc.want),
				}},
			})
			m.NoAPICalls(t)
		})
	}
}
