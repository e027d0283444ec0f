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
)

func fleetConfig(keys string, extra string) string {
	return fmt.Sprintf(`
resource "prime_sandbox_fleet" "f" {
  name_prefix  = "eval"
  docker_image = "python:3.12-slim"
  labels       = ["fleet-test"]
  %s
  %s
}
`, keys, extra)
}

// egressAllow is a fleet template's egress block allowing host.
func egressAllow(host string) string {
	return fmt.Sprintf("egress {\n    allow = [%q]\n  }", host)
}

// fleetIDs reads sandbox_ids from state.
func fleetIDs(s *terraform.State) map[string]string {
	attrs := s.RootModule().Resources["prime_sandbox_fleet.f"].Primary.Attributes
	out := map[string]string{}
	for k, v := range attrs {
		if key, ok := strings.CutPrefix(k, "sandbox_ids."); ok && key != "%" {
			out[key] = v
		}
	}
	return out
}

// A fleet is created in one resource operation: every member's create goes
// out, one shared poller waits for all, each member is named and labelled
// from the template, and the create bodies are the SDK's. Growing and
// shrinking touches only the keys that changed; a member deleted out of
// band is re-created in place; destroy leaves nothing.
func TestAccSandboxFleet_lifecycle(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	var first map[string]string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: m.Config(fleetConfig("size = 3", "")),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("prime_sandbox_fleet.f", tfjsonpath.New("sandboxes").AtMapKey("2").AtMapKey("status"), knownvalue.StringExact("RUNNING")),
					statecheck.ExpectKnownValue("prime_sandbox_fleet.f", tfjsonpath.New("sandboxes").AtMapKey("0").AtMapKey("name"), knownvalue.StringExact("eval-0")),
					statecheck.ExpectKnownValue("prime_sandbox_fleet.f", tfjsonpath.New("vm"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue("prime_sandbox_fleet.f", tfjsonpath.New("cpu_cores"), knownvalue.Int64Exact(1)),
				},
				Check: func(s *terraform.State) error {
					first = fleetIDs(s)
					if len(first) != 3 || m.Stats().SandboxesCreated != 3 {
						return fmt.Errorf("ids %v, created %d; want 3", first, m.Stats().SandboxesCreated)
					}
					for _, b := range m.CreateBodies(t) {
						_, vm := b["vm"]
						_, start := b["start_command"]
						if vm || start || b["cpu_cores"] != 1.0 || !strings.HasPrefix(b["name"].(string), "eval-") {
							return fmt.Errorf("member create body %v: want cpu_cores 1 and no vm or start_command", b)
						}
					}
					return nil
				},
			},
			{
				Config: m.Config(fleetConfig("size = 5", "")),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox_fleet.f", plancheck.ResourceActionUpdate),
				}},
				Check: func(s *terraform.State) error {
					ids := fleetIDs(s)
					for k, id := range first {
						if ids[k] != id {
							return fmt.Errorf("member %s changed from %s to %s when the fleet grew", k, id, ids[k])
						}
					}
					if len(ids) != 5 || m.Stats().SandboxesCreated != 5 {
						return fmt.Errorf("ids %v, created %d; want 5", ids, m.Stats().SandboxesCreated)
					}
					return nil
				},
			},
			{
				// Member 1 is deleted out of band: the refresh drops it and the
				// plan re-creates it in place.
				PreConfig: func() {
					if err := m.Client(t).DeleteSandbox(mocktest.WaitCtx(t), first["1"]); err != nil {
						t.Fatal(err)
					}
				},
				Config: m.Config(fleetConfig("size = 5", "")),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox_fleet.f", plancheck.ResourceActionUpdate),
				}},
				Check: func(s *terraform.State) error {
					ids := fleetIDs(s)
					if ids["1"] == first["1"] || ids["0"] != first["0"] || ids["2"] != first["2"] {
						return fmt.Errorf("after an out-of-band delete: %v (was %v); want only member 1 new", ids, first)
					}
					return nil
				},
			},
			{
				Config: m.Config(fleetConfig("size = 2", "")),
				Check: func(s *terraform.State) error {
					if ids := fleetIDs(s); len(ids) != 2 || ids["0"] != first["0"] {
						return fmt.Errorf("after shrinking: %v", ids)
					}
					if live := m.Stats().LiveSandboxes; live != 2 {
						return fmt.Errorf("%d live sandboxes after shrinking to 2", live)
					}
					return nil
				},
			},
			{
				Config:        m.Config(fleetConfig("size = 2", "")),
				ResourceName:  "prime_sandbox_fleet.f",
				ImportState:   true,
				ImportStateId: "label:fleet-test",
				ImportStateCheck: func(states []*terraform.InstanceState) error {
					if len(states) != 1 || states[0].Attributes["name_prefix"] != "eval" || states[0].Attributes["size"] != "2" ||
						states[0].Attributes["sandbox_ids.0"] != first["0"] {
						return fmt.Errorf("imported %v", states[0].Attributes)
					}
					return nil
				},
			},
		},
	})
}

