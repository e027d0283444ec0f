package network_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
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
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// networkHCL is a tool server and a 3-member agent fleet on one network:
// rules (HCL list) and the agents' tags (HCL list).
func networkHCL(rules, agentTags string) string { return networkSizedHCL(3, rules, agentTags) }

// networkSizedHCL is networkHCL with a fleet of size agents.
func networkSizedHCL(size int, rules, agentTags string) string {
	return fmt.Sprintf(acctest.SandboxHCL("tool", "tool")+`
resource "prime_sandbox_fleet" "agents" {
  name_prefix  = "agent"
  docker_image = "python:3.12-slim"
  size         = %d
}

resource "prime_sandbox_network" "net" {
  name  = "eval-net"
  rules = %s
}

resource "prime_sandbox_network_member" "tool" {
  network_id = prime_sandbox_network.net.id
  sandbox_id = prime_sandbox.tool.id
  tags       = ["tools"]
}

resource "prime_sandbox_network_member" "agents" {
  network_id  = prime_sandbox_network.net.id
  sandbox_ids = prime_sandbox_fleet.agents.sandbox_ids
  tags        = %s
}
`, size, rules, agentTags)
}

const agentsToTool = `[{ from = "tag:agent", to = "tag:tools", ports = [8080] }]`

// networkIDs reads the tool's and the agents' sandbox IDs from state.
func networkIDs(tool *string, agents *[]string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		id, err := acctest.StateID(s, "prime_sandbox.tool")
		if err != nil {
			return err
		}
		*tool = id
		attrs := s.RootModule().Resources["prime_sandbox_fleet.agents"].Primary.Attributes
		*agents = (*agents)[:0]
		for i := range 3 {
			*agents = append(*agents, attrs[fmt.Sprintf("sandbox_ids.%d", i)])
		}
		return nil
	}
}

// reach checks the mock's reachability between members: want[i] is whether
// pair i (from, to, port) connects.
type reachCase struct {
	from, to func() string
	port     int
	want     bool
}

func checkReach(m *mocktest.Mock, cases ...reachCase) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for _, c := range cases {
			from, to := c.from(), c.to()
			if got, why := m.PeerReachable(from, to, c.port); got != c.want {
				return fmt.Errorf("%s -> %s:%d reachable = %t (%s), want %t", from, to, c.port, got, why, c.want)
			}
		}
		return nil
	}
}

// networkMemberTags is the tags the mock holds for sandbox id on the
// network in state.
func networkMemberTags(t *testing.T, m *mocktest.Mock, s *terraform.State, id string) ([]string, bool) {
	netID, err := acctest.StateID(s, "prime_sandbox_network.net")
	if err != nil {
		t.Fatal(err)
	}
	n, err := m.Client(t).GetNetwork(mocktest.WaitCtx(t), netID)
	if err != nil {
		t.Fatal(err)
	}
	mem, ok := n.Member(id)
	return mem.Tags, ok
}

