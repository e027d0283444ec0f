package sandbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// redoFleet is a 3-member fleet whose member_triggers are triggers, and a
// fleet command on its members.
func redoFleet(triggers string) string {
	return fmt.Sprintf(`
resource "prime_sandbox_fleet" "f" {
  name_prefix     = "redo"
  docker_image    = "python:3.12-slim"
  members         = ["a", "b", "c"]
  member_triggers = %s
}

resource "prime_fleet_command" "agent" {
  sandbox_ids = prime_sandbox_fleet.f.sandbox_ids
  commands    = ["echo agent-run"]
}
`, triggers)
}

// planRedoes checks a plan redoes exactly the given members: their
// sandbox IDs become unknown, the others keep theirs.
func planRedoes(redone ...string) plancheck.PlanCheck {
	var checks []plancheck.PlanCheck
	for _, k := range []string{"a", "b", "c"} {
		v := tfjsonpath.New("sandbox_ids").AtMapKey(k)
		if slices.Contains(redone, k) {
			checks = append(checks, plancheck.ExpectUnknownValue("prime_sandbox_fleet.f", v))
		} else {
			checks = append(checks, plancheck.ExpectKnownValue("prime_sandbox_fleet.f", v, knownvalue.NotNull()))
		}
	}
	return planChecks(append(checks, plancheck.ExpectResourceAction("prime_sandbox_fleet.f", plancheck.ResourceActionUpdate)))
}

// planChecks runs several plan checks as one.
type planChecks []plancheck.PlanCheck

func (p planChecks) CheckPlan(ctx context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, c := range p {
		c.CheckPlan(ctx, req, resp)
		if resp.Error != nil {
			return
		}
	}
}

// Redoing one member by key: a changed member_triggers entry deletes that
// member's sandbox and creates it again in place (same fleet id, new
// sandbox ID); the other members and their agent runs are untouched, and
// only the redone member's agent runs again. Setting an entry for the
// first time counts as a change; removing one redoes nothing.
func TestAccSandboxFleet_memberTriggersRedoOneMember(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	var first map[string]string
	var fleetID string
	redoneOnly := func(key string, runsOfNew int) func(s *terraform.State) error {
		return func(s *terraform.State) error {
			ids := fleetIDs(s)
			if id, _ := acctest.StateID(s, "prime_sandbox_fleet.f"); id != fleetID {
				return fmt.Errorf("fleet id %s became %s: a redo is in place", fleetID, id)
			}
			for k, id := range first {
				if changed := ids[k] != id; changed != (k == key) {
					return fmt.Errorf("members %v (were %v): want only %q to get a new sandbox", ids, first, key)
				}
			}
			runs := acctest.CommandRuns(m, "echo agent-run")
			for k, id := range ids {
				if want := map[bool]int{true: runsOfNew, false: 1}[k == key]; runs[id] != want {
					return fmt.Errorf("member %q (%s) ran the agent %d times, want %d (runs %v)", k, id, runs[id], want, runs)
				}
			}
			if key != "" && runs[first[key]] != 1 {
				return fmt.Errorf("the redone member's old sandbox ran the agent %d times, want 1", runs[first[key]])
			}
			if live := m.Stats().LiveSandboxes; live != 3 {
				return fmt.Errorf("%d live sandboxes, want 3 (the old one deleted)", live)
			}
			first = ids
			return nil
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: m.Config(redoFleet(`{ a = "1", c = "1" }`)),
				Check: func(s *terraform.State) error {
					first = fleetIDs(s)
					var err error
					fleetID, err = acctest.StateID(s, "prime_sandbox_fleet.f")
					return err
				},
			},
			{
				Config: m.Config(redoFleet(`{ a = "1", c = "2" }`)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					planRedoes("c"),
					plancheck.ExpectResourceAction("prime_fleet_command.agent", plancheck.ResourceActionUpdate),
				}},
				Check: redoneOnly("c", 1),
			},
			{
				// An entry set for the first time redoes its member.
				Config:           m.Config(redoFleet(`{ a = "1", b = "x", c = "2" }`)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{planRedoes("b")}},
				Check:            redoneOnly("b", 1),
			},
			{
				// A removed entry is recorded; nothing is redone or run.
				Config:           m.Config(redoFleet(`{ a = "1", c = "2" }`)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{planRedoes()}},
				Check:            redoneOnly("", 1),
			},
		},
	})
}

