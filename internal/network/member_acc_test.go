package network_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// Only running VM sandboxes can join: a paused one fails the apply with an
// error that says so, and nothing is recorded.
func TestAccSandboxNetworkMember_notRunningIsAClearError(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	base := acctest.SandboxHCL("box", "paused") + `resource "prime_sandbox_network" "net" {
  name = "n"
}
`
	var id string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{Config: m.Config(base), Check: func(s *terraform.State) error { id, _ = acctest.StateID(s, "prime_sandbox.box"); return nil }},
			{
				PreConfig: func() {
					if err := m.Client(t).PauseAndWait(mocktest.WaitCtx(t), id); err != nil {
						t.Fatal(err)
					}
				},
				Config: m.Config(base + `
resource "prime_sandbox_network_member" "box" {
  network_id = prime_sandbox_network.net.id
  sandbox_id = prime_sandbox.box.id
}
`),
				ExpectError: acctest.ExpectInOrder(`Network join failed`, `1 of the 1 members could not join`, `cannot join network`,
					`only a running VM sandbox can join a private network`, `HTTP 409`),
			},
		},
	})
	for _, e := range m.Events() {
		if e.Type == primemock.EventNetworkMemberPut {
			t.Fatalf("a paused sandbox joined: %+v", e)
		}
	}
}

// The guide's shape: a tool server and two fleets of agents on one
// network, every agent locked to no internet at all. Each agent reaches the
// tool over the network and not example.com, and its command runs only
// after both its lock is enforced and it joined the network.
func TestAccSandboxNetwork_agentsReachToolUnderLock(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config: m.Config(networkHCL(agentsToTool, `["agent"]`) + `
resource "prime_fleet_egress_policy" "lock" {
  sandbox_ids = prime_sandbox_fleet.agents.sandbox_ids
  allow       = []
}

resource "prime_fleet_command" "agent" {
  sandbox_ids = prime_fleet_egress_policy.lock.sandbox_ids
  commands    = ["probe \"$TOOL\":8080 && ! probe example.com && echo agent-done"]
  env         = { TOOL = prime_sandbox_network_member.tool.host }
  triggers    = { network = prime_sandbox_network_member.agents.id }
}

resource "prime_sandbox_fleet" "agents_b" {
  name_prefix  = "agent-b"
  docker_image = "python:3.12-slim"
  size         = 2
}

resource "prime_sandbox_network_member" "agents_b" {
  network_id  = prime_sandbox_network.net.id
  sandbox_ids = prime_sandbox_fleet.agents_b.sandbox_ids
  tags        = ["agent"]
}

resource "prime_fleet_egress_policy" "lock_b" {
  sandbox_ids = prime_sandbox_fleet.agents_b.sandbox_ids
  allow       = []
}

resource "prime_fleet_command" "agent_b" {
  sandbox_ids = prime_fleet_egress_policy.lock_b.sandbox_ids
  commands    = ["probe \"$TOOL\":8080 && ! probe example.com && echo agent-done"]
  env         = { TOOL = prime_sandbox_network_member.tool.host }
  triggers    = { network = prime_sandbox_network_member.agents_b.id }
}
`),
			Check: func(s *terraform.State) error {
				for fleetName, size := range map[string]int{"agents": 3, "agents_b": 2} {
					attrs := s.RootModule().Resources["prime_sandbox_fleet."+fleetName].Primary.Attributes
					for i := range size {
						id := attrs[fmt.Sprintf("sandbox_ids.%d", i)]
						if err := checkAgentAfterLockAndJoin(m.Events(), id); err != nil {
							return fmt.Errorf("%s agent %d (%s): %w", fleetName, i, id, err)
						}
					}
				}
				return nil
			},
		}},
	})
}

// checkAgentAfterLockAndJoin: sandbox id's agent command ran, after its
// policy was applied and after it joined a network.
func checkAgentAfterLockAndJoin(events []primemock.Event, id string) error {
	applied, joined, ran := int64(-1), int64(-1), int64(-1)
	for _, e := range events {
		if e.SandboxID != id {
			continue
		}
		switch {
		case e.Type == primemock.EventPolicyApplied && applied < 0:
			applied = e.Seq
		case e.Type == primemock.EventNetworkMemberPut && joined < 0:
			joined = e.Seq
		case e.Type == primemock.EventCommandExecuted && strings.Contains(e.Command, "agent-done"):
			ran = e.Seq
		}
	}
	switch {
	case ran < 0:
		return fmt.Errorf("the agent never ran")
	case applied < 0 || applied > ran:
		return fmt.Errorf("the agent ran (event %d) before its lock was applied (event %d)", ran, applied)
	case joined < 0 || joined > ran:
		return fmt.Errorf("the agent ran (event %d) before it joined the network (event %d)", ran, joined)
	}
	return nil
}
