package provider

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// prime_sandbox's identity is its ID, set on create; importing by identity
// and by ID both adopt the sandbox with no change to plan.
func TestAccSandbox_identityImport(t *testing.T) {
	m := newTestMock(t, fastMockOptions())
	noop := resource.ImportPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("prime_sandbox.test", plancheck.ResourceActionNoop)}}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories(t),
		TerraformVersionChecks:   skipBelow(tfIdentity),
		CheckDestroy:             m.checkNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: m.config(minimalSandbox),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectIdentityValueMatchesState("prime_sandbox.test", tfjsonpath.New("id")),
				},
			},
			{ResourceName: "prime_sandbox.test", ImportState: true, ImportStateKind: resource.ImportBlockWithResourceIdentity, ImportPlanChecks: noop},
			{ResourceName: "prime_sandbox.test", ImportState: true, ImportStateKind: resource.ImportBlockWithID, ImportPlanChecks: noop},
		},
	})
}

// prime_egress_policy's identity is its sandbox.
func TestAccEgressPolicy_identityImport(t *testing.T) {
	m := newTestMock(t, fastMockOptions())
	cfg := m.config(`
resource "prime_sandbox" "box" {
  name         = "locked"
  docker_image = "python:3.12-slim"
}
resource "prime_egress_policy" "lock" {
  sandbox_id = prime_sandbox.box.id
  allow      = ["example.com"]
}
`)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories(t),
		TerraformVersionChecks:   skipBelow(tfIdentity),
		CheckDestroy:             m.checkNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: cfg,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectIdentityValueMatchesState("prime_egress_policy.lock", tfjsonpath.New("sandbox_id")),
				},
			},
			{
				Config: cfg, ResourceName: "prime_egress_policy.lock", ImportState: true,
				ImportStateKind: resource.ImportBlockWithResourceIdentity,
				ImportPlanChecks: resource.ImportPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_egress_policy.lock", plancheck.ResourceActionNoop),
				}},
			},
		},
	})
}

// A fleet's identity is its label (its only label here) and its members'
// IDs, which follow the members: growing the fleet changes them. Importing
// by that identity (by the label) adopts every member with no change.
func TestAccSandboxFleet_identityImport(t *testing.T) {
	m := newTestMock(t, fastMockOptions())
	two, three := m.config(fleetConfig("size = 2", "")), m.config(fleetConfig("size = 3", ""))
	idsAre := func(n int) statecheck.StateCheck {
		return statecheck.ExpectIdentity("prime_sandbox_fleet.f", map[string]knownvalue.Check{
			"label":       knownvalue.StringExact("fleet-test"),
			"sandbox_ids": knownvalue.ListSizeExact(n),
		})
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories(t),
		TerraformVersionChecks:   skipBelow(tfIdentity),
		CheckDestroy:             m.checkNoLiveSandboxes,
		Steps: []resource.TestStep{
			{Config: two, ConfigStateChecks: []statecheck.StateCheck{idsAre(2)}},
			{Config: three, ConfigStateChecks: []statecheck.StateCheck{idsAre(3)}},
			{
				Config: three, ResourceName: "prime_sandbox_fleet.f", ImportState: true,
				ImportStateKind: resource.ImportBlockWithResourceIdentity,
				ImportPlanChecks: resource.ImportPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox_fleet.f", plancheck.ResourceActionNoop),
					plancheck.ExpectKnownValue("prime_sandbox_fleet.f", tfjsonpath.New("sandbox_ids"), knownvalue.MapSizeExact(3)),
				}},
			},
		},
	})
}

// A fleet imported by its members' IDs (no label given) holds them as its
// identity, with the label it carries alone, and plans no change.
func TestAccSandboxFleet_identityImportByIDs(t *testing.T) {
	m := newTestMock(t, fastMockOptions())
	cfg := m.config(fleetConfig("size = 2", ""))
	var ids lateStrings // known once the first step has run
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories(t),
		TerraformVersionChecks:   skipBelow(tfIdentity),
		CheckDestroy:             m.checkNoLiveSandboxes,
		Steps: []resource.TestStep{
			{Config: cfg, Check: func(s *terraform.State) error {
				got := fleetIDs(s)
				ids = lateStrings{got["0"], got["1"]}
				return nil
			}},
			{Config: m.config("\nremoved {\n  from = prime_sandbox_fleet.f\n  lifecycle {\n    destroy = false\n  }\n}\n")},
			{
				Config:          cfg + "\nvariable \"ids\" {\n  type = list(string)\n}\nimport {\n  to       = prime_sandbox_fleet.f\n  identity = { sandbox_ids = var.ids }\n}\n",
				ConfigVariables: config.Variables{"ids": &ids},
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox_fleet.f", plancheck.ResourceActionNoop),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectIdentity("prime_sandbox_fleet.f", map[string]knownvalue.Check{
						"label":       knownvalue.StringExact("fleet-test"),
						"sandbox_ids": knownvalue.ListSizeExact(2),
					}),
				},
			},
		},
	})
}

// lateStrings is a list variable whose value a test step fills in for a
// later one (config.Variables are marshalled when a step runs).
type lateStrings []string

func (l *lateStrings) MarshalJSON() ([]byte, error) { return json.Marshal([]string(*l)) }

// The identity's label survives as long as the fleet carries it; a fleet
// with several labels and no import has none.
func TestFleetIdentityLabel(t *testing.T) {
	for _, c := range []struct {
		prior  string
		labels []string
		want   string
	}{
		{"", []string{"run-1"}, "run-1"},
		{"", []string{"eval", "run-1"}, ""},
		{"run-1", []string{"eval", "run-1"}, "run-1"},
		{"gone", []string{"eval", "run-1"}, ""},
		{"gone", []string{"run-2"}, "run-2"},
		{"", nil, ""},
	} {
		if got := fleetIdentityLabel(c.prior, c.labels); got != c.want {
			t.Errorf("fleetIdentityLabel(%q, %v) = %q, want %q", c.prior, c.labels, got, c.want)
		}
	}
}

// An identity imports by its label, else by its IDs; an empty one is
// refused.
func TestFleetImportID(t *testing.T) {
	ctx := context.Background()
	byLabel, _ := fleetIdentityValue(ctx, "run-1", []string{"b", "a"})
	if id, err := fleetImportID(byLabel); err != nil || id != "label:run-1" {
		t.Fatalf("by label: %q, %v", id, err)
	}
	byIDs, _ := fleetIdentityValue(ctx, "", []string{"b", "a"})
	if id, err := fleetImportID(byIDs); err != nil || id != "a,b" {
		t.Fatalf("by IDs (sorted): %q, %v", id, err)
	}
	empty := fleetIdentityModel{Label: types.StringNull(), SandboxIDs: types.ListNull(types.StringType)}
	if _, err := fleetImportID(empty); err == nil {
		t.Fatal("an identity without label and sandbox_ids was accepted")
	}
}

// The import flag lasts through the import's own Read and one refresh, and
// the earlier `true` counts as the import's Read.
func TestNextImportRefresh(t *testing.T) {
	for _, c := range []struct {
		in   string
		next int
		ok   bool
	}{{"0", 1, true}, {"1", 2, true}, {"2", 0, false}, {"true", 2, true}, {"7", 0, false}} {
		next, ok := nextImportRefresh([]byte(c.in))
		if next != c.next || ok != c.ok {
			t.Errorf("nextImportRefresh(%s) = %d, %t; want %d, %t", c.in, next, ok, c.next, c.ok)
		}
	}
}
