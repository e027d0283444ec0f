package sandbox_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// A paused prime_sandbox's pause checkpoint (DURABLE, so it would outlive
// the sandbox and stay billed) is deleted by its destroy.
func TestAccPause_sandboxDestroyDeletesPauseCheckpoint(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoCheckpoints,
		Steps: []resource.TestStep{{
			Config: m.Config(pausedSandboxHCL("true")),
			Check: func(*terraform.State) error {
				_, err := m.DurableCheckpoints(t, 1)
				return err
			},
		}},
	})
}

// Replacing a paused sandbox deletes the old one's pause checkpoint; the
// new one's own pause checkpoint is the only one left.
func TestAccPause_sandboxReplacementDeletesOldPauseCheckpoint(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cfg := func(name string) string {
		return m.Config(fmt.Sprintf(`
resource "prime_sandbox" "box" {
  name         = %q
  docker_image = "python:3.12-slim"
  paused       = true
}
`, name))
	}
	var old []prime.Checkpoint
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoCheckpoints,
		Steps: []resource.TestStep{
			{Config: cfg("box"), Check: func(*terraform.State) (err error) {
				old, err = m.DurableCheckpoints(t, 1)
				return err
			}},
			{
				Config: cfg("box-2"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox.box", plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: func(*terraform.State) error {
					cks, err := m.DurableCheckpoints(t, 1)
					if err == nil && cks[0].ID == old[0].ID {
						err = fmt.Errorf("the replaced sandbox's pause checkpoint %s is left", old[0].ID)
					}
					return err
				},
			},
		},
	})
}

// A fleet of 3 paused, resumed and paused again took two pause checkpoints
// per member; its destroy deletes all six.
func TestAccPause_fleetDestroyDeletesEveryPauseCheckpoint(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cfg := func(paused bool) string {
		return m.Config(acctest.SandboxFleetHCL("boxes", "eval", 3, fmt.Sprintf("paused       = %t", paused)))
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoCheckpoints,
		Steps: []resource.TestStep{
			{Config: cfg(true)},
			{Config: cfg(false)},
			{Config: cfg(true), Check: func(*terraform.State) error {
				_, err := m.DurableCheckpoints(t, 6)
				return err
			}},
		},
	})
}

// The user's own checkpoint of a sandbox that is also paused is not the
// pause's: the sandbox's destroy deletes only the pause checkpoint, and the
// user's survives until its own destroy.
func TestAccPause_sandboxDestroyKeepsUserCheckpoint(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cfg := func(paused bool) string {
		return m.Config(fmt.Sprintf(`
resource "prime_sandbox" "template" {
  name         = "template"
  docker_image = "python:3.12-slim"
  paused       = %t
}
resource "prime_sandbox_checkpoint" "setup" {
  sandbox_id   = prime_sandbox.template.id
  source_after = "keep"
}
`, paused))
	}
	var sandboxID lateString
	var userCheckpoint string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoCheckpoints,
		Steps: []resource.TestStep{
			{Config: cfg(false), Check: func(s *terraform.State) (err error) {
				id, err := acctest.StateID(s, "prime_sandbox.template")
				sandboxID = lateString(id)
				if err == nil {
					userCheckpoint, err = acctest.StateID(s, "prime_sandbox_checkpoint.setup")
				}
				return err
			}},
			{Config: cfg(true), Check: func(*terraform.State) error {
				_, err := m.DurableCheckpoints(t, 2) // the user's and the pause's
				return err
			}},
			{
				// The sandbox goes; its checkpoint stays (same sandbox_id).
				Config: m.Config(`
variable "sandbox_id" {
  type = string
}
resource "prime_sandbox_checkpoint" "setup" {
  sandbox_id   = var.sandbox_id
  source_after = "keep"
}
`),
				ConfigVariables: config.Variables{"sandbox_id": &sandboxID},
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox.template", plancheck.ResourceActionDestroy),
					plancheck.ExpectResourceAction("prime_sandbox_checkpoint.setup", plancheck.ResourceActionNoop),
				}},
				Check: func(*terraform.State) error {
					if live := m.Stats().LiveSandboxes; live != 0 {
						return fmt.Errorf("%d sandboxes live after the sandbox's destroy", live)
					}
					cks, err := m.Client(t).ListCheckpoints(mocktest.WaitCtx(t), prime.ListCheckpointsOptions{})
					if err != nil {
						return err
					}
					if len(cks) != 1 || cks[0].ID != userCheckpoint {
						return fmt.Errorf("after the sandbox's destroy the platform lists %v, want only the user's checkpoint %s", checkpointIDs(cks), userCheckpoint)
					}
					return nil
				},
			},
		},
	})
}

