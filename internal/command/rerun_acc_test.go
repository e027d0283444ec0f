package command_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

// The tests in this file hold the documented re-run pattern to its word:
// every input that changes what an agent would do gives it a changed value
// to name — the file's and the lock's `id` in `triggers`, a member's file
// `sha256` or lock `generation` in `member_triggers` — so exactly the
// members concerned run again, and nothing else does. Runs are counted in
// the mock's event log, per sandbox.

// rerunInputs are the inputs of rerunFleetHCL that a step changes.
type rerunInputs struct {
	shared string            // the shared task's content
	own    map[string]string // each member's own task
	setup  string            // the setup command
	allow  string            // the allow list, as HCL
	route  string            // the interception route's host
}

func (in rerunInputs) with(change func(*rerunInputs)) rerunInputs {
	out := in
	out.own = map[string]string{}
	for k, v := range in.own {
		out.own[k] = v
	}
	change(&out)
	return out
}

// rerunFleetHCL is the evaluations guide's fleet protocol: a shared task
// and a task per member, the setup (open egress) re-run by the shared
// task's id, the lock after the setup, and the agent named by the lock and
// the shared task in triggers and by its own task in member_triggers.
func rerunFleetHCL(m *mocktest.Mock, in rerunInputs) string {
	var own strings.Builder
	for _, k := range tfkit.SortedKeys(in.own) {
		fmt.Fprintf(&own, "    %q = { content = %q }\n", k, in.own[k])
	}
	return m.Config(fmt.Sprintf(acctest.SandboxFleetHCL("eval", "rerun", 3)+`
resource "prime_fleet_file" "task" {
  sandbox_ids = prime_sandbox_fleet.eval.sandbox_ids
  path        = "/task/shared.txt"
  content     = %[1]q
}

resource "prime_fleet_file" "own" {
  sandbox_ids = prime_sandbox_fleet.eval.sandbox_ids
  path        = "/task/own.txt"
  members = {
%[2]s  }
}

resource "prime_fleet_command" "setup" {
  sandbox_ids         = prime_fleet_file.task.sandbox_ids
  commands            = [%[3]q]
  require_open_egress = true
  triggers            = { task = prime_fleet_file.task.id }
}

resource "prime_fleet_egress_policy" "lock" {
  sandbox_ids = prime_sandbox_fleet.eval.sandbox_ids
  allow       = %[4]s
  routes      = ["https://%[5]s/v1"]
  after       = [prime_fleet_command.setup.id]
}

resource "prime_fleet_command" "agent" {
  sandbox_ids     = prime_fleet_egress_policy.lock.sandbox_ids
  commands        = ["echo agent && cat /task/shared.txt /task/own.txt"]
  triggers        = { lock = prime_fleet_egress_policy.lock.id, task = prime_fleet_file.task.id }
  member_triggers = { for k, f in prime_fleet_file.own.files : k => f.sha256 }
}
`, in.shared, own.String(), in.setup, in.allow, in.route))
}

// runCounts are how many times the setup and the agent ran per member.
type runCounts map[string][2]int

// fleetMemberIDsOf reads prime_sandbox_fleet.eval's sandbox_ids from state.
func fleetMemberIDsOf(s *terraform.State) (map[string]string, error) {
	rs, ok := s.RootModule().Resources["prime_sandbox_fleet.eval"]
	if !ok {
		return nil, fmt.Errorf("prime_sandbox_fleet.eval not in state")
	}
	ids := map[string]string{}
	for k, v := range rs.Primary.Attributes {
		if key, ok := strings.CutPrefix(k, "sandbox_ids."); ok && key != "%" {
			ids[key] = v
		}
	}
	return ids, nil
}

// wantRuns checks, per member, how many times in all the setup (commands
// starting with setupPrefix) and the agent have run.
func wantRuns(m *mocktest.Mock, setupPrefix string, want runCounts) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		ids, err := fleetMemberIDsOf(s)
		if err != nil {
			return err
		}
		setups := commandRunsBySandbox(m.Events(), setupPrefix)
		agents := commandRunsBySandbox(m.Events(), "echo agent")
		var problems []string
		for _, k := range tfkit.SortedKeys(want) {
			got := [2]int{setups[ids[k]], agents[ids[k]]}
			if got != want[k] {
				problems = append(problems, fmt.Sprintf("member %q ran the setup %d and the agent %d times, want %d and %d",
					k, got[0], got[1], want[k][0], want[k][1]))
			}
		}
		if len(problems) > 0 {
			sort.Strings(problems)
			return fmt.Errorf("%s", strings.Join(problems, "; "))
		}
		return nil
	}
}

