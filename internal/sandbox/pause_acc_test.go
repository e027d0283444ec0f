package sandbox_test

import (
	"fmt"
	"strings"
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

func pausedSandboxHCL(paused string) string {
	line := ""
	if paused != "" {
		line = "paused = " + paused
	}
	return fmt.Sprintf(`
resource "prime_sandbox" "box" {
  name         = "box"
  docker_image = "python:3.12-slim"
  %s
}
`, line)
}

// mockStatus is the sandbox's status as the platform holds it.
func mockStatus(t *testing.T, m *mocktest.Mock, id string) string {
	t.Helper()
	sb, err := m.Client(t).GetSandbox(mocktest.WaitCtx(t), id)
	if err != nil {
		t.Fatal(err)
	}
	return sb.Status
}

// paused = true pauses the sandbox in place and false resumes it (no
// replacement, the same ID); with paused = false, a pause made out of band
// is drift that the next apply undoes; with paused unset, it is none.
func TestAccPause_sandboxInPlaceAndDrift(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	var id string
	inPlace := func(paused string) resource.ConfigPlanChecks {
		return resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
			plancheck.ExpectResourceAction("prime_sandbox.box", plancheck.ResourceActionUpdate),
		}}
	}
	status := func(want string) resource.TestCheckFunc {
		return func(s *terraform.State) error {
			got, err := acctest.StateID(s, "prime_sandbox.box")
			if err != nil {
				return err
			}
			if id != "" && got != id {
				return fmt.Errorf("the sandbox was replaced: %s, then %s", id, got)
			}
			id = got
			if st := mockStatus(t, m, id); st != want {
				return fmt.Errorf("the platform reports %s, want %s", st, want)
			}
			return nil
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{Config: m.Config(pausedSandboxHCL("false")), Check: status(prime.StatusRunning)},
			{
				Config: m.Config(pausedSandboxHCL("true")), ConfigPlanChecks: inPlace("true"), Check: status(prime.StatusPaused),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("prime_sandbox.box", tfjsonpath.New("status"), knownvalue.StringExact(prime.StatusPaused)),
				},
			},
			{
				Config: m.Config(pausedSandboxHCL("false")), ConfigPlanChecks: inPlace("false"), Check: status(prime.StatusRunning),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("prime_sandbox.box", tfjsonpath.New("status"), knownvalue.StringExact(prime.StatusRunning)),
				},
			},
			{
				// Paused out of band while the configuration says false: drift.
				PreConfig: func() {
					if err := m.Client(t).PauseAndWait(mocktest.WaitCtx(t), id); err != nil {
						t.Fatal(err)
					}
				},
				Config: m.Config(pausedSandboxHCL("false")), PlanOnly: true, ExpectNonEmptyPlan: true,
			},
			{
				// The apply resumes it, in place, and a command can run at once.
				Config:           m.Config(pausedSandboxHCL("false") + acctest.CommandHCL("after", "prime_sandbox.box.id", "echo back")),
				ConfigPlanChecks: inPlace("false"), Check: status(prime.StatusRunning),
			},
			{
				// Not managed: a pause out of band is no drift.
				PreConfig: func() {
					if err := m.Client(t).PauseAndWait(mocktest.WaitCtx(t), id); err != nil {
						t.Fatal(err)
					}
				},
				Config: m.Config(pausedSandboxHCL("")),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					// paused goes from false to null: recorded, nothing done.
					plancheck.ExpectResourceAction("prime_sandbox.box", plancheck.ResourceActionUpdate),
				}},
				Check: status(prime.StatusPaused),
			},
			{Config: m.Config(pausedSandboxHCL("")), PlanOnly: true},
		},
	})
}

