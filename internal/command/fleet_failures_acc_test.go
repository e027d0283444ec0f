package command_test

import (
	"context"
	"fmt"
	"regexp"
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
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// rewardFleetHCL: member 1 of 3 crashes (exit 3, before writing its
// reward); the others write theirs. The data source reads the members
// that succeeded.
func rewardFleetHCL(m *mocktest.Mock, extra string) string {
	return m.Config(acctest.FleetMemberBoxes(3, 1) + fmt.Sprintf(`
resource "prime_fleet_command" "agent" {
  sandbox_ids  = %s
  commands     = ["test $FAIL_CODE = 0 || exit $FAIL_CODE; mkdir -p /results && echo reward-of-$PRIME_MEMBER_KEY > /results/reward.txt"]
  result_paths = ["/results"]
  %s
}

data "prime_fleet_file" "reward" {
  sandbox_ids = { for k, r in prime_fleet_command.agent.results : k => r.sandbox_id if !r.failed }
  path        = "/results/reward.txt"
}

output "rewards" {
  value = { for k, f in data.prime_fleet_file.reward.files : k => f.content }
}
`, acctest.FleetMemberIDs, extra))
}

// With on_member_failure = "record", one member's crash is recorded as its
// result and the apply goes on: the data source reads the other members'
// rewards in the same apply, and the next plan runs the failed member
// again, and only it.
func TestAccFleetCommand_recordKeepsTheOthersResults(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cfg := rewardFleetHCL(m, `on_member_failure = "record"`)
	results := tfjsonpath.New("results")
	var crashed string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				// The apply succeeds; its plan runs the failed member again.
				Config:             cfg,
				ExpectNonEmptyPlan: true,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("prime_fleet_command.agent", results.AtMapKey("1").AtMapKey("failed"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue("prime_fleet_command.agent", results.AtMapKey("1").AtMapKey("exit_code"), knownvalue.Int64Exact(3)),
					statecheck.ExpectKnownValue("prime_fleet_command.agent", results.AtMapKey("1").AtMapKey("error"),
						knownvalue.StringRegexp(regexp.MustCompile(`^step 1 of 1: Command exited with a disallowed code: The command in sandbox \S+ exited with code 3 \(allowed: \[0\]\)\.$`))),
					statecheck.ExpectKnownValue("prime_fleet_command.agent", results.AtMapKey("0").AtMapKey("failed"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue("prime_fleet_command.agent", results.AtMapKey("0").AtMapKey("error"), knownvalue.Null()),
					statecheck.ExpectKnownOutputValue("rewards", knownvalue.MapExact(map[string]knownvalue.Check{
						"0": knownvalue.StringExact("reward-of-0\n"), "2": knownvalue.StringExact("reward-of-2\n"),
					})),
				},
				Check: func(s *terraform.State) (err error) {
					crashed, err = acctest.StateID(s, "prime_sandbox.box.1")
					return err
				},
			},
			{
				// The next plan runs exactly the failed member again.
				Config:             cfg,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_fleet_command.agent", plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue("prime_fleet_command.agent", results.AtMapKey("1")),
					plancheck.ExpectKnownValue("prime_fleet_command.agent", results.AtMapKey("0").AtMapKey("failed"), knownvalue.Bool(false)),
					plancheck.ExpectKnownValue("prime_fleet_command.agent", results.AtMapKey("2").AtMapKey("failed"), knownvalue.Bool(false)),
				}},
			},
			{
				// It runs (and crashes) again; the others do not run.
				Config:             cfg,
				ExpectNonEmptyPlan: true,
				Check: func(*terraform.State) error {
					for id, n := range commandRunsBySandbox(m.Events(), prime.ClearResultPathsCommand([]string{"/results"}, "")) {
						if want := map[bool]int{true: 2, false: 1}[id == crashed]; n != want {
							return fmt.Errorf("sandbox %s ran the agent %d times, want %d", id, n, want)
						}
					}
					return nil
				},
			},
		},
	})
}

// With on_member_failure = "fail" (the default), the error says truthfully
// what was stored and what the next apply does: nothing on create; on an
// update, the others' results and the failure, and the next plan shows the
// failed member planned to run again.
func TestAccFleetCommand_failureTextsSayWhatWasStored(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cfg := func(code string) string {
		return m.Config(acctest.FleetMemberBoxes(2) + fmt.Sprintf(`
resource "prime_fleet_command" "agent" {
  sandbox_ids = %s
  commands    = ["echo agent $PRIME_MEMBER_KEY; exit $CODE"]
  member_env  = { "0" = { CODE = "0" }, "1" = { CODE = %q } }
}
`, acctest.FleetMemberIDs, code))
	}
	neverNothingStored := func(err error) error {
		if err != nil && strings.Contains(err.Error(), "Nothing was stored: the next apply runs the command again") {
			return fmt.Errorf("a member's failure still says \"Nothing was stored\": %w", err)
		}
		return err
	}
	results := tfjsonpath.New("results")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		ErrorCheck:               neverNothingStored,
		Steps: []resource.TestStep{
			{
				Config: cfg("3"),
				ExpectError: acctest.ExpectInOrder(`The command failed on 1 of the 2 members that ran:`, `Member "1"`,
					`exited with code 3 (allowed: [0])`,
					`Nothing was stored (the resource was not created), so the next apply runs every member again.`,
					`set on_member_failure = "record"`),
			},
			{Config: cfg("0")},
			{
				Config: cfg("3"),
				ExpectError: acctest.ExpectInOrder(`The command failed on 1 of the 1 members that ran:`, `Member "1"`,
					`Stored: the results of the 1 member that succeeded, and each failure, in results with failed = true and its error.`,
					`The next apply runs the 1 failed member again, and only it; the next plan shows it.`),
			},
			{
				Config:             cfg("3"),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_fleet_command.agent", plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue("prime_fleet_command.agent", results.AtMapKey("1")),
					plancheck.ExpectKnownValue("prime_fleet_command.agent", results.AtMapKey("0").AtMapKey("failed"), knownvalue.Bool(false)),
					priorStateCheck("prime_fleet_command.agent", func(attrs map[string]any) error {
						failed, _ := attrs["results"].(map[string]any)["1"].(map[string]any)["failed"].(bool)
						if !failed {
							return fmt.Errorf("state: results[1].failed = %v; want the failure recorded", failed)
						}
						return nil
					}),
				}},
			},
		},
	})
}

// priorStateCheck runs fn on the attributes a plan's prior state holds for
// the resource at addr.
func priorStateCheck(addr string, fn func(attrs map[string]any) error) plancheck.PlanCheck {
	return priorCheck{addr, fn}
}

type priorCheck struct {
	addr string
	fn   func(map[string]any) error
}

func (c priorCheck) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	if req.Plan.PriorState == nil || req.Plan.PriorState.Values == nil {
		resp.Error = fmt.Errorf("the plan has no prior state")
		return
	}
	for _, r := range req.Plan.PriorState.Values.RootModule.Resources {
		if r.Address == c.addr {
			resp.Error = c.fn(r.AttributeValues)
			return
		}
	}
	resp.Error = fmt.Errorf("%s is not in the prior state", c.addr)
}
