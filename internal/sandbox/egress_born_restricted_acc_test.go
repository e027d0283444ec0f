package sandbox_test

import (
	"fmt"
	"reflect"
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

func bornHCL(egress string) string {
	return fmt.Sprintf(`
resource "prime_sandbox" "box" {
  name         = "born"
  docker_image = "python:3.12-slim"
  %s
}
`+acctest.CommandHCL("agent_example", "prime_sandbox.box.id", "probe example.com", `allowed_exit_codes = [0, 7]`)+acctest.CommandHCL("agent_google", "prime_sandbox.box.id", "curl -sS https://google.com/", `allowed_exit_codes = [0, 7]`), egress)
}

// A sandbox born restricted: the create body carries the list, the create
// waits until the data plane enforces it, a dependent command finds
// example.com reachable and google.com not. Changing the list updates it in
// place and enforces it before the apply returns; removing the block reopens
// egress; every second plan is empty.
func TestAccSandbox_bornRestricted(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	var id string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: m.Config(bornHCL(`egress {
    allow = ["Example.COM"]
  }`)),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("prime_sandbox.box", tfjsonpath.New("egress_applied"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue("prime_sandbox.box", tfjsonpath.New("egress_generation"), knownvalue.NotNull()),
					statecheck.ExpectKnownValue("prime_sandbox.box", tfjsonpath.New("egress").AtMapKey("effective_allow"),
						knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("example.com")})),
					statecheck.ExpectKnownValue("prime_sandbox_command.agent_example", tfjsonpath.New("exit_code"), knownvalue.Int64Exact(0)),
					statecheck.ExpectKnownValue("prime_sandbox_command.agent_google", tfjsonpath.New("exit_code"), knownvalue.Int64Exact(7)),
				},
				Check: func(s *terraform.State) error {
					var err error
					if id, err = acctest.StateID(s, "prime_sandbox.box"); err != nil {
						return err
					}
					bodies := m.CreateBodies(t)
					if len(bodies) != 1 || !reflect.DeepEqual(bodies[0]["network_allowlist"], []any{"example.com"}) {
						return fmt.Errorf("create body lists: %v", bodies)
					}
					if _, sent := bodies[0]["network_denylist"]; sent {
						return fmt.Errorf("network_denylist sent with an allowlist: %v", bodies[0])
					}
					return checkCommandsAfterBornApplied(m.Events(), id)
				},
			},
			{
				Config: m.Config(bornHCL(`egress {
    allow = ["google.com"]
  }`)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox.box", plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error {
					if !m.Reaches(t, id, "google.com") || m.Reaches(t, id, "example.com") {
						return fmt.Errorf("after the update: google.com reachable %t, example.com reachable %t; want true, false",
							m.Reaches(t, id, "google.com"), m.Reaches(t, id, "example.com"))
					}
					return nil
				},
			},
			{
				Config: m.Config(bornHCL("")),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox.box", plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("prime_sandbox.box", tfjsonpath.New("egress_generation"), knownvalue.Null()),
				},
				Check: func(*terraform.State) error {
					if !m.Reaches(t, id, "example.com") {
						return fmt.Errorf("removing the egress block did not reopen egress")
					}
					return nil
				},
			},
		},
	})
}

// checkCommandsAfterBornApplied: every command on the sandbox started after
// its born policy was applied.
func checkCommandsAfterBornApplied(events []primemock.Event, id string) error {
	applied := int64(-1)
	for _, e := range events {
		if e.SandboxID != id {
			continue
		}
		switch e.Type {
		case primemock.EventPolicyApplied:
			if applied < 0 {
				applied = e.Seq
			}
		case primemock.EventCommandExecuted:
			if e.Command == acctest.GatewayProbe {
				continue // the create's own reachability probe
			}
			if applied < 0 || e.Seq < applied {
				return fmt.Errorf("command %q ran before the born policy was applied", e.Command)
			}
		}
	}
	if applied < 0 {
		return fmt.Errorf("the born policy was never applied")
	}
	return nil
}

// Under a data plane that never applies, the create fails closed: the
// sandbox stays in state (tainted, destroyed by the harness) and no
// dependent command ever runs.
func TestAccSandbox_bornRestrictedFailsClosed(t *testing.T) {
	o := mocktest.Fast()
	o.NeverApply = true
	m := mocktest.New(t, o)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config: m.Config(bornHCL(`egress {
    allow = ["example.com"]
  }
  timeouts {
    egress = "1s"
  }`)),
			ExpectError: acctest.ExpectErr("Failing closed: the policy is not recorded as applied"),
		}},
	})
	for _, e := range m.Events() {
		if e.Type == primemock.EventCommandExecuted && e.Command != acctest.GatewayProbe {
			t.Fatalf("a dependent command ran on an unenforced born policy: %q", e.Command)
		}
	}
	if created := m.Stats().SandboxesCreated; created != 1 {
		t.Fatalf("%d sandboxes created, want 1 (kept in state, not recreated)", created)
	}
}

