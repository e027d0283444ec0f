package sandbox_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	fwresource "github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/sandbox"
)

// importFleetBlock imports prime_sandbox_fleet.f by the test label.
const importFleetBlock = "\nimport {\n  to = prime_sandbox_fleet.f\n  id = \"label:fleet-test\"\n}\n"

// twoSandboxes are two prime_sandbox resources named eval-0 and eval-1
// under the test label, with the given images.
func twoSandboxes(img0, img1 string) string {
	return fmt.Sprintf(`
resource "prime_sandbox" "s0" {
  name         = "eval-0"
  docker_image = %q
  labels       = ["fleet-test"]
}
resource "prime_sandbox" "s1" {
  name         = "eval-1"
  docker_image = %q
  labels       = ["fleet-test"]
}
`, img0, img1)
}

// forgetTwo takes twoSandboxes out of state and leaves them running.
const forgetTwo = `
removed {
  from = prime_sandbox.s0
  lifecycle {
    destroy = false
  }
}
removed {
  from = prime_sandbox.s1
  lifecycle {
    destroy = false
  }
}
`

// An import whose configuration matches what the import read plans no
// change, and that no-op apply stores nothing but the refresh, which never
// rewrites the import marker (so drift checks pass; see tfkit.ImportedKey). The
// first later change of name_prefix is therefore recorded in place (the
// plan warns); that apply ends the exemption, and the next change
// replaces the fleet and renames its members.
func TestAccSandboxFleet_templateChangeAfterImport(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cfg := fleetConfig("size = 2", "")
	forget := "\nremoved {\n  from = prime_sandbox_fleet.f\n  lifecycle {\n    destroy = false\n  }\n}\n"
	renamed := strings.Replace(cfg, `name_prefix  = "eval"`, `name_prefix  = "renamed"`, 1)
	again := strings.Replace(cfg, `name_prefix  = "eval"`, `name_prefix  = "again"`, 1)
	var ids map[string]string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{Config: m.Config(cfg)},
			{Config: m.Config(forget)}, // the fleet leaves state; its sandboxes keep running
			{Config: m.Config(cfg + importFleetBlock)},
			{Config: m.Config(cfg), Check: func(s *terraform.State) error { ids = fleetIDs(s); return nil }},
			{
				Config: m.Config(renamed),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox_fleet.f", plancheck.ResourceActionUpdate),
				}},
				Check: func(s *terraform.State) error {
					if got := fleetIDs(s); fmt.Sprint(got) != fmt.Sprint(ids) {
						return fmt.Errorf("members %v became %v: the recorded name_prefix must not touch them", ids, got)
					}
					return nil
				},
			},
			{
				Config: m.Config(again),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox_fleet.f", plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: func(s *terraform.State) error {
					a := s.RootModule().Resources["prime_sandbox_fleet.f"].Primary.Attributes
					if a["sandboxes.0.name"] != "again-0" {
						return fmt.Errorf("name_prefix = %q but member 0 is named %q", a["name_prefix"], a["sandboxes.0.name"])
					}
					return nil
				},
			},
		},
	})
}

// The same for prime_sandbox, through a CLI import: after the no-op apply
// that follows the import, adding secrets is recorded in place (the plan
// warns); once that apply has run, changing them replaces the sandbox.
func TestAccSandbox_secretsChangeAfterImport(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	box := func(extra string) string {
		return m.Config(fmt.Sprintf(`
resource "prime_sandbox" "test" {
  name         = "imported"
  docker_image = "python:3.12-slim"
  %s
}
`, extra))
	}
	forget := m.Config("\nremoved {\n  from = prime_sandbox.test\n  lifecycle {\n    destroy = false\n  }\n}\n")
	var id string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{Config: box(""), Check: func(s *terraform.State) (err error) { id, err = acctest.StateID(s, "prime_sandbox.test"); return err }},
			{Config: forget},
			{
				Config:             box(""),
				ResourceName:       "prime_sandbox.test",
				ImportState:        true,
				ImportStatePersist: true,
				ImportStateIdFunc:  func(*terraform.State) (string, error) { return id, nil },
			},
			{Config: box("")},
			{
				Config: box(`secrets = { TOKEN = "s3cret" }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox.test", plancheck.ResourceActionUpdate),
				}},
			},
			{
				Config: box(`secrets = { TOKEN = "changed" }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox.test", plancheck.ResourceActionDestroyBeforeCreate),
				}},
			},
		},
	})
}

