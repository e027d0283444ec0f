package egress_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// fleetPolicyHCL is a prime_fleet_egress_policy "lock" over the boxes, with
// the interception route; listLine is e.g. `allow = ["example.com"]`.
func fleetPolicyHCL(listLine string, extra ...string) string {
	return fmt.Sprintf(`
resource "prime_fleet_egress_policy" "lock" {
  sandbox_ids = %s
  %s
  routes      = ["https://%s/v1"]
  %s
}
`, acctest.FleetMemberIDs, listLine, acctest.RouteHost, strings.Join(extra, "\n  "))
}

// fleetReach checks that every box reaches exactly the hosts expected.
func fleetReach(t *testing.T, m *mocktest.Mock, ids *[]string, want map[string]bool) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for i, id := range *ids {
			for host, expected := range want {
				if got := m.Reaches(t, id, host); got != expected {
					return fmt.Errorf("member %d (%s): %s reachable = %t, want %t", i, id, host, got, expected)
				}
			}
		}
		return nil
	}
}

// fleetLockOver is a prime_fleet_egress_policy "lock" allowing example.com
// on sandboxIDs (an HCL map expression).
func fleetLockOver(sandboxIDs string) string {
	return fmt.Sprintf(`
resource "prime_fleet_egress_policy" "lock" {
  sandbox_ids = %s
  allow       = ["example.com"]
}
`, sandboxIDs)
}

// policyWriteRefuser answers one sandbox's egress policy writes with 403,
// as a platform that forbids them would (a part of a mocktest.Hook).
type policyWriteRefuser struct{ id atomic.Value }

func newPolicyWriteRefuser() *policyWriteRefuser {
	p := &policyWriteRefuser{}
	p.id.Store("")
	return p
}

// refuse sets the sandbox whose writes are refused ("": none).
func (p *policyWriteRefuser) refuse(id string) { p.id.Store(id) }

// handle answers r when it is a refused write.
func (p *policyWriteRefuser) handle(w http.ResponseWriter, r *http.Request) bool {
	id := p.id.Load().(string)
	if id == "" || r.Method != http.MethodPut || r.URL.Path != prime.APIPrefix+"/sandbox/"+id+"/egress-policy" {
		return false
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusForbidden)
	_, _ = w.Write([]byte(`{"detail":"injected: forbidden"}`))
	return true
}

// The policy is enforced on every member; a list change relocks every
// member in place; a new member is the only one written when it is added;
// removing the policy restores open egress on every member.
func TestAccFleetEgressPolicy_locksRelocksAndAddsMembers(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	var ids []string
	members := tfjsonpath.New("members")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: m.Config(acctest.FleetMemberBoxes(2) + fleetPolicyHCL(`allow = ["example.com"]`)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue("prime_fleet_egress_policy.lock", tfjsonpath.New("effective_allow"),
						knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact(acctest.RouteHost), knownvalue.StringExact("example.com")})),
					plancheck.ExpectUnknownValue("prime_fleet_egress_policy.lock", members.AtMapKey("0")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("prime_fleet_egress_policy.lock", members.AtMapKey("1").AtMapKey("applied"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue("prime_fleet_egress_policy.lock", members.AtMapKey("1").AtMapKey("generation"), knownvalue.Int64Exact(1)),
					// Three fields a member: applied says what applied_generation
					// said, and state stays within 600 bytes a member.
					statecheck.ExpectKnownValue("prime_fleet_egress_policy.lock", members.AtMapKey("1"), knownvalue.ObjectExact(map[string]knownvalue.Check{
						"sandbox_id": knownvalue.NotNull(), "generation": knownvalue.Int64Exact(1), "applied": knownvalue.Bool(true)})),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					acctest.BoxIDsInto(&ids, 2),
					fleetReach(t, m, &ids, map[string]bool{"example.com": true, "google.com": false, acctest.RouteHost: true}),
					acctest.WantPolicyPuts(m, &ids, 1, 1),
				),
			},
			{
				// A refresh finds every member enforced: nothing changes.
				RefreshState: true,
			},
			{
				Config: m.Config(acctest.FleetMemberBoxes(2) + fleetPolicyHCL(`allow = ["google.com"]`)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_fleet_egress_policy.lock", plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue("prime_fleet_egress_policy.lock", members.AtMapKey("0").AtMapKey("generation")),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("prime_fleet_egress_policy.lock", "members.0.generation", "2"),
					resource.TestCheckResourceAttr("prime_fleet_egress_policy.lock", "members.1.generation", "2"),
					fleetReach(t, m, &ids, map[string]bool{"example.com": false, "google.com": true}),
					acctest.WantPolicyPuts(m, &ids, 2, 2),
				),
			},
			{
				Config: m.Config(acctest.FleetMemberBoxes(3) + fleetPolicyHCL(`allow = ["google.com"]`)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_fleet_egress_policy.lock", plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue("prime_fleet_egress_policy.lock", members.AtMapKey("0").AtMapKey("generation"), knownvalue.Int64Exact(2)),
					plancheck.ExpectUnknownValue("prime_fleet_egress_policy.lock", members.AtMapKey("2")),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					acctest.BoxIDsInto(&ids, 3),
					fleetReach(t, m, &ids, map[string]bool{"example.com": false, "google.com": true}),
					acctest.WantPolicyPuts(m, &ids, 2, 2, 1),
					resource.TestCheckResourceAttr("prime_fleet_egress_policy.lock", "members.2.generation", "1"),
				),
			},
			{
				// Without the policy, every member is open again and enforced.
				Config: m.Config(acctest.FleetMemberBoxes(3)),
				Check: resource.ComposeAggregateTestCheckFunc(
					fleetReach(t, m, &ids, map[string]bool{"example.com": true, "google.com": true}),
					acctest.WantPolicyPuts(m, &ids, 3, 3, 2),
					func(*terraform.State) error {
						for _, id := range ids {
							st, err := m.Client(t).GetEgressPolicy(mocktest.WaitCtx(t), id)
							if err != nil {
								return err
							}
							if !st.Policy.IsOpen() || !st.Enforces(st.Generation) {
								return fmt.Errorf("after destroy sandbox %s holds %+v, want open and applied", id, st)
							}
						}
						return nil
					},
				),
			},
		},
	})
}

