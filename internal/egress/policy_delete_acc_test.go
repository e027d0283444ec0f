package egress_test

// Deleting a policy: it reopens egress unless a replacement took over, and a gone sandbox or a failed update does not block the destroy.

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
)

// Destroy restores unrestricted egress and waits for it (the reuse guard).
func TestAccEgressPolicy_deleteReopens(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: m.Config(vmSandbox + policyHCL(`allow = []`)),
				Check:  acctest.Reachability(t, m, map[string]bool{"example.com": false}),
			},
			{
				Config: m.Config(vmSandbox),
				Check: resource.ComposeAggregateTestCheckFunc(
					acctest.Reachability(t, m, map[string]bool{"example.com": true, "google.com": true}),
					func(s *terraform.State) error {
						id, _ := acctest.StateID(s, "prime_sandbox.vm")
						st, err := m.Client(t).GetEgressPolicy(mocktest.WaitCtx(t), id)
						if err != nil {
							return err
						}
						if !st.Policy.IsOpen() || !st.Enforces(st.Generation) {
							return fmt.Errorf("after destroy the policy is %+v, want open and applied", st)
						}
						return nil
					},
				),
			},
		},
	})
}

// A replacement created before the old policy is destroyed owns a newer
// generation: destroying the old one must not reopen egress.
func TestAccEgressPolicy_deleteAfterReplacementDoesNotReopen(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	policy := func(rev, list string) string {
		return m.Config(vmSandbox + fmt.Sprintf(`
resource "terraform_data" "rev" {
  input = %q
}
resource "prime_egress_policy" "agent" {
  sandbox_id = prime_sandbox.vm.id
  %s
  lifecycle {
    create_before_destroy = true
    replace_triggered_by  = [terraform_data.rev]
  }
}
`, rev, list))
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{Config: policy("1", `allow = ["example.com"]`)},
			{
				Config: policy("2", `allow = ["example.com"]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_egress_policy.agent", plancheck.ResourceActionCreateBeforeDestroy),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					acctest.Reachability(t, m, map[string]bool{"example.com": true, "google.com": false}),
					resource.TestCheckResourceAttr("prime_egress_policy.agent", "generation", "2"),
				),
			},
		},
	})
}

// A policy whose sandbox was deleted behind Terraform's back leaves state
// quietly, and the next apply recreates both.
func TestAccEgressPolicy_sandboxGone(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cfg := m.Config(vmSandbox + policyHCL(`allow = ["example.com"]`))
	var id string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{Config: cfg, Check: func(s *terraform.State) (err error) { id, err = acctest.StateID(s, "prime_sandbox.vm"); return err }},
			{
				PreConfig: func() {
					if err := m.Client(t).DeleteSandbox(mocktest.WaitCtx(t), id); err != nil {
						t.Fatal(err)
					}
				},
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox.vm", plancheck.ResourceActionCreate),
					plancheck.ExpectResourceAction("prime_egress_policy.agent", plancheck.ResourceActionCreate),
				}},
				Check: acctest.Reachability(t, m, map[string]bool{"example.com": true, "google.com": false}),
			},
		},
	})
}

// After an update that failed closed, state keeps the previous lists but
// records that this resource wrote the newer (unapplied) generation. A
// destroy without refresh then recognises its own write and reopens egress,
// instead of mistaking it for another writer's policy.
func TestAccEgressPolicy_failedUpdateThenDestroyWithoutRefreshReopens(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	var id string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: m.Config(vmSandbox + policyHCL(`allow = ["example.com"]`)),
				Check:  func(s *terraform.State) (err error) { id, err = acctest.StateID(s, "prime_sandbox.vm"); return err },
			},
			{
				PreConfig:   func() { m.SetNeverApply(true) },
				Config:      m.Config(vmSandbox + policyHCL(`allow = ["google.com"]`, `timeouts { update = "1s" }`)),
				ExpectError: acctest.ExpectErr("Failing closed"),
			},
			{
				// Remove the policy; the harness applies with -refresh=false,
				// so Delete sees the state the failed update left: the
				// previous lists and generation 2, not applied.
				PreConfig: func() { m.SetNeverApply(false) },
				Config:    m.Config(vmSandbox),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_egress_policy.agent", plancheck.ResourceActionDestroy),
				}},
				Check: func(*terraform.State) error {
					st, err := m.Client(t).GetEgressPolicy(mocktest.WaitCtx(t), id)
					if err != nil {
						return err
					}
					if !st.Policy.IsOpen() || !st.Enforces(st.Generation) {
						return fmt.Errorf("egress was left restricted after destroy: %+v", st)
					}
					return nil
				},
			},
		},
	})
}
