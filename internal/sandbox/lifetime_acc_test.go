package sandbox_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
)

// The platform ends a sandbox whose timeout_minutes passed (TIMEOUT). The
// mock clock is moved past a 1-minute lifetime between two applies: the
// refresh warns that the sandbox no longer runs and drops it, and the apply
// creates a new one.
func TestAccSandbox_lifetimeEndIsRecreated(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cfg := m.Config(`
resource "prime_sandbox" "vm" {
  name            = "short-lived"
  docker_image    = "python:3.12-slim"
  timeout_minutes = 1
}
`)
	var first string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: cfg,
				Check: func(s *terraform.State) (err error) {
					first, err = acctest.StateID(s, "prime_sandbox.vm")
					return err
				},
			},
			{
				PreConfig: func() {
					if err := m.AdvanceClock(61 * time.Second); err != nil {
						t.Fatal(err)
					}
					if sb, err := m.Client(t).GetSandbox(mocktest.WaitCtx(t), first); err != nil || sb.Status != "TIMEOUT" {
						t.Fatalf("after its lifetime the sandbox is %v (%v), want TIMEOUT", sb, err)
					}
				},
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox.vm", plancheck.ResourceActionCreate),
				}},
				Check: func(s *terraform.State) error {
					if id, _ := acctest.StateID(s, "prime_sandbox.vm"); id == first {
						return fmt.Errorf("the timed-out sandbox %s is still in state", first)
					}
					return nil
				},
			},
		},
	})
}

// A fleet member that reaches TIMEOUT is re-created in place under the same
// fleet: its members' lifetimes end on the mock clock, and the next apply
// replaces exactly them.
func TestAccSandboxFleet_membersReachingTimeoutAreRecreated(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cfg := m.Config(`
resource "prime_sandbox_fleet" "f" {
  name_prefix     = "lifetime"
  docker_image    = "python:3.12-slim"
  size            = 2
  timeout_minutes = 1
}
`)
	var first map[string]string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: cfg,
				Check:  func(s *terraform.State) error { first = fleetIDs(s); return nil },
			},
			{
				PreConfig: func() {
					if err := m.AdvanceClock(90 * time.Second); err != nil {
						t.Fatal(err)
					}
				},
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox_fleet.f", plancheck.ResourceActionUpdate),
				}},
				Check: func(s *terraform.State) error {
					ids := fleetIDs(s)
					if len(ids) != 2 || ids["0"] == first["0"] || ids["1"] == first["1"] {
						return fmt.Errorf("members after their lifetime: %v (were %v); want two new ones", ids, first)
					}
					if live := m.Stats().LiveSandboxes; live != 2 {
						return fmt.Errorf("%d live sandboxes, want 2", live)
					}
					return nil
				},
			},
		},
	})
}