// With a data plane that never applies, the apply fails closed naming every
// member with the fail-closed text, nothing is recorded (the next plan
// creates the policy again) and the agent that depends on it never runs.
func TestAccFleetEgressPolicy_failsClosedListingMembers(t *testing.T) {
	o := mocktest.Fast()
	o.NeverApply = true
	m := mocktest.New(t, o)
	cfg := m.Config(acctest.FleetMemberBoxes(2) + fleetPolicyHCL(`allow = ["example.com"]`, `timeouts { create = "1s" }`) + `
resource "prime_fleet_command" "agent" {
  sandbox_ids = prime_fleet_egress_policy.lock.sandbox_ids
  commands    = ["echo agent"]
  triggers    = { lock = prime_fleet_egress_policy.lock.id }
}
`)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: cfg,
				ExpectError: acctest.ExpectInOrder(`Egress policy not enforced on every member`, `2 of 2 members failed`,
					`Member "0": sandbox`, `was accepted (generation 1) but is not enforced after 1s (the platform reports applied_generation -1, applied false). Failing closed`,
					`Member "1": sandbox`, `was accepted (generation 1) but is not enforced after 1s`),
			},
			{
				Config:             cfg,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_fleet_egress_policy.lock", plancheck.ResourceActionCreate),
					plancheck.ExpectResourceAction("prime_fleet_command.agent", plancheck.ResourceActionCreate),
				}},
			},
		},
	})
	for _, e := range m.Events() {
		switch {
		case e.Type == primemock.EventCommandExecuted && strings.HasPrefix(e.Command, "echo agent"):
			t.Fatalf("the agent ran although the policy was never enforced: %+v", e)
		case e.Type == primemock.EventPolicyPut && e.Policy.IsOpen():
			t.Fatalf("egress was reopened (event %d)", e.Seq)
		}
	}
	if puts := acctest.PolicyPutsBySandbox(m); len(puts) != 2 {
		t.Fatalf("policy writes per sandbox %v; want one on each of the 2 members", puts)
	}
}