// plus adds to every member's counts (setup, agent), or to those listed.
func (c runCounts) plus(setup, agent int, only ...string) runCounts {
	out := runCounts{}
	for k, v := range c {
		out[k] = v
		if len(only) == 0 || containsString(only, k) {
			out[k] = [2]int{v[0] + setup, v[1] + agent}
		}
	}
	return out
}

func containsString(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// Each kind of change re-runs exactly the agents it concerns, in one apply,
// and the plan after it is empty (the test harness checks that after every
// step): the shared task's bytes (setup and agent on every member), one
// member's task (that member's agent alone), the setup (every member, with
// the re-lock), the allow list and a route's host (every agent, no setup);
// a respelling of the same destinations runs nothing.
func TestAccRerun_fleetAgentRunsAgainForEveryInput(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	v1 := rerunInputs{
		shared: "shared v1", own: map[string]string{"0": "own 0", "1": "own 1", "2": "own 2"},
		setup: "echo setup v1", allow: `["example.com"]`, route: acctest.RouteHost,
	}
	sharedV2 := v1.with(func(in *rerunInputs) { in.shared = "shared v2" })
	oneOwn := sharedV2.with(func(in *rerunInputs) { in.own["1"] = "own 1, second version" })
	setupV2 := oneOwn.with(func(in *rerunInputs) { in.setup = "echo setup v2" })
	allowV2 := setupV2.with(func(in *rerunInputs) { in.allow = `["example.com", "google.com"]` })
	respelled := allowV2.with(func(in *rerunInputs) { in.allow = `["Example.COM", "google.com."]` })
	routeV2 := respelled.with(func(in *rerunInputs) { in.route = "intercept2.example.net" })

	const setupPrefix = "echo setup"
	once := runCounts{"0": {1, 1}, "1": {1, 1}, "2": {1, 1}}
	afterShared := once.plus(1, 1)
	afterOne := afterShared.plus(0, 1, "1")
	afterSetup := afterOne.plus(1, 1)
	afterAllow := afterSetup.plus(0, 1)
	afterRoute := afterAllow.plus(0, 1)
	agent := "prime_fleet_command.agent"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{Config: rerunFleetHCL(m, v1), Check: wantRuns(m, setupPrefix, once)},
			{
				// The shared task's bytes: its id changes at plan time, so the
				// setup re-runs (and re-locks through after) and every agent
				// runs again.
				Config: rerunFleetHCL(m, sharedV2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_fleet_file.task", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("prime_fleet_command.setup", plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectResourceAction(agent, plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectResourceAction("prime_sandbox_fleet.eval", plancheck.ResourceActionNoop),
				}},
				Check: wantRuns(m, setupPrefix, afterShared),
			},
			{
				// One member's own task: that member's agent alone.
				Config: rerunFleetHCL(m, oneOwn),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_fleet_file.own", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("prime_fleet_command.setup", plancheck.ResourceActionNoop),
					plancheck.ExpectResourceAction("prime_fleet_egress_policy.lock", plancheck.ResourceActionNoop),
					plancheck.ExpectResourceAction(agent, plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue(agent, tfjsonpath.New("results").AtMapKey("1")),
				}},
				Check: wantRuns(m, setupPrefix, afterOne),
			},
			{
				// The setup: re-opened, set up, locked again, every agent again.
				Config: rerunFleetHCL(m, setupV2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_fleet_egress_policy.lock", plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectResourceAction(agent, plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: wantRuns(m, setupPrefix, afterSetup),
			},
			{
				// The allow list: relocked in place, a new id, every agent
				// again, no setup.
				Config: rerunFleetHCL(m, allowV2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_fleet_egress_policy.lock", plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue("prime_fleet_egress_policy.lock", tfjsonpath.New("id")),
					plancheck.ExpectResourceAction("prime_fleet_command.setup", plancheck.ResourceActionNoop),
					plancheck.ExpectResourceAction(agent, plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: wantRuns(m, setupPrefix, afterAllow),
			},
			{
				// The same destinations, spelled otherwise: nothing is
				// written, the id stays, nothing runs.
				Config: rerunFleetHCL(m, respelled),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(agent, plancheck.ResourceActionNoop),
				}},
				Check: wantRuns(m, setupPrefix, afterAllow),
			},
			{
				// A route's host is a destination too.
				Config: rerunFleetHCL(m, routeV2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_fleet_egress_policy.lock", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("prime_fleet_command.setup", plancheck.ResourceActionNoop),
					plancheck.ExpectResourceAction(agent, plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: wantRuns(m, setupPrefix, afterRoute),
			},
		},
	})
}

