package sandbox_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
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
)

// unlabelledFleet is a fleet without a label of its own: its identity has
// no label, so only its members' IDs (and its id) say which fleet it is.
func unlabelledFleet(keys string) string {
	return fmt.Sprintf(`
resource "prime_sandbox_fleet" "f" {
  name_prefix  = "lost"
  docker_image = "python:3.12-slim"
  %s
}
`, keys)
}

// identityChecks are state checks of the identity, run only where the CLI
// stores one (Terraform 1.12+): elsewhere the checks would find none.
func identityChecks(t *testing.T, checks ...statecheck.StateCheck) []statecheck.StateCheck {
	t.Helper()
	cli, err := acctest.AcceptanceCLI()
	if err != nil {
		return nil
	}
	info, err := acctest.IdentifyCLI(cli)
	if err != nil || !info.IsTerraform() || info.Version().Core().LessThan(acctest.Identity.Minimum()) {
		return nil
	}
	return checks
}

// fleetIdentityIsID checks that the fleet's identity carries its id.
func fleetIdentityIsID(t *testing.T, members int) []statecheck.StateCheck {
	return identityChecks(t,
		statecheck.ExpectIdentityValueMatchesState("prime_sandbox_fleet.f", tfjsonpath.New("id")),
		statecheck.ExpectIdentity("prime_sandbox_fleet.f", map[string]knownvalue.Check{
			"id":          knownvalue.NotNull(),
			"label":       knownvalue.Null(),
			"sandbox_ids": knownvalue.ListSizeExact(members),
		}))
}

// The dead end: every member of a fleet without a label of its own
// is gone (one deleted through the API, one past its timeout_minutes). The
// plan re-creates both in place, under the same fleet id; when they are
// gone again, destroy completes.
func TestAccSandboxFleet_allMembersGone(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cfg := m.Config(unlabelledFleet("size = 2"))
	var first map[string]string
	var fleetID string
	goneAll := func() {
		c := m.Client(t)
		if err := c.DeleteSandbox(mocktest.WaitCtx(t), first["0"]); err != nil {
			t.Fatal(err)
		}
		if !m.TimeOut(first["1"]) {
			t.Fatalf("sandbox %s did not time out", first["1"])
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config:            cfg,
				ConfigStateChecks: fleetIdentityIsID(t, 2),
				Check: func(s *terraform.State) error {
					first = fleetIDs(s)
					var err error
					fleetID, err = acctest.StateID(s, "prime_sandbox_fleet.f")
					return err
				},
			},
			{
				PreConfig: goneAll,
				Config:    cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox_fleet.f", plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: fleetIdentityIsID(t, 2),
				Check: func(s *terraform.State) error {
					ids := fleetIDs(s)
					if id, _ := acctest.StateID(s, "prime_sandbox_fleet.f"); id != fleetID {
						return fmt.Errorf("fleet id %s became %s: the members must be re-created in place", fleetID, id)
					}
					if len(ids) != 2 || ids["0"] == first["0"] || ids["1"] == first["1"] {
						return fmt.Errorf("members after re-creation: %v (were %v); want two new ones", ids, first)
					}
					if live := m.Stats().LiveSandboxes; live != 2 {
						return fmt.Errorf("%d live sandboxes, want 2", live)
					}
					first = ids
					return nil
				},
			},
			{
				// Gone again: the plan proposes re-creating them, and the
				// test's destroy (after this step) has nothing to delete.
				PreConfig:          goneAll,
				Config:             cfg,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
		},
	})
}

// A fleet of no members is a fleet: it is created, plans no change, grows
// and shrinks back, and is destroyed.
func TestAccSandboxFleet_sizeZero(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config:            m.Config(unlabelledFleet("size = 0")),
				ConfigStateChecks: fleetIdentityIsID(t, 0),
			},
			{
				Config: m.Config(unlabelledFleet("size = 2")),
				Check: func(s *terraform.State) error {
					if n := len(fleetIDs(s)); n != 2 {
						return fmt.Errorf("%d members, want 2", n)
					}
					return nil
				},
			},
			{
				Config:            m.Config(unlabelledFleet("size = 0")),
				ConfigStateChecks: fleetIdentityIsID(t, 0),
				Check: func(s *terraform.State) error {
					if live := m.Stats().LiveSandboxes; live != 0 {
						return fmt.Errorf("%d live sandboxes after shrinking to 0", live)
					}
					return nil
				},
			},
			{
				Config:            m.Config(unlabelledFleet(`members = []`)),
				ConfigStateChecks: fleetIdentityIsID(t, 0),
			},
		},
	})
}