// An entry for a key the fleet does not have is a plan-time error naming
// it, before any API call.
func TestAccSandboxFleet_memberTriggersUnknownKey(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		Steps: []resource.TestStep{{
			Config:      m.Config(fleetConfig("size = 2", `member_triggers = { "2" = "x" }`)),
			PlanOnly:    true,
			ExpectError: acctest.ExpectErr(`member_triggers names "2", but the fleet's member keys are "0", "1".`),
		}},
	})
	m.NoAPICalls(t)
}

// The platform cannot report member_triggers: an import records the
// configured entries without redoing any member.
func TestAccSandboxFleet_memberTriggersAfterImportRedoNothing(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cfg := m.Config(fleetConfig("size = 2", `member_triggers = { "0" = "1", "1" = "1" }`))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				Config:             cfg,
				ResourceName:       "prime_sandbox_fleet.f",
				ImportState:        true,
				ImportStateKind:    resource.ImportBlockWithID,
				ImportStateId:      "label:fleet-test",
				ExpectNonEmptyPlan: true,
				ImportPlanChecks: resource.ImportPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox_fleet.f", plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue("prime_sandbox_fleet.f", tfjsonpath.New("sandbox_ids").AtMapKey("0"), knownvalue.NotNull()),
					plancheck.ExpectKnownValue("prime_sandbox_fleet.f", tfjsonpath.New("sandbox_ids").AtMapKey("1"), knownvalue.NotNull()),
				}},
			},
		},
	})
}

// redoChain is the evaluations guide's chain on a fleet with
// member_triggers: a task file, setup with egress open, the lock, the
// agent.
func redoChain(triggers string) string {
	return fmt.Sprintf(`
resource "prime_sandbox_fleet" "f" {
  name_prefix     = "chain"
  docker_image    = "python:3.12-slim"
  members         = ["a", "b", "c"]
  member_triggers = %s
}

resource "prime_fleet_file" "task" {
  sandbox_ids = prime_sandbox_fleet.f.sandbox_ids
  path        = "/task/prompt.txt"
  content     = "solve it"
}

resource "prime_fleet_command" "setup" {
  sandbox_ids         = prime_fleet_file.task.sandbox_ids
  commands            = ["echo chain-setup"]
  require_open_egress = true
}

resource "prime_fleet_egress_policy" "lock" {
  sandbox_ids = prime_sandbox_fleet.f.sandbox_ids
  allow       = ["example.com"]
  after       = [prime_fleet_command.setup.id]
}

resource "prime_fleet_command" "agent" {
  sandbox_ids = prime_fleet_egress_policy.lock.sandbox_ids
  commands    = ["cat /task/prompt.txt"]
  triggers    = { lock = prime_fleet_egress_policy.lock.id }
}
`, triggers)
}