// rerunSingleHCL is the egress guide's protocol on one sandbox: the task
// file in, the setup, the lock after it, and the agent named by the lock's
// and the task's id in triggers.
func rerunSingleHCL(m *mocktest.Mock, in rerunInputs) string {
	return m.Config(fmt.Sprintf(acctest.SandboxHCL("box", "rerun-single")+`
resource "prime_sandbox_file" "task" {
  sandbox_id = prime_sandbox.box.id
  path       = "/task/task.txt"
  content    = %[1]q
}

resource "prime_sandbox_command" "setup" {
  sandbox_id          = prime_sandbox_file.task.sandbox_id
  command             = %[2]q
  require_open_egress = true
}

resource "prime_egress_policy" "lock" {
  sandbox_id = prime_sandbox.box.id
  allow      = %[3]s
  routes     = ["https://%[4]s/v1"]
  after      = [prime_sandbox_command.setup.id]
}

resource "prime_sandbox_command" "agent" {
  sandbox_id = prime_egress_policy.lock.sandbox_id
  command    = "echo agent && cat /task/task.txt"
  triggers   = { lock = prime_egress_policy.lock.id, task = prime_sandbox_file.task.id }
}
`, in.shared, in.setup, in.allow, in.route))
}

// wantSingleRuns checks how many times the setup and the agent ran on
// prime_sandbox.box.
func wantSingleRuns(m *mocktest.Mock, setups, agents int) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		id, err := acctest.StateID(s, "prime_sandbox.box")
		if err != nil {
			return err
		}
		gotSetups := commandRunsBySandbox(m.Events(), "echo setup")[id]
		gotAgents := commandRunsBySandbox(m.Events(), "echo agent")[id]
		if gotSetups != setups || gotAgents != agents {
			return fmt.Errorf("the setup ran %d and the agent %d times, want %d and %d", gotSetups, gotAgents, setups, agents)
		}
		return nil
	}
}

// The same pattern on one sandbox: the task's bytes, the allow list and a
// route's host each run the agent again (the setup only when it changes);
// the lock's id changes with every enforced write and only then.
func TestAccRerun_singleAgentRunsAgainForEveryInput(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	v1 := rerunInputs{shared: "task v1", setup: "echo setup v1", allow: `["example.com"]`, route: acctest.RouteHost}
	taskV2 := v1.with(func(in *rerunInputs) { in.shared = "task v2" })
	allowV2 := taskV2.with(func(in *rerunInputs) { in.allow = `["example.com", "google.com"]` })
	respelled := allowV2.with(func(in *rerunInputs) { in.allow = `["Example.COM", "google.com."]` })
	routeV2 := respelled.with(func(in *rerunInputs) { in.route = "intercept2.example.net" })
	setupV2 := routeV2.with(func(in *rerunInputs) { in.setup = "echo setup v2" })
	agent := "prime_sandbox_command.agent"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{Config: rerunSingleHCL(m, v1), Check: wantSingleRuns(m, 1, 1)},
			{
				Config: rerunSingleHCL(m, taskV2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox_file.task", plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectResourceAction(agent, plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: wantSingleRuns(m, 1, 2),
			},
			{
				Config: rerunSingleHCL(m, allowV2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_egress_policy.lock", plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue("prime_egress_policy.lock", tfjsonpath.New("id")),
					plancheck.ExpectResourceAction(agent, plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					wantSingleRuns(m, 1, 3),
					resource.TestCheckResourceAttrPair("prime_egress_policy.lock", "id", agent, "triggers.lock"),
				),
			},
			{
				Config: rerunSingleHCL(m, respelled),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(agent, plancheck.ResourceActionNoop),
				}},
				Check: wantSingleRuns(m, 1, 3),
			},
			{
				Config: rerunSingleHCL(m, routeV2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_egress_policy.lock", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction(agent, plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: wantSingleRuns(m, 1, 4),
			},
			{
				Config: rerunSingleHCL(m, setupV2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_egress_policy.lock", plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectResourceAction(agent, plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: wantSingleRuns(m, 2, 5),
			},
		},
	})
}

