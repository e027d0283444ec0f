package sandbox_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
)

// Importing restored sandboxes (one, and a fleet of them) whose
// configuration sets checkpoint_id and restore_memory, which the platform
// does not report: the import's plan records them in place, never
// replacing what is being imported, and the plan after that apply is
// empty.
func TestAccRestore_importAdoptsCheckpoint(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	restored := `
resource "prime_sandbox" "restored" {
  name           = "restored"
  checkpoint_id  = prime_sandbox_checkpoint.setup.id
  restore_memory = false
}
resource "prime_sandbox_fleet" "agents" {
  name_prefix   = "eval"
  size          = 2
  checkpoint_id = prime_sandbox_checkpoint.setup.id
}
`
	cfg := m.Config(setupOnceHCL(restored))
	imports := cfg + `
variable "sandbox_id" {
  type = string
}
variable "member_ids" {
  type = list(string)
}
import {
  to = prime_sandbox.restored
  id = var.sandbox_id
}
import {
  to = prime_sandbox_fleet.agents
  id = join(",", var.member_ids)
}
`
	forget := m.Config(setupOnceHCL(`
removed {
  from = prime_sandbox.restored
  lifecycle {
    destroy = false
  }
}
removed {
  from = prime_sandbox_fleet.agents
  lifecycle {
    destroy = false
  }
}
`))
	var sandboxID lateStrings // one: the restored sandbox
	var memberIDs lateStrings
	vars := config.Variables{"sandbox_id": firstOf{&sandboxID}, "member_ids": &memberIDs}
	kept := func(addr string, path tfjsonpath.Path, want *lateStrings, i int) statecheck.StateCheck {
		return statecheck.ExpectKnownValue(addr, path, knownvalue.StringFunc(func(v string) error {
			if v != (*want)[i] {
				return fmt.Errorf("%s was replaced: %s, then %s", addr, (*want)[i], v)
			}
			return nil
		}))
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoCheckpoints,
		Steps: []resource.TestStep{
			{
				Config: cfg,
				Check: func(s *terraform.State) error {
					id, err := acctest.StateID(s, "prime_sandbox.restored")
					if err != nil {
						return err
					}
					a := s.RootModule().Resources["prime_sandbox_fleet.agents"].Primary.Attributes
					sandboxID, memberIDs = lateStrings{id}, lateStrings{a["sandbox_ids.0"], a["sandbox_ids.1"]}
					return nil
				},
			},
			{Config: forget},
			{
				Config: imports, ConfigVariables: vars,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox.restored", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("prime_sandbox_fleet.agents", plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					kept("prime_sandbox.restored", tfjsonpath.New("id"), &sandboxID, 0),
					kept("prime_sandbox_fleet.agents", tfjsonpath.New("sandbox_ids").AtMapKey("0"), &memberIDs, 0),
					kept("prime_sandbox_fleet.agents", tfjsonpath.New("sandbox_ids").AtMapKey("1"), &memberIDs, 1),
					statecheck.ExpectKnownValue("prime_sandbox.restored", tfjsonpath.New("docker_image"), knownvalue.Null()),
					statecheck.ExpectKnownValue("prime_sandbox.restored", tfjsonpath.New("checkpoint_id"), knownvalue.NotNull()),
					statecheck.ExpectKnownValue("prime_sandbox.restored", tfjsonpath.New("restore_memory"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue("prime_sandbox_fleet.agents", tfjsonpath.New("docker_image"), knownvalue.Null()),
					statecheck.ExpectKnownValue("prime_sandbox_fleet.agents", tfjsonpath.New("checkpoint_id"), knownvalue.NotNull()),
				},
			},
			{Config: imports, ConfigVariables: vars, PlanOnly: true},
		},
	})
}

// firstOf is the first of a lateStrings as a string variable.
type firstOf struct{ l *lateStrings }

func (s firstOf) MarshalJSON() ([]byte, error) { return json.Marshal((*s.l)[0]) }

// A platform that reports the checkpoint a sandbox was restored from
// (checkpointId, which the mock leaves out; the hook adds it) is believed:
// importing with the configuration's checkpoint plans nothing, and with
// another checkpoint reported, the import plans a replacement.
func TestAccRestore_importComparesReportedCheckpoint(t *testing.T) {
	var report atomic.Value // the checkpointId reported for "restored", or ""
	report.Store("")
	var m *mocktest.Mock
	m = mocktest.NewHooked(t, mocktest.Fast(), func(w http.ResponseWriter, r *http.Request, _ []byte) bool {
		ck := report.Load().(string)
		if ck == "" {
			return false
		}
		return rewriteSandboxObjects(m, w, r, func(obj map[string]any) {
			if obj["name"] == "restored" {
				obj["checkpointId"] = ck
			}
		})
	})
	cfg := m.Config(setupOnceHCL(`
resource "prime_sandbox" "restored" {
  name          = "restored"
  checkpoint_id = prime_sandbox_checkpoint.setup.id
}
`))
	importPlans := func(action plancheck.ResourceActionType) resource.TestStep {
		return resource.TestStep{
			Config: cfg, ResourceName: "prime_sandbox.restored", ImportState: true,
			ImportStateKind: resource.ImportBlockWithID, ExpectNonEmptyPlan: action != plancheck.ResourceActionNoop,
			ImportPlanChecks: resource.ImportPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("prime_sandbox.restored", action),
			}},
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoCheckpoints,
		Steps: []resource.TestStep{
			{
				Config: cfg,
				Check: func(s *terraform.State) error {
					ck, ok := s.RootModule().Resources["prime_sandbox_checkpoint.setup"]
					if !ok {
						return fmt.Errorf("no checkpoint in state")
					}
					report.Store(ck.Primary.ID)
					return nil
				},
			},
			importPlans(plancheck.ResourceActionNoop),
			func() resource.TestStep {
				s := importPlans(plancheck.ResourceActionReplace)
				s.PreConfig = func() { report.Store("ck-other") }
				return s
			}(),
		},
	})
}