// A fleet's template follows prime_sandbox's plan-time rules, and size and
// members are exclusive.
func TestAccSandboxFleet_planTimeErrors(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	for _, tc := range []struct{ name, cfg, want string }{
		{"both size and members", fleetConfig("size = 2\n  members = [\"a\"]", ""), "2 attributes specified when one (and only one) of [size,members] is required"},
		{"vm false", fleetConfig("size = 2", "vm = false"), "vm: Prime retired container sandboxes on 2026-09-18; every sandbox is now a VM, and the platform answers a request for a container with HTTP 410 Gone"},
		{"guaranteed", fleetConfig("size = 2", "guaranteed = true"), "guaranteed: Prime retired container sandboxes on 2026-09-18"},
		{"registry credentials", fleetConfig("size = 2", "registry_credentials_id = \"c\""), "registry_credentials_id: Prime retired container sandboxes"},
		{"start_command", fleetConfig("size = 2", "start_command = \"sleep 1\""), `start_command: Prime retired container sandboxes on 2026-09-18`},
		{"fractional cpu_cores", fleetConfig("size = 2", "cpu_cores = 0.5"), "cpu_cores: must be a whole number of vCPUs (the platform takes no fractions), got 0.5"},
		{"timeout zero", fleetConfig("size = 2", "timeout_minutes = 0"), "timeout_minutes: must be negative for no lifetime limit (-1) or >= 1, got 0"},
		{"bad arch", fleetConfig("size = 2", "arch = \"riscv\""), `arch: must be "amd64" or "arm64", got "riscv"`},
		{"bad egress entry", fleetConfig("size = 2", "egress {\n    allow = [\"a..com\"]\n  }"), `egress.allow: "a..com"`},
		{"gpu without type", fleetConfig("size = 2", "gpu_count = 1"), "gpu_type: is required when gpu_count > 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: acctest.ProviderFactories(t),
				Steps:                    []resource.TestStep{{Config: m.Config(tc.cfg), PlanOnly: true, ExpectError: acctest.ExpectErr(tc.want)}},
			})
		})
	}
	m.NoAPICalls(t)
}

// A born-restricted fleet: every member's create body carries the lists, the
// create waits until every member enforces them, and an egress change is
// applied to every member in place.
func TestAccSandboxFleet_bornRestricted(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	var ids map[string]string
	var gen string // member a's egress generation after the change
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: m.Config(fleetConfig(`members = ["a", "b"]`, egressAllow("example.com"))),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("prime_sandbox_fleet.f", tfjsonpath.New("sandboxes").AtMapKey("a").AtMapKey("egress_applied"), knownvalue.Bool(true)),
				},
				Check: func(s *terraform.State) error {
					ids = fleetIDs(s)
					for _, id := range ids {
						if !m.Reaches(t, id, "example.com") || m.Reaches(t, id, "google.com") {
							return fmt.Errorf("member %s is not restricted to example.com", id)
						}
					}
					return nil
				},
			},
			{
				Config: m.Config(fleetConfig(`members = ["a", "b"]`, egressAllow("google.com"))),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox_fleet.f", plancheck.ResourceActionUpdate),
				}},
				Check: func(s *terraform.State) error {
					for _, id := range ids {
						if m.Reaches(t, id, "example.com") || !m.Reaches(t, id, "google.com") {
							return fmt.Errorf("member %s did not switch to google.com", id)
						}
					}
					gen = s.RootModule().Resources["prime_sandbox_fleet.f"].Primary.Attributes["sandboxes.a.egress_generation"]
					return nil
				},
			},
			{
				// An import reads the restriction the members share into the
				// egress block, with each member's generation.
				Config:        m.Config(fleetConfig(`members = ["a", "b"]`, egressAllow("google.com"))),
				ResourceName:  "prime_sandbox_fleet.f",
				ImportState:   true,
				ImportStateId: "label:fleet-test",
				ImportStateCheck: func(states []*terraform.InstanceState) error {
					a := states[0].Attributes
					if a["egress.allow.#"] != "1" || a["egress.allow.0"] != "google.com" ||
						gen == "" || a["sandboxes.a.egress_generation"] != gen || a["sandboxes.b.egress_applied"] != "true" {
						return fmt.Errorf("imported egress: %v", a)
					}
					return nil
				},
			},
		},
	})
}