// A tool server and a 3-member fleet join one network; the mock lets
// agents reach the tool only on the allowed port and direction. Rules and
// tags change in place; a member removed out of band is drift that the next
// apply puts back; the single membership and the network import; destroy
// leaves no network and no sandbox.
func TestAccSandboxNetwork_rulesMembersAndDrift(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	var tool string
	var agents []string
	toolID := func() string { return tool }
	agent := func(i int) func() string { return func() string { return agents[i] } }
	var netID string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy: func(s *terraform.State) error {
			if err := m.CheckNoLiveSandboxes(s); err != nil {
				return err
			}
			if _, err := m.Client(t).GetNetwork(mocktest.WaitCtx(t), netID); err == nil {
				return fmt.Errorf("network %s still exists after destroy", netID)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: m.Config(networkHCL(agentsToTool, `["agent"]`)),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("prime_sandbox_network_member.agents", tfjsonpath.New("members").AtMapKey("2").AtMapKey("tags"),
						knownvalue.SetExact([]knownvalue.Check{knownvalue.StringExact("agent")})),
					statecheck.ExpectKnownValue("prime_sandbox_network_member.agents", tfjsonpath.New("host"), knownvalue.Null()),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					networkIDs(&tool, &agents),
					func(s *terraform.State) error {
						netID, _ = acctest.StateID(s, "prime_sandbox_network.net")
						attrs := s.RootModule().Resources["prime_sandbox_network_member.tool"].Primary.Attributes
						if attrs["host"] != tool+".sandbox.internal" || attrs["id"] != netID+"/"+tool {
							return fmt.Errorf("tool member host %q, id %q", attrs["host"], attrs["id"])
						}
						if got := s.RootModule().Resources["prime_sandbox_network_member.agents"].Primary.Attributes["members.1.host"]; got != agents[1]+".sandbox.internal" {
							return fmt.Errorf("agent 1 host %q", got)
						}
						return nil
					},
					checkReach(m,
						reachCase{agent(0), toolID, 8080, true}, reachCase{agent(2), toolID, 8080, true},
						reachCase{agent(0), toolID, 22, false},     // a port no rule lists
						reachCase{toolID, agent(0), 8080, false},   // rules are directed
						reachCase{agent(0), agent(1), 8080, false}, // agents are not tools
					),
					checkNetworkCreateSentRules(t, m),
				),
			},
			{
				// Rules replace in place: the network keeps its ID.
				Config: m.Config(networkHCL(`[
    { from = "tag:agent", to = "tag:tools", ports = [8080] },
    { from = "tag:tools", to = "tag:agent", ports = [9000] },
  ]`, `["agent"]`)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox_network.net", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("prime_sandbox_network_member.agents", plancheck.ResourceActionNoop),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttrPtr("prime_sandbox_network.net", "id", &netID),
					checkReach(m, reachCase{toolID, agent(1), 9000, true}, reachCase{agent(1), toolID, 9000, false}),
				),
			},
			{
				// Tags replace in place on every member.
				Config: m.Config(networkHCL(agentsToTool, `["agent", "worker"]`)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox_network_member.agents", plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue("prime_sandbox_network_member.agents", tfjsonpath.New("members").AtMapKey("0").AtMapKey("tags"),
						knownvalue.SetExact([]knownvalue.Check{knownvalue.StringExact("agent"), knownvalue.StringExact("worker")})),
				}},
				Check: func(s *terraform.State) error {
					for i, id := range agents {
						tags, ok := networkMemberTags(t, m, s, id)
						if !ok || !slices.Equal(tags, []string{"agent", "worker"}) {
							return fmt.Errorf("agent %d holds %v (member %t), want [agent worker]", i, tags, ok)
						}
					}
					return checkReach(m, reachCase{toolID, agent(1), 9000, false})(s)
				},
			},
			{
				// One member removed out of band is drift, put back in place.
				PreConfig: func() {
					if err := m.Client(t).RemoveNetworkMember(mocktest.WaitCtx(t), netID, agents[1]); err != nil {
						t.Fatal(err)
					}
				},
				Config: m.Config(networkHCL(agentsToTool, `["agent", "worker"]`)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox_network_member.agents", plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue("prime_sandbox_network_member.agents", tfjsonpath.New("members").AtMapKey("1").AtMapKey("sandbox_id"),
						knownvalue.StringFunc(func(v string) error {
							if v != agents[1] {
								return fmt.Errorf("planned %s, want %s", v, agents[1])
							}
							return nil
						})),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkReach(m, reachCase{agent(1), toolID, 8080, true}),
					func(*terraform.State) error {
						if puts := memberPuts(m, agents[1]); puts != 3 {
							return fmt.Errorf("agent 1 was put %d times, want 3 (join, tags, re-join)", puts)
						}
						if puts := memberPuts(m, agents[0]); puts != 2 {
							return fmt.Errorf("agent 0 was put %d times, want 2: the re-join touches only the removed member", puts)
						}
						return nil
					},
				),
			},
			{
				// Rules and tags changed outside Terraform are drift: the next
				// apply replaces both in place, touching only the drifted member.
				PreConfig: func() {
					c := m.Client(t)
					if err := c.ReplaceNetworkRules(mocktest.WaitCtx(t), netID, []prime.NetworkRule{{From: "*", To: "*", Ports: []int{22}}}); err != nil {
						t.Fatal(err)
					}
					if err := c.PutNetworkMember(mocktest.WaitCtx(t), netID, agents[2], []string{"intruder"}); err != nil {
						t.Fatal(err)
					}
				},
				Config: m.Config(networkHCL(agentsToTool, `["agent", "worker"]`)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox_network.net", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("prime_sandbox_network_member.agents", plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkReach(m, reachCase{agent(0), agent(1), 22, false}, reachCase{agent(2), toolID, 8080, true}),
					func(s *terraform.State) error {
						if tags, _ := networkMemberTags(t, m, s, agents[2]); !slices.Equal(tags, []string{"agent", "worker"}) {
							return fmt.Errorf("agent 2 holds %v, want [agent worker]", tags)
						}
						if puts := memberPuts(m, agents[0]); puts != 2 {
							return fmt.Errorf("agent 0 was put %d times, want 2: only the drifted member is rewritten", puts)
						}
						return nil
					},
				),
			},
			{
				// The fleet grows: only the new member joins.
				Config: m.Config(networkSizedHCL(4, agentsToTool, `["agent", "worker"]`)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox_network_member.agents", plancheck.ResourceActionUpdate),
				}},
				Check: func(s *terraform.State) error {
					fourth := s.RootModule().Resources["prime_sandbox_fleet.agents"].Primary.Attributes["sandbox_ids.3"]
					if tags, ok := networkMemberTags(t, m, s, fourth); !ok || !slices.Equal(tags, []string{"agent", "worker"}) {
						return fmt.Errorf("the new member %s holds %v (member %t)", fourth, tags, ok)
					}
					if puts := memberPuts(m, agents[0]); puts != 2 {
						return fmt.Errorf("agent 0 was put %d times, want 2: growing touches only the new member", puts)
					}
					return nil
				},
			},
			{
				// The fleet shrinks: the removed members' sandboxes are gone
				// (so off the network); the membership records the rest.
				Config: m.Config(networkSizedHCL(2, agentsToTool, `["agent", "worker"]`)),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("prime_sandbox_network_member.agents", "members.%", "2"),
					checkReach(m, reachCase{agent(1), toolID, 8080, true}),
					func(s *terraform.State) error {
						if _, ok := networkMemberTags(t, m, s, agents[2]); ok {
							return fmt.Errorf("removed agent 2 (%s) is still on the network", agents[2])
						}
						return nil
					},
				),
			},
			{
				ResourceName:      "prime_sandbox_network_member.tool",
				ImportState:       true,
				ImportStateVerify: true,
			},
			{
				ResourceName:      "prime_sandbox_network.net",
				ImportState:       true,
				ImportStateVerify: true,
			},
		},
	})
}

