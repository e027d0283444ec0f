package egress_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// Teardown is never held hostage: with the data plane stalled after the
// apply (never_apply), destroying a sandbox and its policy leaves no
// sandbox running. The policy's restore is accepted but never enforced; its
// destroy completes with a warning instead of failing, so the sandbox's
// destroy runs. (CheckDestroy runs after the harness's destroy.)
func TestAccTeardown_stalledDataPlaneStillDeletesTheSandbox(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config: m.Config(vmSandbox + policyHCL(`allow = ["example.com"]`, `timeouts { delete = "1s" }`)),
			Check: func(*terraform.State) error {
				m.SetNeverApply(true) // stalls before the harness's destroy
				return nil
			},
		}},
	})
}

// The same for a fleet and its fleet policy.
func TestAccTeardown_stalledDataPlaneStillDeletesTheFleet(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config: m.Config(acctest.SandboxFleetHCL("eval", "teardown", 3) + `
resource "prime_fleet_egress_policy" "lock" {
  sandbox_ids = prime_sandbox_fleet.eval.sandbox_ids
  allow       = ["example.com"]
  timeouts {
    delete = "1s"
  }
}
`),
			Check: func(*terraform.State) error {
				m.SetNeverApply(true)
				return nil
			},
		}},
	})
}

// The other path of the reuse guard: a KEPT sandbox whose policy goes while
// the data plane stalls is not left restricted for its next setup — the
// setup (require_open_egress) refuses to run while the restore is pending,
// and runs, with the network open, once the data plane has caught up.
func TestAccTeardown_keptSandboxRefusesSetupWhileRestorePending(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	setup := func(version string) string {
		return fmt.Sprintf(`
resource "prime_sandbox_command" "setup" {
  sandbox_id          = prime_sandbox.vm.id
  command             = "echo setup %s && probe pypi.org"
  require_open_egress = true
}
`, version)
	}
	lock := `
resource "prime_egress_policy" "agent" {
  sandbox_id = prime_sandbox.vm.id
  allow      = ["example.com"]
  after      = [prime_sandbox_command.setup.id]
  timeouts {
    delete = "1s"
  }
}
`
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: m.Config(vmSandbox + setup("v1") + lock),
			},
			{
				// The lock goes and the setup changes, with the data plane
				// stalled: the policy's destroy completes, the new setup
				// refuses (the previous lock still holds), the sandbox stays.
				PreConfig: func() { m.SetNeverApply(true) },
				Config:    m.Config(vmSandbox + setup("v2")),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_egress_policy.agent", plancheck.ResourceActionDestroy),
					plancheck.ExpectResourceAction("prime_sandbox.vm", plancheck.ResourceActionNoop),
				}},
				ExpectError: acctest.ExpectInOrder(`Egress is restricted`, `is accepted and not yet enforced`, `the restriction before it still holds, so the command was not run`),
			},
			{
				// The data plane catches up: the setup runs open.
				PreConfig: func() { m.SetNeverApply(false) },
				Config:    m.Config(vmSandbox + setup("v2")),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("prime_sandbox_command.setup", "exit_code", "0"),
					resource.TestCheckResourceAttr("prime_sandbox_command.setup", "stdout", "setup v2\n"),
				),
			},
		},
	})
}

// A destroy writes each restore and does not wait for the data plane: under
// a stalled one it completes at once, without a warning (nothing was waited
// for), each sandbox's restore written once before the sandbox goes, and no
// sandbox's policy read after its restore (a destroy used to wait up to 10 s
// per restore, which every destroy of a whole evaluation paid for).
// Driven by the CLI, whose output carries any warning.
func TestAccTeardown_stalledDestroyWritesRestoresWithoutWaiting(t *testing.T) {
	cli := acctest.RequireCLI(t)
	provider := acctest.DevProvider(t)
	t.Parallel()
	m := mocktest.New(t, mocktest.Fast())
	w := acctest.NewMockWork(t, m, provider(), cli, `
provider "prime" {}
`+acctest.SandboxFleetHCL("eval", "stalled", 3)+`
resource "prime_fleet_egress_policy" "lock" {
  sandbox_ids = prime_sandbox_fleet.eval.sandbox_ids
  allow       = ["example.com"]
}
`+acctest.SandboxHCL("one", "stalled-one")+acctest.EgressPolicyHCL("one", "prime_sandbox.one.id", []string{"example.com"}))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if out, code := w.Exec(ctx, "apply", "-no-color", "-auto-approve", "-input=false"); code != 0 {
		t.Fatalf("apply: exit %d\n%s", code, out)
	}
	m.SetNeverApply(true)
	before := m.Stats().Requests[egressGetRoute]
	out, code := w.Exec(ctx, "destroy", "-no-color", "-auto-approve", "-input=false")
	if code != 0 {
		t.Fatalf("destroy: exit %d\n%s", code, out)
	}
	if live := m.Stats().LiveSandboxes; live != 0 {
		t.Fatalf("%d sandboxes left running after the destroy\n%s", live, out)
	}
	if n := strings.Count(out, "Warning:") - strings.Count(out, "Warning: Provider development overrides"); n != 0 {
		t.Errorf("the destroy warned %d times:\n%s", n, out)
	}
	// Two reads per sandbox: the destroy's refresh and the reuse guard's.
	if reads := m.Stats().Requests[egressGetRoute] - before; reads > 2*4 {
		t.Errorf("%d egress-policy reads for 4 sandboxes: the destroy waited for its restores", reads)
	}
	// One restore write per sandbox, before its deletion.
	restores := map[string]int{}
	for _, e := range m.Events() {
		switch {
		case e.Type == primemock.EventPolicyPut && e.Policy != nil && e.Policy.IsOpen():
			restores[e.SandboxID]++
		case e.Type == primemock.EventSandboxDeleted && restores[e.SandboxID] != 1:
			t.Errorf("sandbox %s deleted after %d restore writes, want 1", e.SandboxID, restores[e.SandboxID])
		}
	}
	if len(restores) != 4 {
		t.Errorf("restores written on %d sandboxes, want 4: %v", len(restores), restores)
	}
}

const egressGetRoute = "GET /api/v1/sandbox/{id}/egress-policy"