// A member changed out of band is refreshed as not applied, and the next
// apply rewrites that member only. A member whose sandbox is deleted drops
// out, and its replacement sandbox is locked in place.
func TestAccFleetEgressPolicy_driftAndGoneMembersRewriteOnlyThem(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cfg := m.Config(acctest.FleetMemberBoxes(2) + fleetPolicyHCL(`allow = ["example.com"]`))
	var ids []string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{Config: cfg, Check: acctest.BoxIDsInto(&ids, 2)},
			{
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
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_fleet_egress_policy.lock", plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue("prime_fleet_egress_policy.lock", tfjsonpath.New("members").AtMapKey("0").AtMapKey("generation"),
						knownvalue.Int64Exact(1)),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					acctest.WantPolicyPuts(m, &ids, 1, 3),
					resource.TestCheckResourceAttr("prime_fleet_egress_policy.lock", "members.1.generation", "3"),
					fleetReach(t, m, &ids, map[string]bool{"example.com": true, "evil.example.org": false}),
				),
			},
			{
				PreConfig: func() {
					if err := m.Client(t).DeleteSandbox(mocktest.WaitCtx(t), ids[1]); err != nil {
						t.Fatal(err)
					}
				},
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox.box[1]", plancheck.ResourceActionCreate),
					plancheck.ExpectResourceAction("prime_fleet_egress_policy.lock", plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue("prime_fleet_egress_policy.lock", tfjsonpath.New("members").AtMapKey("1")),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					acctest.BoxIDsInto(&ids, 2),
					acctest.WantPolicyPuts(m, &ids, 1, 1),
					fleetReach(t, m, &ids, map[string]bool{"example.com": true, "google.com": false}),
				),
			},
		},
	})
}

// Destroy restores every member, except one holding a newer policy written
// by someone else (the reuse guard), which is left in place.
func TestAccFleetEgressPolicy_destroyLeavesNewerWriterInPlace(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	var ids []string
	evil := prime.EgressPolicy{Allowlist: []string{"evil.example.org"}}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: m.Config(acctest.FleetMemberBoxes(2) + fleetPolicyHCL(`allow = []`)),
				Check: resource.ComposeAggregateTestCheckFunc(
					acctest.BoxIDsInto(&ids, 2),
					fleetReach(t, m, &ids, map[string]bool{"example.com": false, acctest.RouteHost: true}),
				),
			},
			{
				PreConfig: func() {
					st, err := m.Client(t).PutEgressPolicy(mocktest.WaitCtx(t), ids[1], evil)
					if err != nil {
						t.Fatal(err)
					}
					if _, err := m.Client(t).WaitForEgressApplied(mocktest.WaitCtx(t), ids[1], st.Generation, st); err != nil {
						t.Fatal(err)
					}
				},
				Config: m.Config(acctest.FleetMemberBoxes(2)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_fleet_egress_policy.lock", plancheck.ResourceActionDestroy),
				}},
				Check: func(*terraform.State) error {
					c := m.Client(t)
					open, err := c.GetEgressPolicy(mocktest.WaitCtx(t), ids[0])
					if err != nil {
						return err
					}
					if !open.Policy.IsOpen() || !open.Enforces(open.Generation) {
						return fmt.Errorf("member 0 holds %+v after destroy, want open and applied", open)
					}
					other, err := c.GetEgressPolicy(mocktest.WaitCtx(t), ids[1])
					if err != nil {
						return err
					}
					if !prime.SamePolicy(other.Policy, evil) || other.Generation != 2 {
						return fmt.Errorf("member 1 holds %+v after destroy, want the newer writer's generation 2 left in place", other)
					}
					return nil
				},
			},
		},
	})
}