// A fleet of 3 under an egress lock is paused and resumed by one apply
// each, all members concurrently; after the resume its agents run, and the
// lock held throughout (the policy is still enforced after the resume,
// and no write ever reopened it).
func TestAccPause_fleetPausedResumedUnderLock(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	fleetHCL := func(paused bool, agents string) string {
		return m.Config(fmt.Sprintf(`
resource "prime_sandbox_fleet" "boxes" {
  name_prefix  = "eval"
  size         = 3
  docker_image = "python:3.12-slim"
  paused       = %t
  egress {
    allow = ["example.com"]
  }
}
%s`, paused, agents))
	}
	agents := `
resource "prime_fleet_command" "run" {
  sandbox_ids = prime_sandbox_fleet.boxes.sandbox_ids
  commands    = ["probe example.com"]
}
`
	var ids []string
	allStatus := func(want string) resource.TestCheckFunc {
		return func(s *terraform.State) error {
			rs := s.RootModule().Resources["prime_sandbox_fleet.boxes"]
			ids = ids[:0]
			for k, v := range rs.Primary.Attributes {
				if strings.HasPrefix(k, "sandbox_ids.") && k != "sandbox_ids.%" {
					ids = append(ids, v)
				}
			}
			if len(ids) != 3 {
				return fmt.Errorf("%d members, want 3", len(ids))
			}
			for _, id := range ids {
				if st := mockStatus(t, m, id); st != want {
					return fmt.Errorf("member %s is %s, want %s", id, st, want)
				}
			}
			return nil
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{Config: fleetHCL(false, ""), Check: allStatus(prime.StatusRunning)},
			{
				Config: fleetHCL(true, ""), Check: allStatus(prime.StatusPaused),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox_fleet.boxes", plancheck.ResourceActionUpdate),
				}},
			},
			{Config: fleetHCL(true, ""), PlanOnly: true},
			{
				// One apply resumes the fleet and then runs the agents.
				Config: fleetHCL(false, agents),
				Check: resource.ComposeAggregateTestCheckFunc(allStatus(prime.StatusRunning), func(*terraform.State) error {
					for _, id := range ids {
						if m.Reaches(t, id, "google.com") || !m.Reaches(t, id, "example.com") {
							return fmt.Errorf("member %s is not held to its allowlist after the resume", id)
						}
					}
					return nil
				}),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox_fleet.boxes", plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("prime_fleet_command.run", tfjsonpath.New("results"), knownvalue.NotNull()),
				},
			},
			{Config: fleetHCL(false, agents), PlanOnly: true},
		},
	})
	// The lock held: every member still reaches only its allowlist, no
	// policy write reopened a member, and each member's agent ran after its
	// resume.
	resumed := map[string]int64{}
	for _, e := range m.Events() {
		switch e.Type {
		case primemock.EventPolicyPut:
			if e.Policy == nil || e.Policy.Allowlist == nil {
				t.Errorf("a policy write opened member %s: %+v", e.SandboxID, e.Policy)
			}
		case primemock.EventSandboxResumed:
			resumed[e.SandboxID] = e.Seq
		case primemock.EventCommandExecuted:
			if strings.HasPrefix(e.Command, "probe ") && e.Seq < resumed[e.SandboxID] {
				t.Errorf("member %s ran its agent before its resume", e.SandboxID)
			}
		}
	}
	if len(resumed) != 3 {
		t.Errorf("%d members resumed, want 3", len(resumed))
	}
}

// A policy replaced while its sandbox is paused is accepted but pending:
// the apply fails closed saying it applies on resume, and the apply that
// resumes the sandbox then enforces it (the sandbox resumes first, since
// the policy depends on it).
func TestAccPause_policyReplacedWhilePausedAppliesOnResume(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cfg := func(paused bool, host string) string {
		return m.Config(fmt.Sprintf(`
resource "prime_sandbox" "box" {
  name         = "box"
  docker_image = "python:3.12-slim"
  paused       = %t
}
resource "prime_egress_policy" "lock" {
  sandbox_id = prime_sandbox.box.id
  allow      = [%q]
  timeouts {
    create = "2s"
  }
}
`, paused, host))
	}
	var id string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{Config: cfg(false, "a.example.com"), Check: func(s *terraform.State) (err error) {
				id, err = acctest.StateID(s, "prime_sandbox.box")
				return err
			}},
			{Config: cfg(true, "a.example.com")},
			{
				Config:      cfg(true, "b.example.com"),
				ExpectError: acctest.ExpectErr("the sandbox is PAUSED, and the platform applies the policy when the sandbox resumes"),
			},
			{
				Config: cfg(false, "b.example.com"),
				Check: func(*terraform.State) error {
					if mockStatus(t, m, id) != prime.StatusRunning || !m.Reaches(t, id, "b.example.com") || m.Reaches(t, id, "a.example.com") {
						return fmt.Errorf("after the resume the sandbox does not enforce the replaced policy")
					}
					return nil
				},
			},
			{Config: cfg(false, "b.example.com"), PlanOnly: true},
		},
	})
}
