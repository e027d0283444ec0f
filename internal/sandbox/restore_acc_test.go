package sandbox_test

import (
	"fmt"
	"strconv"
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
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// setupOnceHCL is a template sandbox whose trusted setup writes a marker
// (network open), its checkpoint (after the setup), and the rest.
func setupOnceHCL(rest string) string {
	return acctest.SandboxHCL("template", "template") + `resource "prime_sandbox_command" "setup" {
  sandbox_id = prime_sandbox.template.id
  command    = "mkdir -p /opt/task && echo setup-done > /opt/task/marker"
}
resource "prime_sandbox_checkpoint" "setup" {
  sandbox_id = prime_sandbox.template.id
  depends_on = [prime_sandbox_command.setup]
}
` + rest
}

// A sandbox restored from a checkpoint has the source's files, takes the
// checkpoint's image and disk (docker_image stays null, nothing is sent for
// either), and plans nothing the second time.
func TestAccRestore_sandboxFromCheckpoint(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cfg := m.Config(setupOnceHCL(`
resource "prime_sandbox" "restored" {
  name          = "restored"
  checkpoint_id = prime_sandbox_checkpoint.setup.id
}` + acctest.CommandHCL("check", "prime_sandbox.restored.id", "cat /opt/task/marker")))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoCheckpoints,
		Steps: []resource.TestStep{
			{
				Config: cfg,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("prime_sandbox.restored", tfjsonpath.New("docker_image"), knownvalue.Null()),
					statecheck.ExpectKnownValue("prime_sandbox.restored", tfjsonpath.New("disk_size_gb"), knownvalue.NotNull()),
					statecheck.ExpectKnownValue("prime_sandbox.restored", tfjsonpath.New("status"), knownvalue.StringExact("RUNNING")),
					statecheck.ExpectKnownValue("prime_sandbox_command.check", tfjsonpath.New("stdout"), knownvalue.StringExact("setup-done\n")),
				},
				Check: func(*terraform.State) error {
					bodies := m.CreateBodies(t)
					if len(bodies) != 2 {
						return fmt.Errorf("%d creates, want 2", len(bodies))
					}
					b := bodies[1]
					for _, k := range []string{"docker_image", "disk_size_gb", "network_allowlist", "restore_memory"} {
						if _, ok := b[k]; ok {
							return fmt.Errorf("the restore's create sent %s: %v", k, b)
						}
					}
					if b["checkpoint_id"] == nil {
						return fmt.Errorf("the restore's create has no checkpoint_id: %v", b)
					}
					return nil
				},
			},
			{
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
			},
		},
	})
}

// checkLockedBeforeCommands: on each sandbox, a policy with an allowlist
// was written and then enforced (applied_generation reached it) before any
// command other than the create's readiness probe ran.
func checkLockedBeforeCommands(events []primemock.Event, ids []string) error {
	for _, id := range ids {
		put, locked := int64(-1), int64(-1)
		for _, e := range events {
			if e.SandboxID != id {
				continue
			}
			switch e.Type {
			case primemock.EventPolicyPut:
				if put < 0 && e.Policy != nil && e.Policy.Allowlist != nil {
					put = e.Generation
				}
			case primemock.EventPolicyApplied:
				if locked < 0 && put > 0 && e.Generation >= put {
					locked = e.Seq
				}
			case primemock.EventCommandExecuted:
				if e.Command == acctest.GatewayProbe {
					continue
				}
				if locked < 0 || e.Seq < locked {
					return fmt.Errorf("sandbox %s ran %q before its lock was enforced", id, e.Command)
				}
			}
		}
		if locked < 0 {
			return fmt.Errorf("sandbox %s was never locked", id)
		}
	}
	return nil
}