// A fleet shrunk by one member deletes that member's pause checkpoint with
// it; the others' stay until the fleet's destroy.
func TestAccPause_fleetShrinkDeletesRemovedMembersPauseCheckpoint(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cfg := func(size int) string {
		return m.Config(acctest.SandboxFleetHCL("boxes", "eval", size, "paused       = true"))
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoCheckpoints,
		Steps: []resource.TestStep{
			{Config: cfg(3), Check: func(*terraform.State) error {
				_, err := m.DurableCheckpoints(t, 3)
				return err
			}},
			{Config: cfg(2), Check: func(*terraform.State) error {
				_, err := m.DurableCheckpoints(t, 2)
				return err
			}},
		},
	})
}

// A pause checkpoint the destroy cannot delete fails it, naming the
// checkpoint; the sandbox's deletion is recorded (TERMINATED) and the
// checkpoint stays recorded, so the refresh keeps the sandbox in state and
// the next destroy deletes the checkpoint.
func TestAccPause_undeletedPauseCheckpointStaysTracked(t *testing.T) {
	var refuse atomic.Bool
	m := mocktest.NewHooked(t, mocktest.Fast(), func(w http.ResponseWriter, r *http.Request, _ []byte) bool {
		if refuse.Load() && r.Method == http.MethodDelete && strings.HasPrefix(r.URL.Path, prime.APIPrefix+"/sandbox/checkpoints/") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"detail":"checkpoint deletes refused (test)"}`))
			return true
		}
		return false
	})
	var pauseCheckpoint string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoCheckpoints,
		Steps: []resource.TestStep{
			{Config: m.Config(pausedSandboxHCL("true")), Check: func(*terraform.State) error {
				cks, err := m.DurableCheckpoints(t, 1)
				if err == nil {
					pauseCheckpoint = cks[0].ID
					refuse.Store(true)
				}
				return err
			}},
			{
				// Removed from the configuration: destroyed, the checkpoint refused.
				Config:      m.Config(" "),
				ExpectError: regexp.MustCompile(`(?s)Pause checkpoints not deleted.*checkpoints their pauses took.*ck[0-9a-z]+`),
			},
			{
				PreConfig: func() {
					if live := m.Stats().LiveSandboxes; live != 0 {
						t.Errorf("%d sandboxes live after the failed destroy", live)
					}
					cks, err := m.Client(t).ListCheckpoints(mocktest.WaitCtx(t), prime.ListCheckpointsOptions{})
					if err != nil || len(cks) != 1 || cks[0].ID != pauseCheckpoint {
						t.Errorf("after the failed destroy: %v, %v; want only %s", checkpointIDs(cks), err, pauseCheckpoint)
					}
					refuse.Store(false)
				},
				// The refresh keeps the sandbox (TERMINATED) for its checkpoint,
				// and this apply destroys it, deleting the checkpoint.
				Config: m.Config(" "),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox.box", plancheck.ResourceActionDestroy),
				}},
			},
		},
	})
}

func checkpointIDs(cks []prime.Checkpoint) []string {
	out := make([]string, len(cks))
	for i, ck := range cks {
		out[i] = ck.ID
	}
	return out
}

// lateString is a string variable whose value a test step fills in for a
// later one (config.Variables are marshalled when a step runs).
type lateString string

func (l *lateString) MarshalJSON() ([]byte, error) { return json.Marshal(string(*l)) }