// lockIDHCL is a fleet lock over the boxes, keyed by keyPrefix+index, and
// two agents on the boxes: "all" names the lock's id in triggers, "own"
// each member's generation in member_triggers.
func lockIDHCL(m *mocktest.Mock, keyPrefix string) string {
	return m.Config(acctest.FleetMemberBoxes(2) + fmt.Sprintf(`
resource "prime_fleet_egress_policy" "lock" {
  sandbox_ids = { for i, s in prime_sandbox.box : "%[1]s${i}" => s.id }
  allow       = ["example.com"]
}

locals {
  agent_ids  = { for i, s in prime_sandbox.box : tostring(i) => s.id }
  generation = { for k, m in prime_fleet_egress_policy.lock.members : trimprefix(k, "%[1]s") => m.generation }
}

resource "prime_fleet_command" "all" {
  sandbox_ids = local.agent_ids
  commands    = ["echo all-agent"]
  triggers    = { lock = prime_fleet_egress_policy.lock.id }
}

resource "prime_fleet_command" "own" {
  sandbox_ids     = local.agent_ids
  commands        = ["echo own-agent"]
  member_triggers = local.generation
}
`, keyPrefix))
}

// wantAgentRuns checks how many times each agent ran on each box.
func wantAgentRuns(m *mocktest.Mock, ids *[]string, all, own []int) resource.TestCheckFunc {
	return func(*terraform.State) error {
		gotAll, gotOwn := commandRunsBySandbox(m.Events(), "echo all-agent"), commandRunsBySandbox(m.Events(), "echo own-agent")
		for i, id := range *ids {
			if gotAll[id] != all[i] || gotOwn[id] != own[i] {
				return fmt.Errorf("box %d ran the all-agent %d and the own-agent %d times, want %d and %d", i, gotAll[id], gotOwn[id], all[i], own[i])
			}
		}
		return nil
	}
}

// A fleet lock's id changes when members it holds are written again (a
// member rewritten after drift), not when a member gets a new sandbox or
// keys are renamed; a member's generation changes with its own writes. So
// an agent naming the id runs every member again after a rewrite, and one
// naming the generations only the member written.
func TestAccRerun_fleetLockIDFollowsRewritesNotMembership(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	var ids []string
	lockID := statecheck.CompareValue(compare.ValuesSame())
	rewritten := statecheck.CompareValue(compare.ValuesDiffer())
	id := tfjsonpath.New("id")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: lockIDHCL(m, ""),
				ConfigStateChecks: []statecheck.StateCheck{
					rewritten.AddStateValue("prime_fleet_egress_policy.lock", id),
				},
				Check: resource.ComposeAggregateTestCheckFunc(acctest.BoxIDsInto(&ids, 2), wantAgentRuns(m, &ids, []int{1, 1}, []int{1, 1})),
			},
			{
				// Member 1 changed out of band: rewritten alone, a new id.
				PreConfig: func() {
					c := m.Client(t)
					st, err := c.PutEgressPolicy(mocktest.WaitCtx(t), ids[1], prime.EgressPolicy{Allowlist: []string{"evil.example.org"}})
					if err != nil {
						t.Fatal(err)
					}
					if _, err := c.WaitForEgressApplied(mocktest.WaitCtx(t), ids[1], st.Generation, st); err != nil {
						t.Fatal(err)
					}
				},
				Config: lockIDHCL(m, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectUnknownValue("prime_fleet_egress_policy.lock", id),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					rewritten.AddStateValue("prime_fleet_egress_policy.lock", id),
					lockID.AddStateValue("prime_fleet_egress_policy.lock", id),
				},
				Check: wantAgentRuns(m, &ids, []int{2, 2}, []int{1, 2}),
			},
			{
				// Member 1's sandbox is gone and replaced: locked anew alone,
				// the id stays; both agents run on the new sandbox only.
				PreConfig: func() {
					if err := m.Client(t).DeleteSandbox(mocktest.WaitCtx(t), ids[1]); err != nil {
						t.Fatal(err)
					}
				},
				Config: lockIDHCL(m, ""),
				ConfigStateChecks: []statecheck.StateCheck{
					lockID.AddStateValue("prime_fleet_egress_policy.lock", id),
				},
				Check: resource.ComposeAggregateTestCheckFunc(acctest.BoxIDsInto(&ids, 2), wantAgentRuns(m, &ids, []int{2, 1}, []int{1, 1})),
			},
			{
				// Keys renamed, same sandboxes: handed over, nothing written,
				// the id stays and nothing runs.
				Config: lockIDHCL(m, "member-"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_fleet_command.all", plancheck.ResourceActionNoop),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					lockID.AddStateValue("prime_fleet_egress_policy.lock", id),
				},
				Check: resource.ComposeAggregateTestCheckFunc(acctest.WantPolicyPuts(m, &ids, 1, 1), wantAgentRuns(m, &ids, []int{2, 1}, []int{1, 1})),
			},
		},
	})
}