// A restore with an egress block is created open ([I]: the create carries
// no lists with checkpoint_id) and locked through the fail-closed wait
// before its create returns: a command that depends on it runs only once
// the lock is enforced, and the second plan is empty.
func TestAccRestore_egressLockedBeforeDependents(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cfg := m.Config(setupOnceHCL(`
resource "prime_sandbox" "restored" {
  name          = "restored"
  checkpoint_id = prime_sandbox_checkpoint.setup.id
  egress {
    allow = ["example.com"]
  }
}` + acctest.CommandHCL("agent", "prime_sandbox.restored.id", "cat /opt/task/marker")))
	var id string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoCheckpoints,
		Steps: []resource.TestStep{
			{
				Config: cfg,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("prime_sandbox.restored", tfjsonpath.New("egress_applied"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue("prime_sandbox.restored", tfjsonpath.New("egress_generation"), knownvalue.NotNull()),
					statecheck.ExpectKnownValue("prime_sandbox_command.agent", tfjsonpath.New("stdout"), knownvalue.StringExact("setup-done\n")),
				},
				Check: func(s *terraform.State) error {
					var err error
					if id, err = acctest.StateID(s, "prime_sandbox.restored"); err != nil {
						return err
					}
					if b := m.CreateBodies(t)[1]; b["network_allowlist"] != nil || b["checkpoint_id"] == nil {
						return fmt.Errorf("the restore's create body is %v, want checkpoint_id and no lists", b)
					}
					if m.Reaches(t, id, "google.com") {
						return fmt.Errorf("the restored sandbox reaches google.com")
					}
					return checkLockedBeforeCommands(m.Events(), []string{id})
				},
			},
			{Config: cfg, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
		},
	})
}

// A restore's lock that is never enforced fails closed: the sandbox stays
// in state, tainted (the next plan replaces it), its dependents never run,
// and it is never recorded as restricted.
func TestAccRestore_egressFailsClosedTainted(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	base := setupOnceHCL("")
	restored := base + `
resource "prime_sandbox" "restored" {
  name          = "restored"
  checkpoint_id = prime_sandbox_checkpoint.setup.id
  egress {
    allow = ["example.com"]
  }
  timeouts {
    egress = "1s"
  }
}` + acctest.CommandHCL("agent", "prime_sandbox.restored.id", "echo agent")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoCheckpoints,
		Steps: []resource.TestStep{
			{Config: m.Config(base)},
			{
				PreConfig:   func() { m.Configure(func(o *primemock.Options) { o.NeverApply = true }) },
				Config:      m.Config(restored),
				ExpectError: acctest.ExpectErr("Failing closed: the policy is not recorded as applied"),
			},
			{
				Config: m.Config(restored), PlanOnly: true, ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox.restored", plancheck.ResourceActionReplace),
				}},
			},
			{
				// Destroy (by the harness) needs the data plane back for nothing;
				// restore it so the checkpoint's own checks are ordinary.
				PreConfig: func() { m.Configure(func(o *primemock.Options) { o.NeverApply = false }) },
				Config:    m.Config(base),
			},
		},
	})
	for _, e := range m.Events() {
		if e.Type == primemock.EventCommandExecuted && e.Command == "echo agent" {
			t.Fatal("the agent ran on an unenforced lock")
		}
	}
}

// Bad restore and volume arguments fail at plan, before any API call,
// naming the attributes; the fleet's template takes the same rules.
func TestAccRestore_planTimeErrors(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	for _, tc := range []struct{ name, args, want string }{
		{"both", `docker_image = "img"
  checkpoint_id = "ck-1"`, "docker_image and checkpoint_id are both set: set exactly one"},
		{"neither", ``, "neither docker_image nor checkpoint_id is set: set exactly one"},
		{"disk with restore", `checkpoint_id = "ck-1"
  disk_size_gb = 10`, "disk_size_gb: must be omitted when checkpoint_id is set: a restored sandbox takes the checkpoint's disk size"},
		{"memory without checkpoint", `docker_image = "img"
  restore_memory = true`, "restore_memory needs checkpoint_id"},
		{"relative mount", `docker_image = "img"
  volumes = [{ name = "data", mount_path = "data" }]`, `volumes: volume data:data: the mount path "data" must be absolute`},
		{"volume twice", `docker_image = "img"
  volumes = [{ name = "data", mount_path = "/a" }, { name = "data", mount_path = "/b" }]`, `volumes: volume "data" is attached twice`},
	} {
		for _, kind := range []string{"single", "fleet"} {
			t.Run(tc.name+"/"+kind, func(t *testing.T) {
				hcl := fmt.Sprintf(`
resource "prime_sandbox" "box" {
  name = "box"
  %s
}
`, tc.args)
				if kind == "fleet" {
					hcl = fmt.Sprintf(`
resource "prime_sandbox_fleet" "boxes" {
  name_prefix = "eval"
  size        = 2
  %s
}
`, tc.args)
				}
				resource.ParallelTest(t, resource.TestCase{
					ProtoV6ProviderFactories: acctest.ProviderFactories(t),
					Steps:                    []resource.TestStep{{Config: m.Config(hcl), PlanOnly: true, ExpectError: acctest.ExpectErr(tc.want)}},
				})
			})
		}
	}
	m.NoAPICalls(t)
}