// Plan-time errors name the attribute as prime_egress_policy does, before
// any API call.
func TestAccFleetEgressPolicy_planTimeValidation(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"neither list", `routes = []`, "allow: exactly one of allow and block must be set"},
		{"both lists", "allow = []\n block = []", "allow and block are mutually exclusive"},
		{"bad entry", `allow = ["ok.com", "a b.com"]`, `allow: "a b.com": inner whitespace is not allowed`},
		{"lone star", `block = ["*"]`, `block: "*" is not an entry`},
		{"block cuts a route", "block = [\"*.example.net\"]\n routes = [\"https://intercept.example.net/v1\"]",
			`block: "*.example.net" blocks the framework route host intercept.example.net (from routes)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := mocktest.New(t, mocktest.Fast())
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: acctest.ProviderFactories(t),
				Steps: []resource.TestStep{{
					Config: m.Config(fmt.Sprintf(`
resource "prime_fleet_egress_policy" "p" {
  sandbox_ids = { a = "sbx-a", b = "sbx-b" }
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

// The fleet's version of the retried create: members whose lock failed and
// members whose lock held are both left unrecorded by the failed create;
// after the retry, destroy reopens every one of them.
func TestAccFleetEgressPolicy_destroyAfterRetriedCreateReopens(t *testing.T) {
	refuse := newPolicyWriteRefuser()
	var unenforced atomic.Value // a sandbox whose policy is reported never enforced
	unenforced.Store("")
	var m *mocktest.Mock
	hook := func(w http.ResponseWriter, r *http.Request, _ []byte) bool {
		switch {
		case refuse.handle(w, r):
			return true
		case r.Method == http.MethodGet && r.URL.Path == prime.APIPrefix+"/sandbox/"+unenforced.Load().(string)+"/egress-policy":
			rec := httptest.NewRecorder()
			m.Server.ServeHTTP(rec, r)
			var st prime.EgressPolicyStatus
			if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
				t.Errorf("decoding the mock's egress policy: %v", err)
			}
			st.AppliedGeneration, st.Applied = -1, false
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(st)
			return true
		}
		return false
	}
	m = mocktest.NewHooked(t, mocktest.Fast(), hook)
	var ids []string
	cfg := m.Config(acctest.FleetMemberBoxes(3) + fleetPolicyHCL(`allow = ["example.com"]`, `timeouts { create = "1s" }`))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{Config: m.Config(acctest.FleetMemberBoxes(3)), Check: acctest.BoxIDsInto(&ids, 3)},
			{
				// Member 0 is never enforced, member 2's write is refused,
				// member 1 locks: nothing is recorded.
				PreConfig: func() {
					unenforced.Store(ids[0])
					refuse.refuse(ids[2])
				},
				Config:      cfg,
				ExpectError: acctest.ExpectInOrder(`Egress policy not enforced on every member`, `2 of 3 members failed`),
			},
			{
				PreConfig: func() {
					unenforced.Store("")
					refuse.refuse("")
				},
				Config: cfg,
				Check:  fleetReach(t, m, &ids, map[string]bool{"example.com": true, "google.com": false}),
			},
			{
				Config: m.Config(acctest.FleetMemberBoxes(3)),
				Check:  fleetReach(t, m, &ids, map[string]bool{"example.com": true, "google.com": true}),
			},
		},
	})
}

// A key renamed (same sandbox), and two keys swapping sandboxes: the
// sandboxes are handed over, never restored by the old key while the new
// one locks them. The hook delays every reopening write, which made the
// old code's restore land after the lock.
func TestAccFleetEgressPolicy_movedSandboxesStayLocked(t *testing.T) {
	hook := func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/egress-policy") && !bytes.Contains(body, []byte("example.com")) {
			time.Sleep(300 * time.Millisecond) // a slow reopening write: the race, made deterministic
		}
		return false
	}
	m := mocktest.NewHooked(t, mocktest.Fast(), hook)
	var ids []string
	policy := fleetLockOver
	locked := map[string]bool{"example.com": true, "google.com": false}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: m.Config(acctest.FleetMemberBoxes(2) + policy(`{ "0" = prime_sandbox.box[0].id, "1" = prime_sandbox.box[1].id }`)),
				Check:  resource.ComposeAggregateTestCheckFunc(acctest.BoxIDsInto(&ids, 2), fleetReach(t, m, &ids, locked)),
			},
			{
				Config: m.Config(acctest.FleetMemberBoxes(2) + policy(`{ "a" = prime_sandbox.box[0].id, "1" = prime_sandbox.box[1].id }`)),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("prime_fleet_egress_policy.lock", "members.a.applied", "true"),
					fleetReach(t, m, &ids, locked),
					acctest.WantPolicyPuts(m, &ids, 1, 1), // handed over: nothing written
				),
			},
			{
				Config: m.Config(acctest.FleetMemberBoxes(2) + policy(`{ "a" = prime_sandbox.box[1].id, "1" = prime_sandbox.box[0].id }`)),
				Check:  resource.ComposeAggregateTestCheckFunc(fleetReach(t, m, &ids, locked), acctest.WantPolicyPuts(m, &ids, 1, 1)),
			},
			{
				Config:      m.Config(acctest.FleetMemberBoxes(2) + policy(`{ "a" = prime_sandbox.box[0].id, "b" = prime_sandbox.box[0].id }`)),
				ExpectError: acctest.ExpectInOrder(`sandbox_ids: keys "a" and "b" both name sandbox`),
			},
			{
				Config: m.Config(acctest.FleetMemberBoxes(2)),
				Check:  fleetReach(t, m, &ids, map[string]bool{"example.com": true, "google.com": true}),
			},
		},
	})
}