// Importing members created from different templates fails, naming the
// attribute and the members that differ, instead of one member's template
// standing for all of them.
func TestAccSandboxFleet_importMixedTemplatesFails(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		Steps: []resource.TestStep{
			{Config: m.Config(twoSandboxes("python:3.12-slim", "ubuntu:22.04"))},
			{Config: m.Config(forgetTwo)},
			{
				Config: m.Config(fleetConfig("size = 2", "") + importFleetBlock),
				ExpectError: regexp.MustCompile(`Cannot import fleet[\s\S]*docker_image[\s\S]*"python:3.12-slim"[\s\S]*eval-0` +
					`[\s\S]*"ubuntu:22.04"[\s\S]*eval-1`),
			},
		},
	})
}

// Two running sandboxes named eval-0 under the label: the import fails
// naming them, not with the framework's "Duplicate Set Element".
func TestAccSandboxFleet_importDuplicateNamesFails(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		Steps: []resource.TestStep{
			{Config: m.Config(strings.Replace(twoSandboxes("python:3.12-slim", "python:3.12-slim"), `"eval-1"`, `"eval-0"`, 1))},
			{Config: m.Config(forgetTwo)},
			{
				Config:        m.Config(fleetConfig("size = 1", "")),
				ResourceName:  "prime_sandbox_fleet.f",
				ImportState:   true,
				ImportStateId: "label:fleet-test",
				ExpectError:   regexp.MustCompile(`Cannot import fleet[\s\S]*sandboxes\s+\S+\s+and\s+\S+\s+are\s+both\s+named\s+"eval-0"`),
			},
		},
	})
}

// An ID listed twice is one member.
func TestAccSandboxFleet_importRepeatedIDIsOneMember(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	var id0, id1 string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		Steps: []resource.TestStep{
			{
				Config: m.Config(twoSandboxes("python:3.12-slim", "python:3.12-slim")),
				Check: func(s *terraform.State) (err error) {
					if id0, err = acctest.StateID(s, "prime_sandbox.s0"); err != nil {
						return err
					}
					id1, err = acctest.StateID(s, "prime_sandbox.s1")
					return err
				},
			},
			{Config: m.Config(forgetTwo)},
			{
				Config:            m.Config(fleetConfig("size = 2", "")),
				ResourceName:      "prime_sandbox_fleet.f",
				ImportState:       true,
				ImportStateIdFunc: func(*terraform.State) (string, error) { return id0 + "," + id1 + "," + id0, nil },
				ImportStateCheck: func(states []*terraform.InstanceState) error {
					a := states[0].Attributes
					if a["sandbox_ids.%"] != "2" || a["size"] != "2" || a["sandbox_ids.0"] != id0 || a["sandbox_ids.1"] != id1 {
						return fmt.Errorf("imported %v; want members 0=%s and 1=%s", a, id0, id1)
					}
					return nil
				},
			},
		},
	})
}

