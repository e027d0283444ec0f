package egress_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// The day-two protocol: changing a setup step on an existing sandbox
// re-opens egress, runs the new setup with the network open, locks again and
// only then runs the agent — all in one apply, from after and triggers.
func TestAccEgressPolicy_afterRelocksAroundChangedSetup(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	var sandboxID string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: m.Config(acctest.ProtocolHCL("v1", true)),
				Check: func(s *terraform.State) error {
					id, err := acctest.StateID(s, "prime_sandbox.box")
					sandboxID = id
					return err
				},
			},
			{
				Config: m.Config(acctest.ProtocolHCL("v2", true)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox_command.setup", plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectResourceAction("prime_egress_policy.lock", plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectResourceAction("prime_sandbox_command.agent", plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectResourceAction("prime_sandbox.box", plancheck.ResourceActionNoop),
				}},
				Check: func(*terraform.State) error { return checkRelockOrder(m.Events(), sandboxID) },
			},
		},
	})
}

// checkRelockOrder asserts, for the second apply: reopen applied < setup v2
// (run under the open policy, pypi reachable) < lock applied < agent (under
// the lock).
func checkRelockOrder(events []primemock.Event, sandboxID string) error {
	var firstLock, reopen, reopenApplied, setup, lock, lockApplied, agent int64 = -1, -1, -1, -1, -1, -1, -1
	var setupGen, agentGen int64
	var setupExit int
	for _, e := range events {
		if e.SandboxID != sandboxID {
			continue
		}
		switch {
		case e.Type == primemock.EventPolicyPut && e.Policy != nil && e.Policy.Allowlist != nil:
			if firstLock < 0 {
				firstLock = e.Generation
			} else if reopen > 0 && lock < 0 {
				lock = e.Generation
			}
		case e.Type == primemock.EventPolicyPut && e.Policy != nil && e.Policy.IsOpen() && firstLock > 0:
			reopen = e.Generation
		case e.Type == primemock.EventPolicyApplied && reopen > 0 && e.Generation == reopen:
			reopenApplied = e.Seq
		case e.Type == primemock.EventPolicyApplied && lock > 0 && e.Generation == lock:
			lockApplied = e.Seq
		case e.Type == primemock.EventCommandExecuted && strings.HasPrefix(e.Command, "echo installing v2"):
			setup, setupGen, setupExit = e.Seq, e.AppliedGeneration, e.ExitCode
		case e.Type == primemock.EventCommandExecuted && strings.HasPrefix(e.Command, "echo probing") && lock > 0:
			agent, agentGen = e.Seq, e.AppliedGeneration
		}
	}
	switch {
	case reopenApplied < 0 || setup < 0 || lockApplied < 0 || agent < 0:
		return fmt.Errorf("missing events: reopen applied %d, setup v2 %d, lock applied %d, agent %d", reopenApplied, setup, lockApplied, agent)
	case !(reopenApplied < setup && setup < lockApplied && lockApplied < agent):
		return fmt.Errorf("order reopen applied %d, setup %d, lock applied %d, agent %d; want them in this order", reopenApplied, setup, lockApplied, agent)
	case setupGen != reopen || setupExit != 0:
		return fmt.Errorf("setup v2 ran under generation %d with exit %d, want the open generation %d and exit 0", setupGen, setupExit, reopen)
	case agentGen < lock:
		return fmt.Errorf("the agent ran under generation %d, before the new lock %d", agentGen, lock)
	}
	return nil
}
