package sandbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
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

// prime_sandbox's identity is its ID, set on create; importing by identity
// and by ID both adopt the sandbox with no change to plan.
func TestAccSandbox_identityImport(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	noop := resource.ImportPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("prime_sandbox.test", plancheck.ResourceActionNoop)}}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		TerraformVersionChecks:   acctest.SkipBelow(acctest.Identity),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: m.Config(minimalSandbox),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectIdentityValueMatchesState("prime_sandbox.test", tfjsonpath.New("id")),
				},
			},
			{ResourceName: "prime_sandbox.test", ImportState: true, ImportStateKind: resource.ImportBlockWithResourceIdentity, ImportPlanChecks: noop},
			{ResourceName: "prime_sandbox.test", ImportState: true, ImportStateKind: resource.ImportBlockWithID, ImportPlanChecks: noop},
		},
	})
}

// A fleet's identity is its id, its label (its only label here) and its
// members' IDs, which follow the members: growing the fleet changes them.
// Importing by that identity (by the label) adopts every member with no
// change, and keeps the fleet's id.
func TestAccSandboxFleet_identityImport(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	two, three := m.Config(fleetConfig("size = 2", "")), m.Config(fleetConfig("size = 3", ""))
	var fleetID string
	idsAre := func(n int) statecheck.StateCheck {
		return statecheck.ExpectIdentity("prime_sandbox_fleet.f", map[string]knownvalue.Check{
			"id":          knownvalue.NotNull(),
			"label":       knownvalue.StringExact("fleet-test"),
			"sandbox_ids": knownvalue.ListSizeExact(n),
		})
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		TerraformVersionChecks:   acctest.SkipBelow(acctest.Identity),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{Config: two, ConfigStateChecks: []statecheck.StateCheck{idsAre(2)}, Check: func(s *terraform.State) error {
				var err error
				fleetID, err = acctest.StateID(s, "prime_sandbox_fleet.f")
				return err
			}},
			{Config: three, ConfigStateChecks: []statecheck.StateCheck{idsAre(3)}},
			{
				Config: three, ResourceName: "prime_sandbox_fleet.f", ImportState: true,
				ImportStateKind: resource.ImportBlockWithResourceIdentity,
				ImportPlanChecks: resource.ImportPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox_fleet.f", plancheck.ResourceActionNoop),
					plancheck.ExpectKnownValue("prime_sandbox_fleet.f", tfjsonpath.New("sandbox_ids"), knownvalue.MapSizeExact(3)),
					plancheck.ExpectKnownValue("prime_sandbox_fleet.f", tfjsonpath.New("id"), knownvalue.StringFunc(func(v string) error {
						if v != fleetID {
							return fmt.Errorf("imported fleet id %s, want the identity's %s", v, fleetID)
						}
						return nil
					})),
				}},
			},
		},
	})
}

// A fleet imported by its members' IDs (no label given) holds them as its
// identity, with the label it carries alone, and plans no change.
func TestAccSandboxFleet_identityImportByIDs(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cfg := m.Config(fleetConfig("size = 2", ""))
	var ids lateStrings // known once the first step has run
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		TerraformVersionChecks:   acctest.SkipBelow(acctest.Identity),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{Config: cfg, Check: func(s *terraform.State) error {
				got := fleetIDs(s)
				ids = lateStrings{got["0"], got["1"]}
				return nil
			}},
			{Config: m.Config("\nremoved {\n  from = prime_sandbox_fleet.f\n  lifecycle {\n    destroy = false\n  }\n}\n")},
			{
				Config:          cfg + "\nvariable \"ids\" {\n  type = list(string)\n}\nimport {\n  to       = prime_sandbox_fleet.f\n  identity = { sandbox_ids = var.ids }\n}\n",
				ConfigVariables: config.Variables{"ids": &ids},
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox_fleet.f", plancheck.ResourceActionNoop),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectIdentity("prime_sandbox_fleet.f", map[string]knownvalue.Check{
						"id":          knownvalue.NotNull(),
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

// An identity stored by version 0 of the fleet's identity (label and
// sandbox_ids, no id) is read into version 1 over the protocol, as
// Terraform asks before its first Read: label and IDs kept, id null until
// that Read records it. An empty one (a fleet that had no members left)
// upgrades too.
func TestSandboxFleet_upgradeIdentityFromV0(t *testing.T) {
	ctx := context.Background()
	server, err := acctest.ProviderFactories(t)["prime"]()
	if err != nil {
		t.Fatal(err)
	}
	schemas, err := server.GetResourceIdentitySchemas(ctx, &tfprotov6.GetResourceIdentitySchemasRequest{})
	if err != nil || len(schemas.Diagnostics) > 0 {
		t.Fatalf("identity schemas: %v %v", err, schemas.Diagnostics)
	}
	schema := schemas.IdentitySchemas["prime_sandbox_fleet"]
	if schema.Version != 1 {
		t.Fatalf("fleet identity schema version %d, want 1", schema.Version)
	}
	typ := schema.ValueType()
	for _, c := range []struct{ name, v0, wantLabel string }{
		{"labelled", `{"label":"run-1","sandbox_ids":["sb-b","sb-a"]}`, "run-1"},
		{"by IDs", `{"label":null,"sandbox_ids":["sb-a"]}`, ""},
		{"no members left", `{"label":null,"sandbox_ids":[]}`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, err := server.UpgradeResourceIdentity(ctx, &tfprotov6.UpgradeResourceIdentityRequest{
				TypeName: "prime_sandbox_fleet", Version: 0, RawIdentity: &tfprotov6.RawState{JSON: []byte(c.v0)},
			})
			if err != nil || len(resp.Diagnostics) > 0 {
				t.Fatalf("upgrade: %v %v", err, resp.Diagnostics)
			}
			v, err := resp.UpgradedIdentity.IdentityData.Unmarshal(typ)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]tftypes.Value
			if err := v.As(&got); err != nil {
				t.Fatal(err)
			}
			var prior struct {
				Label      *string  `json:"label"`
				SandboxIDs []string `json:"sandbox_ids"`
			}
			if err := json.Unmarshal([]byte(c.v0), &prior); err != nil {
				t.Fatal(err)
			}
			if !got["id"].IsNull() {
				t.Errorf("id %v, want null until the Read records it", got["id"])
			}
			var label *string
			if err := got["label"].As(&label); err != nil || (label == nil) != (c.wantLabel == "") || (label != nil && *label != c.wantLabel) {
				t.Errorf("label %v, want %q", got["label"], c.wantLabel)
			}
			var ids []tftypes.Value
			if err := got["sandbox_ids"].As(&ids); err != nil || len(ids) != len(prior.SandboxIDs) || got["sandbox_ids"].IsNull() {
				t.Errorf("sandbox_ids %v, want %v", got["sandbox_ids"], prior.SandboxIDs)
			}
		})
	}
}
