package sandbox_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
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

// A resume the platform refuses at its limit of active sandboxes (the
// mock's ResumeLimit; another sandbox keeps the account at it): the apply
// fails naming the sandbox, the state still records it paused (the next
// plan proposes the resume again), and nothing is lost; once the limit
// allows it, the next apply resumes the same sandbox.
func TestAccPause_resumeRefusedAtLimit(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cfg := func(paused bool) string {
		return m.Config(fmt.Sprintf(`
resource "prime_sandbox" "box" {
  name         = "box"
  docker_image = "python:3.12-slim"
  paused       = %t
}
resource "prime_sandbox" "other" {
  name         = "other"
  docker_image = "python:3.12-slim"
}
`, paused))
	}
	var id string
	sameBox := func(s *terraform.State) error {
		got, err := acctest.StateID(s, "prime_sandbox.box")
		if err != nil {
			return err
		}
		if id != "" && got != id {
			return fmt.Errorf("the sandbox was replaced: %s, then %s", id, got)
		}
		id = got
		return nil
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{Config: cfg(true), Check: sameBox},
			{
				PreConfig:   func() { m.Configure(func(o *primemock.Options) { o.ResumeLimit = 1 }) },
				Config:      cfg(false),
				ExpectError: acctest.ExpectInOrder("Sandbox not resumed", "was not resumed and stays PAUSED", "limit of active sandboxes"),
			},
			{
				Config: cfg(false), PlanOnly: true, ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox.box", plancheck.ResourceActionUpdate),
				}},
				Check: func(s *terraform.State) error {
					if err := sameBox(s); err != nil {
						return err
					}
					if st := mockStatus(t, m, id); st != prime.StatusPaused {
						return fmt.Errorf("the refused sandbox is %s, want PAUSED", st)
					}
					return nil
				},
			},
			{
				PreConfig: func() { m.Configure(func(o *primemock.Options) { o.ResumeLimit = 0 }) },
				Config:    cfg(false),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox.box", plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("prime_sandbox.box", tfjsonpath.New("paused"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue("prime_sandbox.box", tfjsonpath.New("status"), knownvalue.StringExact(prime.StatusRunning)),
				},
				Check: func(s *terraform.State) error {
					if err := sameBox(s); err != nil {
						return err
					}
					if st := mockStatus(t, m, id); st != prime.StatusRunning {
						return fmt.Errorf("after the second resume the sandbox is %s, want RUNNING", st)
					}
					return nil
				},
			},
		},
	})
}

// A fleet of 3, paused, whose resume the platform refuses for one member
// (the limit refusal, answered for that member alone): the apply fails
// naming that member and its sandbox, the two others run, the fleet still
// records paused (the next plan proposes the resume again) with no member
// lost or replaced, and the next apply resumes the third.
func TestAccPause_fleetResumeRefusedForOneMember(t *testing.T) {
	var refuse atomic.Value // the sandbox ID whose resume is refused, or ""
	refuse.Store("")
	m := mocktest.NewHooked(t, mocktest.Fast(), func(w http.ResponseWriter, r *http.Request, _ []byte) bool {
		id := refuse.Load().(string)
		if id == "" || r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/sandbox/"+id+"/resume") {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusConflict)
		_, _ = w.Write([]byte(`{"detail":"Resume refused: the account's limit of active sandboxes is reached"}`))
		return true
	})
	cfg := func(paused bool) string {
		return m.Config(fmt.Sprintf(`
resource "prime_sandbox_fleet" "boxes" {
  name_prefix  = "eval"
  size         = 3
  docker_image = "python:3.12-slim"
  paused       = %t
}
`, paused))
	}
	var ids map[string]string
	sameMembers := func(s *terraform.State) error {
		a := s.RootModule().Resources["prime_sandbox_fleet.boxes"].Primary.Attributes
		got := map[string]string{"0": a["sandbox_ids.0"], "1": a["sandbox_ids.1"], "2": a["sandbox_ids.2"]}
		if ids == nil {
			ids = got
			return nil
		}
		for k, v := range ids {
			if got[k] != v {
				return fmt.Errorf("member %s was replaced or lost: %s, then %q", k, v, got[k])
			}
		}
		return nil
	}
	statuses := func(want ...string) error {
		for i, w := range want {
			if st := mockStatus(t, m, ids[fmt.Sprint(i)]); st != w {
				return fmt.Errorf("member %d (%s) is %s, want %s", i, ids[fmt.Sprint(i)], st, w)
			}
		}
		return nil
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{Config: cfg(true), Check: sameMembers},
			{
				PreConfig:   func() { refuse.Store(ids["2"]) },
				Config:      cfg(false),
				ExpectError: acctest.ExpectInOrder("Fleet members failed", "was not resumed and stays PAUSED", "limit of active sandboxes"),
			},
			{
				Config: cfg(false), PlanOnly: true, ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox_fleet.boxes", plancheck.ResourceActionUpdate),
				}},
				Check: func(s *terraform.State) error {
					if err := sameMembers(s); err != nil {
						return err
					}
					return statuses(prime.StatusRunning, prime.StatusRunning, prime.StatusPaused)
				},
			},
			{
				PreConfig: func() { refuse.Store("") },
				Config:    cfg(false),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("prime_sandbox_fleet.boxes", tfjsonpath.New("paused"), knownvalue.Bool(false)),
				},
				Check: func(s *terraform.State) error {
					if err := sameMembers(s); err != nil {
						return err
					}
					return statuses(prime.StatusRunning, prime.StatusRunning, prime.StatusRunning)
				},
			},
		},
	})
}