// The first apply meets an unreachable API: no member is created and the
// apply fails. The next plan still works (no "Missing Resource Identity"),
// the next apply against a working API creates the members, and destroy
// completes.
func TestAccSandboxFleet_unreachableAtFirstApply(t *testing.T) {
	var down atomic.Bool
	down.Store(true)
	m := mocktest.NewHooked(t, mocktest.Fast(), func(w http.ResponseWriter, r *http.Request, _ []byte) bool {
		if !down.Load() || r.Method != http.MethodPost || r.URL.Path != prime.APIPrefix+"/sandbox" {
			return false
		}
		// A dropped connection, as an unreachable API gives.
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return true
			}
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		return true
	})
	cfg := strings.Replace(m.Config(unlabelledFleet("size = 2")), `api_key  = "test-key"`,
		"api_key  = \"test-key\"\n  max_retries = 0", 1)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config:      cfg,
				ExpectError: acctest.ExpectErr(`2 member(s) failed; 0 are healthy.`),
			},
			{
				// Still down: refresh and plan work, and propose the members.
				Config:             cfg,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				PreConfig:         func() { down.Store(false) },
				Config:            cfg,
				ConfigStateChecks: fleetIdentityIsID(t, 2),
				Check: func(s *terraform.State) error {
					if n := len(fleetIDs(s)); n != 2 {
						return fmt.Errorf("%d members after the API came back, want 2", n)
					}
					if live := m.Stats().LiveSandboxes; live != 2 {
						return fmt.Errorf("%d live sandboxes, want 2", live)
					}
					return nil
				},
			},
		},
	})
}

// A state written before the fleet's identity had an id (version 0: label
// and sandbox_ids) keeps working: with every member gone, Terraform
// upgrades the identity, the plan re-creates the members in place, and the
// apply records the identity with the fleet's id. Driven through the CLI,
// since only a state file can carry an identity of the previous version.
func TestAccSandboxFleet_identityV0State(t *testing.T) {
	cli := acctest.RequireCLIAtLeast(t, acctest.Identity)
	m, env, ctx := acctest.MockCLITest(t)
	w := acctest.NewWork(t, cli, env, map[string]string{"main.tf": refreshProviders + unlabelledFleet("size = 2")})
	w.DestroyAtEnd(ctx, m)
	w.Must(ctx, "apply", "-auto-approve", "-input=false")
	statePath := filepath.Join(w.Dir, "terraform.tfstate")
	fleetID, ids := rewriteFleetIdentityToV0(t, statePath)
	for _, id := range ids {
		if err := m.Client(t).DeleteSandbox(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if out, code := w.Exec(ctx, "plan", "-input=false", "-detailed-exitcode"); code != 2 || !strings.Contains(out, "update in-place") {
		t.Fatalf("plan with a version 0 identity and no members left exited %d, want 2 and an in-place update:\n%s", code, out)
	}
	w.Must(ctx, "apply", "-auto-approve", "-input=false")
	inst := fleetInstance(t, statePath)
	if inst.IdentitySchemaVersion != 1 || inst.Identity["id"] != fleetID || inst.Attributes["id"] != fleetID {
		t.Fatalf("after the apply: identity v%d %v, id %v; want v1 with id %s", inst.IdentitySchemaVersion, inst.Identity,
			inst.Attributes["id"], fleetID)
	}
	if got, _ := inst.Identity["sandbox_ids"].([]any); len(got) != 2 {
		t.Fatalf("identity sandbox_ids %v, want the two new members", inst.Identity["sandbox_ids"])
	}
}

// stateInstance is the part of a state file's resource instance the
// identity tests read.
type stateInstance struct {
	IdentitySchemaVersion int            `json:"identity_schema_version"`
	Identity              map[string]any `json:"identity"`
	Attributes            map[string]any `json:"attributes"`
}

// fleetInstance reads prime_sandbox_fleet.f's instance from a state file.
func fleetInstance(t *testing.T, path string) stateInstance {
	t.Helper()
	return stateInstanceOf(t, path, "prime_sandbox_fleet", "f")
}

// stateInstanceOf reads the instance of the resource typ.name (one
// instance) from a state file.
func stateInstanceOf(t *testing.T, path, typ, name string) stateInstance {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Resources []struct {
			Type, Name string
			Instances  []stateInstance
		}
	}
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	for _, r := range st.Resources {
		if r.Type == typ && r.Name == name && len(r.Instances) == 1 {
			return r.Instances[0]
		}
	}
	t.Fatalf("no %s.%s in %s", typ, name, data)
	return stateInstance{}
}

// rewriteFleetIdentityToV0 turns prime_sandbox_fleet.f's identity in a
// state file into what version 0 stored (no id), and returns the fleet's
// id and its members' sandbox IDs.
func rewriteFleetIdentityToV0(t *testing.T, path string) (string, []string) {
	t.Helper()
	inst := fleetInstance(t, path)
	fleetID, _ := inst.Attributes["id"].(string)
	if inst.IdentitySchemaVersion != 1 || inst.Identity["id"] != fleetID {
		t.Fatalf("identity v%d %v; want version 1 holding id %s", inst.IdentitySchemaVersion, inst.Identity, fleetID)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range st["resources"].([]any) {
		res := r.(map[string]any)
		if res["type"] != "prime_sandbox_fleet" {
			continue
		}
		for _, i := range res["instances"].([]any) {
			in := i.(map[string]any)
			in["identity_schema_version"] = 0
			identity := in["identity"].(map[string]any)
			delete(identity, "id")
			for _, id := range identity["sandbox_ids"].([]any) {
				ids = append(ids, id.(string))
			}
		}
	}
	st["serial"] = st["serial"].(float64) + 1
	out, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return fleetID, ids
}