// A member moved to another sandbox whose previous sandbox cannot be
// restored is not forgotten: the apply fails, the member stays on its old
// sandbox in state, and the next apply restores the old sandbox and locks
// the new one.
func TestAccFleetEgressPolicy_failedRestoreOfMovedMemberIsRetried(t *testing.T) {
	refuse := newPolicyWriteRefuser()
	m := mocktest.NewHooked(t, mocktest.Fast(), func(w http.ResponseWriter, r *http.Request, _ []byte) bool { return refuse.handle(w, r) })
	var ids []string
	policy := func(i int) string { return fleetLockOver(fmt.Sprintf(`{ "0" = prime_sandbox.box[%d].id }`, i)) }
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{Config: m.Config(acctest.FleetMemberBoxes(2) + policy(0)), Check: acctest.BoxIDsInto(&ids, 2)},
			{
				PreConfig: func() { refuse.refuse(ids[0]) },
				Config:    m.Config(acctest.FleetMemberBoxes(2) + policy(1)),
				ExpectError: acctest.ExpectInOrder(`Egress not restored`, `so no member was locked, moved or relocked in this apply`,
					`Member "0": restoring unrestricted egress on sandbox`),
			},
			{
				PreConfig: func() { refuse.refuse("") },
				Config:    m.Config(acctest.FleetMemberBoxes(2) + policy(1)),
				Check: func(*terraform.State) error {
					if !m.Reaches(t, ids[0], "google.com") {
						return fmt.Errorf("sandbox %s (the member's previous sandbox) is still restricted after the retry", ids[0])
					}
					if m.Reaches(t, ids[1], "google.com") {
						return fmt.Errorf("sandbox %s (the member's new sandbox) is not locked after the retry", ids[1])
					}
					return nil
				},
			},
		},
	})
}

// A sandbox handed to another key while a third sandbox cannot be
// restored: nothing moves until the restore succeeds, and the handed-over
// sandbox keeps its record and baseline throughout, so destroy still
// reopens it.
func TestAccFleetEgressPolicy_handoverWaitsForFailedRestore(t *testing.T) {
	refuse := newPolicyWriteRefuser()
	m := mocktest.NewHooked(t, mocktest.Fast(), func(w http.ResponseWriter, r *http.Request, _ []byte) bool { return refuse.handle(w, r) })
	var ids []string
	policy := fleetLockOver
	moved := m.Config(acctest.FleetMemberBoxes(2) + policy(`{ "b" = prime_sandbox.box[0].id }`))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: m.Config(acctest.FleetMemberBoxes(2) + policy(`{ "a" = prime_sandbox.box[0].id, "b" = prime_sandbox.box[1].id }`)),
				Check:  acctest.BoxIDsInto(&ids, 2),
			},
			{
				PreConfig:   func() { refuse.refuse(ids[1]) },
				Config:      moved,
				ExpectError: acctest.ExpectInOrder(`Egress not restored`, `Member "b": restoring unrestricted egress on sandbox`),
			},
			{
				PreConfig: func() { refuse.refuse("") },
				Config:    moved,
				Check: resource.ComposeAggregateTestCheckFunc(
					func(s *terraform.State) error {
						if got := s.RootModule().Resources["prime_fleet_egress_policy.lock"].Primary.Attributes["members.b.sandbox_id"]; got != ids[0] {
							return fmt.Errorf("member b is on %s, want %s", got, ids[0])
						}
						if m.Reaches(t, ids[0], "google.com") || !m.Reaches(t, ids[1], "google.com") {
							return fmt.Errorf("want %s locked and %s open", ids[0], ids[1])
						}
						return nil
					},
					acctest.WantPolicyPuts(m, &ids, 1, 2), // box 0: its first lock only; box 1: lock, then the restore
				),
			},
			{
				Config: m.Config(acctest.FleetMemberBoxes(2)),
				Check:  fleetReach(t, m, &ids, map[string]bool{"example.com": true, "google.com": true}),
			},
		},
	})
}