// A member create whose outcome is unknown (the platform made the sandbox,
// the answer was lost) keeps its create-journal key, released, so the next
// apply adopts that sandbox instead of creating a second one that nobody
// tracks.
func TestAccSandboxFleet_lostCreateAnswerIsAdoptedNextApply(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	var broken atomic.Bool
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if broken.Load() && r.Method == http.MethodPost && r.URL.Path == prime.APIPrefix+"/sandbox" {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"eval-b"`)) {
				m.Server.ServeHTTP(httptest.NewRecorder(), r) // the platform creates it ...
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusServiceUnavailable) // ... and the answer is lost
				_, _ = w.Write([]byte(`{"detail":"upstream timeout"}`))
				return
			}
		}
		m.Server.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	dir := t.TempDir()
	factories := acctest.ProviderFactoriesWithJournal(dir)
	provider := fmt.Sprintf("provider \"prime\" {\n  base_url = %q\n  api_key = \"test-key\"\n  max_retries = 1\n}\n", front.URL)
	liveB := func() int {
		list, err := m.Client(t).ListSandboxes(mocktest.WaitCtx(t), prime.ListSandboxesOptions{Labels: []string{"fleet-test"}})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, sb := range list {
			if sb.Name == "eval-b" && !prime.IsTerminalStatus(sb.Status) {
				n++
			}
		}
		return n
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{Config: provider + fleetConfig(`members = ["a"]`, "")},
			{
				PreConfig:   func() { broken.Store(true) },
				Config:      provider + fleetConfig(`members = ["a", "b"]`, ""),
				ExpectError: acctest.ExpectErr(`Member "b": cannot create the sandbox`),
			},
			{
				PreConfig: func() {
					broken.Store(false)
					if left, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(left) != 1 {
						t.Errorf("journal holds %d entries after member b's create outcome was lost; want 1 (its key)", len(left))
					}
				},
				Config: provider + fleetConfig(`members = ["a", "b"]`, ""),
				Check: func(*terraform.State) error {
					if n := liveB(); n != 1 {
						return fmt.Errorf("%d live sandboxes named eval-b; the lost create's sandbox was not adopted", n)
					}
					return nil
				},
			},
		},
	})
}

// An egress change that is never enforced fails the update; the members are
// kept in state (fail-closed, written again by the next apply), and the
// error says so instead of "Failed members were deleted".
func TestAccSandboxFleet_egressUpdateFailureSaysMembersKept(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	tmo := "\n  timeouts {\n    egress = \"1s\"\n  }"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{Config: m.Config(fleetConfig(`members = ["a", "b"]`, egressAllow("example.com")+tmo))},
			{
				PreConfig: func() { m.SetNeverApply(true) },
				Config:    m.Config(fleetConfig(`members = ["a", "b"]`, egressAllow("google.com")+tmo)),
				ExpectError: acctest.ExpectErr(`Members "a", "b" stay in state with egress_applied = false; the next apply writes ` +
					`their egress policy again.`),
			},
			{
				// As the error says: no member was deleted, and the next apply
				// writes the policy again.
				PreConfig: func() { m.SetNeverApply(false) },
				Config:    m.Config(fleetConfig(`members = ["a", "b"]`, egressAllow("google.com")+tmo)),
				Check: func(*terraform.State) error {
					if st := m.Stats(); st.LiveSandboxes != 2 || st.SandboxesCreated != 2 {
						return fmt.Errorf("live %d, created %d; want the 2 members kept, none created", st.LiveSandboxes, st.SandboxesCreated)
					}
					return nil
				},
			},
		},
	})
}

// The fleet's timeouts.create says what a fleet does on timeout (members
// not ready are deleted, healthy ones kept), not prime_sandbox's "stays in
// state, tainted"; and it does delete them.
func TestAccSandboxFleet_createTimeoutDocMatchesBehaviour(t *testing.T) {
	var resp fwresource.SchemaResponse
	sandbox.NewFleetResource().Schema(context.Background(), fwresource.SchemaRequest{}, &resp)
	desc := resp.Schema.Blocks["timeouts"].(schema.SingleNestedBlock).Attributes["create"].GetMarkdownDescription()
	if strings.Contains(desc, "tainted") || !strings.Contains(desc, "deleted") {
		t.Fatalf("fleet timeouts.create says %q; a fleet deletes members that time out", desc)
	}

	o := mocktest.Fast()
	o.BootDelay = time.Hour // never ready, however slow the machine
	m := mocktest.New(t, o)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		Steps: []resource.TestStep{{
			Config:      m.Config(fleetConfig(`members = ["a", "b"]`, "timeouts {\n    create = \"1s\"\n  }")),
			ExpectError: acctest.ExpectErr(`2 member(s) failed; 0 are healthy.`),
		}},
	})
	if live := m.Stats().LiveSandboxes; live != 0 {
		t.Fatalf("%d members live after they timed out; timeouts.create says they are deleted", live)
	}
}

// Members "a" and "eval-a" both map to key "a" under name_prefix "eval":
// the plan fails naming both sandboxes rather than dropping one of them
// from state.
func TestAccSandboxFleet_importKeyCollisionFails(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	two := acctest.SandboxHCL("s0", "a", `labels       = ["fleet-test"]`) + `resource "prime_sandbox" "s1" {
  name         = "eval-a"
  docker_image = "python:3.12-slim"
  labels       = ["fleet-test"]
}
`
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		Steps: []resource.TestStep{
			{Config: m.Config(two)},
			{Config: m.Config(forgetTwo)},
			{
				Config:      m.Config(fleetConfig(`members = ["a", "eval-a"]`, "") + importFleetBlock),
				ExpectError: regexp.MustCompile(`(?s)sandboxes\s+\S+\s+\("a"\)\s+and\s+\S+\s+\("eval-a"\)\s+both\s+map\s+to\s+member\s+key\s+"a"`),
			},
		},
	})
}