// Bad born lists fail at plan time, naming the attribute, before any API
// call.
func TestAccSandbox_bornRestrictedPlanTimeErrors(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	for _, tc := range []struct {
		name, egress, vm, want string
	}{
		{"both lists", `allow = ["a.com"]
    block = ["b.com"]`, "", "egress.allow: allow and block are mutually exclusive"},
		{"bad entry", `allow = ["https://example.com/x"]`, "", `egress.allow: "https://example.com/x": URLs are not supported; use the bare hostname "example.com"`},
		{"wildcard star", `allow = ["*"]`, "", `egress.allow: "*" is not an entry`},
		{"container", `allow = ["a.com"]`, "vm = false", "vm: Prime retired container sandboxes on 2026-09-18"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: acctest.ProviderFactories(t),
				Steps: []resource.TestStep{{
					Config: m.Config(fmt.Sprintf(`
resource "prime_sandbox" "box" {
  name         = "born"
  docker_image = "img"
  %s
  egress {
    %s
  }
}
`, tc.vm, tc.egress)),
					PlanOnly:    true,
					ExpectError: acctest.ExpectErr(tc.want),
				}},
			})
		})
	}
	m.NoAPICalls(t)
}

// A prime_egress_policy layered on a born-restricted sandbox: its destroy
// restores the born lists, never an open policy, and the sandbox does not
// fight it while it exists (every second plan is empty).
func TestAccSandbox_bornRestrictedWithLayeredPolicy(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	sandbox := `
resource "prime_sandbox" "box" {
  name         = "layered"
  docker_image = "python:3.12-slim"
  egress {
    allow = ["pypi.org"]
  }
}
`
	var id string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: m.Config(sandbox + acctest.EgressPolicyHCL("agent", "prime_sandbox.box.id", []string{"example.com"})),
				Check: func(s *terraform.State) error {
					var err error
					id, err = acctest.StateID(s, "prime_sandbox.box")
					if err != nil {
						return err
					}
					if !m.Reaches(t, id, "example.com") || m.Reaches(t, id, "pypi.org") {
						return fmt.Errorf("the layered policy is not the one in force")
					}
					return nil
				},
			},
			{
				// A refresh while the layered policy holds the sandbox: the
				// sandbox reports it and does not plan to fight it.
				RefreshState: true,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("prime_sandbox.box", "egress_override_generation", "1"),
					resource.TestCheckResourceAttr("prime_sandbox.box", "egress_applied", "true"),
				),
			},
			{
				Config: m.Config(sandbox),
				Check: func(*terraform.State) error {
					st, err := m.Client(t).GetEgressPolicy(mocktest.WaitCtx(t), id)
					if err != nil {
						return err
					}
					if !prime.SamePolicy(st.Policy, prime.EgressPolicy{Allowlist: []string{"pypi.org"}}) || !st.Applied {
						return fmt.Errorf("after the layered policy's destroy the sandbox holds %+v (applied %t), want its born lists", st.Policy, st.Applied)
					}
					return nil
				},
			},
			{
				// The restore is the block's own policy again: no override.
				Config: m.Config(sandbox),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("prime_sandbox.box", tfjsonpath.New("egress_override_generation"), knownvalue.Null()),
				},
			},
		},
	})
}

// Changing or removing a born sandbox's egress block while a newer layered
// policy holds the sandbox would lift that policy: nothing is written and
// the apply says why. Removing the layered policy in the same apply lets
// the block change go through.
func TestAccSandbox_egressBlockChangeRespectsLayeredPolicy(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	sandbox := func(egress string) string {
		return fmt.Sprintf(`
resource "prime_sandbox" "box" {
  name         = "layered"
  docker_image = "python:3.12-slim"
  %s
}
`, egress)
	}
	layered := acctest.EgressPolicyHCL("agent", "prime_sandbox.box.id", []string{})
	born := "egress {\n    allow = [\"pypi.org\"]\n  }"
	var id string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: m.Config(sandbox(born) + layered),
				Check:  func(s *terraform.State) (err error) { id, err = acctest.StateID(s, "prime_sandbox.box"); return err },
			},
			{
				Config:      m.Config(sandbox("") + layered),
				ExpectError: acctest.ExpectInOrder(`Egress block not written`, `written after its egress block's generation 0 by another writer`, `nothing was written`),
				Check: func(*terraform.State) error {
					if m.Reaches(t, id, "google.com") || m.Reaches(t, id, "pypi.org") {
						return fmt.Errorf("removing the egress block lifted the layered deny-all policy")
					}
					return nil
				},
			},
			{
				Config:      m.Config(sandbox("egress {\n    allow = [\"google.com\"]\n  }") + layered),
				ExpectError: acctest.ExpectInOrder(`Egress block not written`),
			},
			{
				// Both at once: the layered policy's destroy restores the
				// born lists, then the block's removal reopens.
				Config: m.Config(sandbox("")),
				Check: func(*terraform.State) error {
					if !m.Reaches(t, id, "google.com") {
						return fmt.Errorf("the sandbox is not open after the layered policy and the block were removed")
					}
					return nil
				},
			},
		},
	})
}