// The protocol, setup once (issue 28's done-when): a template runs the
// trusted setup with the network open, is checkpointed, and 20 members are
// restored from the checkpoint under an egress lock. The setup runs
// exactly once, every member has its artefact, every member is locked
// before its agent runs, the results come back, the second plan is empty,
// and destroy leaves no sandbox and no checkpoint.
func TestAccRestore_fleetSetupOnce(t *testing.T) {
	const members = 20
	m := mocktest.New(t, mocktest.Fast())
	cfg := m.Config(setupOnceHCL(fmt.Sprintf(`
resource "prime_sandbox_fleet" "agents" {
  name_prefix   = "eval"
  size          = %d
  checkpoint_id = prime_sandbox_checkpoint.setup.id
  egress {
    allow = ["example.com"]
  }
}
resource "prime_fleet_command" "agent" {
  sandbox_ids = prime_sandbox_fleet.agents.sandbox_ids
  commands    = ["cat /opt/task/marker"]
}
`, members)))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoCheckpoints,
		Steps: []resource.TestStep{
			{
				Config: cfg,
				Check: func(s *terraform.State) error {
					setups := 0
					for _, e := range m.Events() {
						if e.Type == primemock.EventCommandExecuted && strings.Contains(e.Command, "echo setup-done") {
							setups++
						}
					}
					if setups != 1 {
						return fmt.Errorf("the setup ran %d times, want once", setups)
					}
					fleet := s.RootModule().Resources["prime_sandbox_fleet.agents"].Primary.Attributes
					agent := s.RootModule().Resources["prime_fleet_command.agent"].Primary.Attributes
					var ids []string
					for k := range members {
						key := strconv.Itoa(k)
						ids = append(ids, fleet["sandbox_ids."+key])
						if got := agent["results."+key+".steps.0.stdout"]; strings.TrimSpace(got) != "setup-done" {
							return fmt.Errorf("member %s's agent read %q, want the setup's artefact", key, got)
						}
						if fleet["sandboxes."+key+".egress_applied"] != "true" {
							return fmt.Errorf("member %s is not recorded locked", key)
						}
					}
					restores := 0
					for _, e := range m.Events() {
						if e.Type == primemock.EventSandboxRestored {
							restores++
						}
					}
					if restores != members {
						return fmt.Errorf("%d restores, want %d", restores, members)
					}
					return checkLockedBeforeCommands(m.Events(), ids)
				},
			},
			{Config: cfg, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
		},
	})
}

// restore_memory from a checkpoint without memory (an API checkpoint
// holds files only) is the platform's 409, explained.
func TestAccRestore_memoryRefusedExplained(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoCheckpoints,
		Steps: []resource.TestStep{{
			Config: m.Config(setupOnceHCL(`
resource "prime_sandbox" "restored" {
  name           = "restored"
  checkpoint_id  = prime_sandbox_checkpoint.setup.id
  restore_memory = true
}
`)),
			ExpectError: acctest.ExpectInOrder("Cannot create sandbox", "has no memory to restore",
				"restore_memory = true needs a checkpoint that holds memory, which only a pause takes"),
		}},
	})
}