// The guide's claim: everything keyed by sandbox_ids follows a redone
// member, and only it. Its new sandbox gets the task, runs the setup while
// open, is locked, and runs the agent (under the lock); the other members
// upload, set up, lock and run nothing.
func TestAccSandboxFleet_memberTriggersRedoFollowsTheChain(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	var first map[string]string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: m.Config(redoChain(`{}`)),
				Check:  func(s *terraform.State) error { first = fleetIDs(s); return nil },
			},
			{
				Config: m.Config(redoChain(`{ b = "1" }`)),
				Check: func(s *terraform.State) error {
					ids := fleetIDs(s)
					redone := ids["b"]
					if redone == first["b"] || ids["a"] != first["a"] || ids["c"] != first["c"] {
						return fmt.Errorf("members %v (were %v): want only b redone", ids, first)
					}
					uploads, setups, agents := map[string]int{}, map[string]int{}, map[string]int{}
					var setupBeforeLock, agentUnderLock bool
					applied := map[string]bool{}
					for _, e := range m.Events() {
						switch {
						case e.Type == primemock.EventFileUploaded:
							uploads[e.SandboxID]++
						case e.Type == primemock.EventPolicyApplied && e.Generation > 0:
							applied[e.SandboxID] = true
						case e.Type == primemock.EventCommandExecuted && e.Command == "echo chain-setup":
							setups[e.SandboxID]++
							if e.SandboxID == redone {
								setupBeforeLock = !applied[redone]
							}
						case e.Type == primemock.EventCommandExecuted && e.Command == "cat /task/prompt.txt":
							agents[e.SandboxID]++
							if e.SandboxID == redone {
								agentUnderLock = applied[redone]
							}
						}
					}
					for k, id := range ids {
						if uploads[id] < 1 || setups[id] != 1 || agents[id] != 1 {
							return fmt.Errorf("member %q (%s): %d uploads, %d setups, %d agent runs; want the task, one "+
								"setup, one agent run", k, id, uploads[id], setups[id], agents[id])
						}
					}
					if !setupBeforeLock || !agentUnderLock {
						return fmt.Errorf("redone member: setup before its lock %t, agent under its lock %t; want both",
							setupBeforeLock, agentUnderLock)
					}
					if !m.Reaches(t, redone, "example.com") || m.Reaches(t, redone, "google.com") {
						return fmt.Errorf("the redone member %s is not locked to example.com", redone)
					}
					return nil
				},
			},
		},
	})
}

// A redo whose delete the platform refuses fails the apply, keeps the
// member's sandbox and its recorded entry, so the next plan proposes the
// redo again, and the next apply does it.
func TestAccSandboxFleet_memberTriggersRedoRetriedAfterRefusedDelete(t *testing.T) {
	var refuse atomic.Bool
	m := mocktest.NewHooked(t, mocktest.Fast(), func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		if r.Method != http.MethodDelete || r.URL.Path != prime.APIPrefix+"/sandbox" || !refuse.CompareAndSwap(true, false) {
			return false
		}
		var req prime.BulkDeleteRequest
		_ = json.Unmarshal(body, &req)
		resp := prime.BulkDeleteResponse{Succeeded: []string{}, Message: "refused"}
		for _, id := range req.SandboxIDs {
			resp.Failed = append(resp.Failed, prime.BulkDeleteFailure{SandboxID: id, Error: "sandbox is busy"})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(resp)
		return true
	})
	var first map[string]string
	cfg := func(triggers string) string {
		return m.Config(fleetConfig(`members = ["a", "b"]`, "member_triggers = "+triggers))
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{Config: cfg(`{ b = "1" }`), Check: func(s *terraform.State) error { first = fleetIDs(s); return nil }},
			{
				PreConfig:   func() { refuse.Store(true) },
				Config:      cfg(`{ b = "2" }`),
				ExpectError: acctest.ExpectErr(`the platform did not delete sandbox`),
			},
			{
				// The refused redo is still to do: b is planned anew.
				Config: cfg(`{ b = "2" }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectUnknownValue("prime_sandbox_fleet.f", tfjsonpath.New("sandbox_ids").AtMapKey("b")),
					plancheck.ExpectKnownValue("prime_sandbox_fleet.f", tfjsonpath.New("sandbox_ids").AtMapKey("a"), knownvalue.NotNull()),
				}},
				Check: func(s *terraform.State) error {
					if ids := fleetIDs(s); ids["b"] == first["b"] || ids["a"] != first["a"] {
						return fmt.Errorf("members %v (were %v): want b redone now, a kept", ids, first)
					}
					return nil
				},
			},
		},
	})
}