// memberPuts counts the joins and tag replacements of sandbox id.
func memberPuts(m *mocktest.Mock, id string) int {
	n := 0
	for _, e := range m.Events() {
		if e.Type == primemock.EventNetworkMemberPut && e.SandboxID == id {
			n++
		}
	}
	return n
}

// checkNetworkCreateSentRules: the create body names rules explicitly (the
// published default is contradictory, so it is never left to it).
func checkNetworkCreateSentRules(t *testing.T, m *mocktest.Mock) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for _, r := range m.Requests() {
			if r.Method == http.MethodPost && r.Path == prime.APIPrefix+"/sandbox/networks" {
				var body map[string]json.RawMessage
				if err := json.Unmarshal(r.Body, &body); err != nil {
					t.Fatal(err)
				}
				if _, ok := body["rules"]; !ok {
					return fmt.Errorf("network create body %s has no rules", r.Body)
				}
				return nil
			}
		}
		return fmt.Errorf("no network create was sent")
	}
}

// A network without rules is created with rules = [] sent, so no member
// reaches another, whichever default the platform has (the mock's knob set
// to allow everything when rules are left out).
func TestAccSandboxNetwork_emptyRulesAreSent(t *testing.T) {
	o := mocktest.Fast()
	o.NetworkDefaultAllow = true
	m := mocktest.New(t, o)
	var a, b string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config: m.Config(`
resource "prime_sandbox" "box" {
  count        = 2
  name         = "box-${count.index}"
  docker_image = "python:3.12-slim"
}
resource "prime_sandbox_network" "net" {
  name = "closed"
}
resource "prime_sandbox_network_member" "box" {
  count      = 2
  network_id = prime_sandbox_network.net.id
  sandbox_id = prime_sandbox.box[count.index].id
}
`),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("prime_sandbox_network.net", tfjsonpath.New("rules"), knownvalue.ListSizeExact(0)),
				statecheck.ExpectKnownValue("prime_sandbox_network_member.box[0]", tfjsonpath.New("tags"), knownvalue.SetSizeExact(0)),
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				func(s *terraform.State) error {
					a, _ = acctest.StateID(s, "prime_sandbox.box.0")
					b, _ = acctest.StateID(s, "prime_sandbox.box.1")
					return nil
				},
				checkReach(m, reachCase{func() string { return a }, func() string { return b }, 80, false}),
				checkNetworkCreateSentRules(t, m),
			),
		}},
	})
}