// An egress write that failed closed and was enforced later must not let
// the block's previous lists pass for enforced: the refresh compares the
// lists, and the next apply writes the block again.
func TestAccSandbox_lateEnforcedFailedWriteIsNotTheBlock(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cfg := func(egress string) string {
		return m.Config(fmt.Sprintf(`
resource "prime_sandbox" "box" {
  name         = "born"
  docker_image = "python:3.12-slim"
  %s
  timeouts {
    egress = "1s"
  }
}
`, egress))
	}
	block := "egress {\n    allow = [\"example.com\"]\n  }"
	var id string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{Config: cfg(block), Check: func(s *terraform.State) (err error) { id, err = acctest.StateID(s, "prime_sandbox.box"); return err }},
			{
				PreConfig:   func() { m.SetNeverApply(true) },
				Config:      cfg(""),
				ExpectError: acctest.ExpectErr("Egress policy not enforced"),
			},
			{
				PreConfig: func() {
					m.SetNeverApply(false)
					// The late open write is enforced before the next plan.
					var openGen int64 = -1
					for _, e := range m.Events() {
						if e.Type == primemock.EventPolicyPut && e.SandboxID == id && e.Policy != nil && e.Policy.IsOpen() {
							openGen = e.Generation
						}
					}
					if _, err := m.WaitForEvent(mocktest.WaitCtx(t), func(e primemock.Event) bool {
						return e.Type == primemock.EventPolicyApplied && e.SandboxID == id && e.Generation >= openGen
					}); err != nil || openGen < 0 {
						t.Fatalf("the open write (generation %d) was never enforced: %v", openGen, err)
					}
				},
				Config: cfg(block),
				Check: func(*terraform.State) error {
					if m.Reaches(t, id, "google.com") {
						return fmt.Errorf("state records egress { allow = [example.com] } as applied, but the sandbox is open")
					}
					return nil
				},
			},
		},
	})
}

// The fleet's egress block follows the same rule as prime_sandbox's: a
// change under a layered fleet policy writes nothing on the members it
// holds, keeps the previous block in state (so the next plan proposes it
// again), and goes through once the layered policy is gone.
func TestAccSandboxFleet_egressBlockChangeRespectsLayeredPolicy(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	const layered = `
resource "prime_fleet_egress_policy" "agent" {
  sandbox_ids = prime_sandbox_fleet.f.sandbox_ids
  allow       = []
}
`
	var ids map[string]string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: m.Config(fleetConfig(`size = 2`, egressAllow("pypi.org")) + layered),
				Check:  func(s *terraform.State) error { ids = fleetIDs(s); return nil },
			},
			{
				Config:      m.Config(fleetConfig(`size = 2`, "") + layered),
				ExpectError: acctest.ExpectInOrder(`Fleet members failed`, `Writing the block now would lift that policy`),
				Check: func(*terraform.State) error {
					for k, id := range ids {
						if m.Reaches(t, id, "google.com") || m.Reaches(t, id, "pypi.org") {
							return fmt.Errorf("member %s: removing the egress block lifted the layered deny-all policy", k)
						}
					}
					return nil
				},
			},
			{
				Config:             m.Config(fleetConfig(`size = 2`, "") + layered),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true, // the block's removal is proposed again
			},
			{
				Config: m.Config(fleetConfig(`size = 2`, "")),
				Check: func(*terraform.State) error {
					for k, id := range ids {
						if !m.Reaches(t, id, "google.com") {
							return fmt.Errorf("member %s is not open after the layered policy and the block were removed", k)
						}
					}
					return nil
				},
			},
		},
	})
}

// An imported sandbox without an egress block reads its platform policy
// into the block once, at its import; a prime_egress_policy added later is
// a layered policy, never taken for the sandbox's own block (which would
// plan to "remove" it and reopen egress under the lock).
func TestAccSandbox_importedSandboxDoesNotSwallowLaterPolicy(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	sb, err := m.Client(t).CreateSandbox(mocktest.WaitCtx(t), prime.CreateSandboxRequest{Name: "imported", DockerImage: "python:3.12-slim"})
	if err != nil {
		t.Fatal(err)
	}
	sandbox := acctest.SandboxHCL("test", "imported")
	lock := acctest.EgressPolicyHCL("lock", "prime_sandbox.test.id", []string{"example.com"})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{Config: m.Config(fmt.Sprintf("import {\n  to = prime_sandbox.test\n  id = %q\n}\n", sb.ID) + sandbox)},
			{Config: m.Config(sandbox + lock)},
			{
				Config: m.Config(sandbox + lock),
				Check: func(*terraform.State) error {
					if m.Reaches(t, sb.ID, "google.com") {
						return fmt.Errorf("google.com reachable: re-applying an unchanged configuration reopened egress under prime_egress_policy.lock")
					}
					return nil
				},
			},
		},
	})
}