// Members that hold different egress policies (one was changed from the
// CLI) import without an egress block, rather than one member's lists
// standing for the fleet.
func TestAccSandboxFleet_importMembersThatDisagreeOnEgress(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cfg := m.Config(fleetConfig(`members = ["a", "b"]`, egressAllow("example.com")))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: cfg,
				Check: func(s *terraform.State) error {
					_, err := m.Client(t).PutEgressPolicy(mocktest.WaitCtx(t), fleetIDs(s)["b"], prime.EgressPolicy{Allowlist: []string{"google.com"}})
					return err
				},
			},
			{
				Config:        cfg,
				ResourceName:  "prime_sandbox_fleet.f",
				ImportState:   true,
				ImportStateId: "label:fleet-test",
				ImportStateCheck: func(states []*terraform.InstanceState) error {
					a := states[0].Attributes
					if _, ok := a["egress.allow.#"]; ok || a["sandbox_ids.%"] != "2" {
						return fmt.Errorf("imported egress from members that disagree: %v", a)
					}
					return nil
				},
			},
		},
	})
}

// Under a data plane that never applies, a born-restricted fleet fails
// closed, naming every member.
func TestAccSandboxFleet_bornRestrictedFailsClosed(t *testing.T) {
	o := mocktest.Fast()
	o.NeverApply = true
	m := mocktest.New(t, o)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config:      m.Config(fleetConfig(`members = ["a", "b"]`, "egress {\n    allow = [\"example.com\"]\n  }\n  timeouts {\n    egress = \"1s\"\n  }")),
			ExpectError: acctest.ExpectErr(`2 member(s) failed; 0 are healthy. Member "a":`),
		}},
	})
	if st := m.Stats(); st.LiveSandboxes != 0 || st.SandboxesCreated != 2 {
		t.Fatalf("live %d created %d; failed members must be deleted", st.LiveSandboxes, st.SandboxesCreated)
	}
}

// A member that fails while the fleet grows fails the apply, naming it with
// the platform's error; it is deleted, the healthy members stay, and the
// next apply creates only what is missing.
func TestAccSandboxFleet_memberFailure(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	var first map[string]string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: m.Config(fleetConfig(`members = ["a"]`, "")),
				Check: func(s *terraform.State) error {
					first = fleetIDs(s)
					return nil
				},
			},
			{
				Config:      m.Config(fleetConfig(`members = ["a", "prime-mock-oom"]`, "")),
				ExpectError: acctest.ExpectErr(`1 member(s) failed; 1 are healthy. Member "prime-mock-oom": sandbox`),
			},
			{
				Config: m.Config(fleetConfig(`members = ["a", "b"]`, "")),
				Check: func(s *terraform.State) error {
					ids := fleetIDs(s)
					if len(ids) != 2 || ids["a"] != first["a"] {
						return fmt.Errorf("after the failure: %v (member a was %s); want a kept and b new", ids, first["a"])
					}
					if st := m.Stats(); st.LiveSandboxes != 2 || st.SandboxesCreated != 3 {
						return fmt.Errorf("live %d, created %d; want 2 live of 3 created (the failed one deleted)", st.LiveSandboxes, st.SandboxesCreated)
					}
					return nil
				},
			},
		},
	})
}

// Importing a fleet whose keys contain "-" guesses the name prefix wrong
// (names split at their last "-"); the configuration's name_prefix settles
// it, so the first plan updates in place and never deletes a member.
func TestAccSandboxFleet_importKeysWithDashes(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cfg := m.Config(fleetConfig(`members = ["task-a", "task-b"]`, ""))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				Config:             cfg,
				ResourceName:       "prime_sandbox_fleet.f",
				ImportState:        true,
				ImportStateKind:    resource.ImportBlockWithID,
				ImportStateId:      "label:fleet-test",
				ExpectNonEmptyPlan: true,
				ImportPlanChecks: resource.ImportPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox_fleet.f", plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue("prime_sandbox_fleet.f", tfjsonpath.New("sandbox_ids").AtMapKey("task-a"), knownvalue.NotNull()),
					plancheck.ExpectKnownValue("prime_sandbox_fleet.f", tfjsonpath.New("sandbox_ids").AtMapKey("task-b"), knownvalue.NotNull()),
				}},
			},
		},
	})
}
