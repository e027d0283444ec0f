package sandbox_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
)

// A prime_sandbox that ends out of band, paused or not, by a delete or by
// the platform (its lifetime, an OOM kill, a cancellation), is replaced by
// the next plan, which says so once; the apply leaves a new sandbox, paused
// again when the configuration says so, and the plan after it is empty.
// (A paused one was kept in state for its pause checkpoint with a plan that
// said "No changes", or refreshed to paused = false and planned an in-place
// resume that failed on every apply.)
func TestAccSandbox_endedOutOfBandIsReplaced(t *testing.T) {
	for _, paused := range []string{"true", "false"} {
		for _, how := range []string{"delete", "timeout", "cancel"} {
			t.Run(fmt.Sprintf("paused=%s/%s", paused, how), func(t *testing.T) {
				m := mocktest.New(t, mocktest.Fast())
				cfg := m.Config(pausedSandboxHCL(paused))
				var first string
				resource.ParallelTest(t, resource.TestCase{
					ProtoV6ProviderFactories: acctest.ProviderFactories(t),
					CheckDestroy:             m.CheckNoCheckpoints,
					Steps: []resource.TestStep{
						{Config: cfg, Check: func(s *terraform.State) (err error) {
							first, err = acctest.StateID(s, "prime_sandbox.box")
							return err
						}},
						{
							PreConfig: func() { m.End(t, first, how) },
							Config:    cfg,
							ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
								replacedOrCreated("prime_sandbox.box"),
							}},
							Check: func(s *terraform.State) error {
								id, err := acctest.StateID(s, "prime_sandbox.box")
								if err == nil && id == first {
									err = fmt.Errorf("the ended sandbox %s is still the one in state", id)
								}
								if err == nil && paused == "true" {
									if st := m.Status(t, id); st != "PAUSED" {
										err = fmt.Errorf("the new sandbox is %s, want PAUSED", st)
									}
								}
								return err
							},
						},
						{Config: cfg, PlanOnly: true},
					},
				})
			})
		}
	}
}

// replacedOrCreated passes when the plan replaces addr, or creates it
// after a refresh removed it: either way a new sandbox.
func replacedOrCreated(addr string) plancheck.PlanCheck { return replacedOrCreatedCheck{addr} }

type replacedOrCreatedCheck struct{ addr string }

func (c replacedOrCreatedCheck) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Address != c.addr {
			continue
		}
		if rc.Change.Actions.Create() || rc.Change.Actions.Replace() {
			return
		}
		resp.Error = fmt.Errorf("%s: planned %v, want a new sandbox (create or replace)", c.addr, rc.Change.Actions)
		return
	}
	resp.Error = fmt.Errorf("%s: no planned change, want a new sandbox", c.addr)
}

// A paused fleet member that ends out of band is created again in place by
// the next plan, paused again; the plan after it is empty.
func TestAccSandboxFleet_pausedMemberEndedOutOfBand(t *testing.T) {
	for _, how := range []string{"delete", "timeout"} {
		t.Run(how, func(t *testing.T) {
			m := mocktest.New(t, mocktest.Fast())
			cfg := m.Config(acctest.SandboxFleetHCL("boxes", "eval", 2, "paused       = true"))
			var gone string
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: acctest.ProviderFactories(t),
				CheckDestroy:             m.CheckNoCheckpoints,
				Steps: []resource.TestStep{
					{Config: cfg, Check: func(s *terraform.State) error {
						gone = s.RootModule().Resources["prime_sandbox_fleet.boxes"].Primary.Attributes["sandbox_ids.1"]
						return nil
					}},
					{
						PreConfig: func() { m.End(t, gone, how) },
						Config:    cfg,
						ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
							plancheck.ExpectResourceAction("prime_sandbox_fleet.boxes", plancheck.ResourceActionUpdate),
						}},
						Check: func(s *terraform.State) error {
							id := s.RootModule().Resources["prime_sandbox_fleet.boxes"].Primary.Attributes["sandbox_ids.1"]
							if id == gone {
								return fmt.Errorf("member 1 is still the ended sandbox %s", id)
							}
							if st := m.Status(t, id); st != "PAUSED" {
								return fmt.Errorf("member 1's new sandbox is %s, want PAUSED", st)
							}
							return nil
						},
					},
					{Config: cfg, PlanOnly: true},
				},
			})
		})
	}
}

// The CLI's view of a paused sandbox that ended out of band: the plan says
// it once ("Sandbox is no longer running", naming what the next apply
// does) and replaces it; a configuration that now asks for paused = false
// replaces it too, rather than planning an in-place resume of a sandbox
// that is gone (which failed on every apply, saying PAUSED and TERMINATED
// at once, with an account-limit hint). The apply converges, the next plan
// is empty, and destroy leaves no checkpoint behind.
func TestAccSandbox_pausedEndedOutOfBandCLI(t *testing.T) {
	cli := acctest.RequireCLI(t)
	m, env, ctx := acctest.MockCLITest(t)
	w := acctest.NewWork(t, cli, env, map[string]string{"main.tf": refreshProviders + pausedSandboxHCL("true")})
	w.Must(ctx, "apply", "-auto-approve", "-input=false")
	first := w.StateAttr(ctx, "prime_sandbox.box", "id")
	m.End(t, first, "timeout")

	w.Put("main.tf", refreshProviders+pausedSandboxHCL("false"))
	plan, code := w.Exec(ctx, "plan", "-detailed-exitcode", "-input=false")
	if code != 2 || !strings.Contains(plan, "must be replaced") || strings.Contains(plan, "updated in-place") {
		t.Fatalf("the plan must replace the ended sandbox (exit %d):\n%s", code, plan)
	}
	if n := strings.Count(plan, "Sandbox is no longer running"); n != 1 || !strings.Contains(plan, "the next apply replaces it") {
		t.Errorf("the plan must say once that the sandbox ended and is replaced (%d warnings):\n%s", n, plan)
	}
	out := w.Must(ctx, "apply", "-auto-approve", "-input=false")
	if strings.Contains(out, "PAUSED") || strings.Contains(out, "limit") {
		t.Errorf("the apply speaks of a pause or an account limit:\n%s", out)
	}
	if id := w.StateAttr(ctx, "prime_sandbox.box", "id"); id == first || m.Status(t, id) != "RUNNING" {
		t.Errorf("after the apply the sandbox is %s (%s), want a new RUNNING one", id, m.Status(t, id))
	}
	if plan, code := w.Exec(ctx, "plan", "-detailed-exitcode", "-input=false"); code != 0 {
		t.Errorf("the plan after the apply is not empty (exit %d):\n%s", code, plan)
	}
	w.Must(ctx, "destroy", "-auto-approve", "-input=false")
	if err := m.CheckNoCheckpoints(nil); err != nil {
		t.Error(err)
	}
}