// Bad rules and tags fail at plan, naming attribute, entry and reason,
// before any API call.
func TestAccSandboxNetwork_planTimeErrors(t *testing.T) {
	cases := []struct{ name, hcl, want string }{
		{"port out of range", `
resource "prime_sandbox_network" "n" {
  name  = "n"
  rules = [{ from = "*", to = "tag:tools", ports = [80, 70000] }]
}`, `rules[0].ports: port 70000 is not between 1 and 65535`},
		{"no ports", `
resource "prime_sandbox_network" "n" {
  name  = "n"
  rules = [{ from = "*", to = "*", ports = [] }]
}`, `rules[0].ports: ports must list at least one port`},
		{"bare tag selector", `
resource "prime_sandbox_network" "n" {
  name  = "n"
  rules = [{ from = "*", to = "*", ports = [1] }, { from = "agent", to = "*", ports = [1] }]
}`, `rules[1].from: selector "agent": use "*" (every member) or "tag:<name>"`},
		{"bad member tag", `
resource "prime_sandbox_network_member" "m" {
  network_id = "net-1"
  sandbox_id = "sbx-1"
  tags       = ["ok", "not ok"]
}`, `tags: tag "not ok": use 1 to 63 letters, digits, '-', '_' and '.'`},
		{"both forms", `
resource "prime_sandbox_network_member" "m" {
  network_id  = "net-1"
  sandbox_id  = "sbx-1"
  sandbox_ids = { a = "sbx-2" }
}`, `Exactly one of these attributes must be configured: [sandbox_id,sandbox_ids]`},
		{"neither form", `
resource "prime_sandbox_network_member" "m" {
  network_id = "net-1"
}`, `Exactly one of these attributes must be configured: [sandbox_id,sandbox_ids]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := mocktest.New(t, mocktest.Fast())
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: acctest.ProviderFactories(t),
				Steps:                    []resource.TestStep{{Config: m.Config(tc.hcl), PlanOnly: true, ExpectError: acctest.ExpectErr(tc.want)}},
			})
			m.NoAPICalls(t)
		})
	}
}

// prime_sandbox_network's identity is its ID; importing by identity adopts
// it with no change planned.
func TestAccSandboxNetwork_identityImport(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	noop := resource.ImportPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("prime_sandbox_network.net", plancheck.ResourceActionNoop)}}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		TerraformVersionChecks:   acctest.SkipBelow(acctest.Identity),
		Steps: []resource.TestStep{
			{
				Config: m.Config(`
resource "prime_sandbox_network" "net" {
  name  = "n"
  rules = [{ from = "*", to = "tag:db", ports = [5432] }]
}
data "prime_sandbox_network" "net" {
  id = prime_sandbox_network.net.id
}
`),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectIdentityValueMatchesState("prime_sandbox_network.net", tfjsonpath.New("id")),
					statecheck.ExpectKnownValue("data.prime_sandbox_network.net", tfjsonpath.New("rules").AtSliceIndex(0).AtMapKey("ports"),
						knownvalue.ListExact([]knownvalue.Check{knownvalue.Int64Exact(5432)})),
					statecheck.ExpectKnownValue("data.prime_sandbox_network.net", tfjsonpath.New("members"), knownvalue.ListSizeExact(0)),
				},
			},
			{ResourceName: "prime_sandbox_network.net", ImportState: true, ImportStateKind: resource.ImportBlockWithResourceIdentity, ImportPlanChecks: noop},
		},
	})
}

// A network deleted outside Terraform is drift: the next apply creates it
// again and puts its members back on it.
func TestAccSandboxNetwork_deletedOutOfBandIsRecreated(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cfg := m.Config(acctest.SandboxHCL("box", "box") + `resource "prime_sandbox_network" "net" {
  name  = "n"
  rules = [{ from = "*", to = "*", ports = [80] }]
}
resource "prime_sandbox_network_member" "box" {
  network_id = prime_sandbox_network.net.id
  sandbox_id = prime_sandbox.box.id
  tags       = ["a"]
}
`)
	var first string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{Config: cfg, Check: func(s *terraform.State) error { first, _ = acctest.StateID(s, "prime_sandbox_network.net"); return nil }},
			{
				PreConfig: func() {
					if err := m.Client(t).DeleteNetwork(mocktest.WaitCtx(t), first); err != nil {
						t.Fatal(err)
					}
				},
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox_network.net", plancheck.ResourceActionCreate),
					plancheck.ExpectResourceAction("prime_sandbox_network_member.box", plancheck.ResourceActionCreate),
				}},
				Check: func(s *terraform.State) error {
					id, _ := acctest.StateID(s, "prime_sandbox_network.net")
					box, _ := acctest.StateID(s, "prime_sandbox.box")
					if id == first {
						return fmt.Errorf("the network kept its old ID %s", id)
					}
					if _, ok := networkMemberTags(t, m, s, box); !ok {
						return fmt.Errorf("the sandbox is not on the new network")
					}
					return nil
				},
			},
		},
	})
}

// A fleet membership whose create fails on one member (paused, so it cannot
// join) records the members that joined, so none is left on the network
// untracked; the resource is tainted, and the next apply, once the member
// runs again, replaces it: every member is on the network.
func TestAccSandboxNetworkMember_partialJoinIsTracked(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	base := `
resource "prime_sandbox_fleet" "agents" {
  name_prefix  = "agent"
  docker_image = "python:3.12-slim"
  size         = 2
}
resource "prime_sandbox_network" "net" {
  name = "n"
}
`
	member := `
resource "prime_sandbox_network_member" "agents" {
  network_id  = prime_sandbox_network.net.id
  sandbox_ids = prime_sandbox_fleet.agents.sandbox_ids
}
`
	var ids []string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: m.Config(base),
				Check: func(s *terraform.State) error {
					attrs := s.RootModule().Resources["prime_sandbox_fleet.agents"].Primary.Attributes
					ids = []string{attrs["sandbox_ids.0"], attrs["sandbox_ids.1"]}
					return nil
				},
			},
			{
				PreConfig: func() {
					if err := m.Client(t).PauseAndWait(mocktest.WaitCtx(t), ids[1]); err != nil {
						t.Fatal(err)
					}
				},
				Config:      m.Config(base + member),
				ExpectError: acctest.ExpectInOrder(`Network join failed`, `1 of the 2 members could not join`, `Member "1"`, `only a running VM sandbox can join`),
			},
			{
				PreConfig: func() {
					if err := m.Client(t).ResumeAndWait(mocktest.WaitCtx(t), ids[1]); err != nil {
						t.Fatal(err)
					}
				},
				Config: m.Config(base + member),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox_network_member.agents", plancheck.ResourceActionReplace),
				}},
				Check: func(s *terraform.State) error {
					for i, id := range ids {
						if _, ok := networkMemberTags(t, m, s, id); !ok {
							return fmt.Errorf("member %d (%s) is not on the network", i, id)
						}
					}
					return nil
				},
			},
		},
	})
}
