package egress_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// listsDigestHCL puts the same lists (an HCL list) on every kind of
// resource that writes them: a sandbox's egress block, a policy on another
// sandbox, and a fleet policy.
func listsDigestHCL(m *mocktest.Mock, allow string) string {
	return m.Config(acctest.SandboxHCL("born", "digest-born", fmt.Sprintf("egress {\n    allow = %s\n  }", allow)) +
		acctest.SandboxHCL("open", "digest-open") +
		acctest.Block("prime_egress_policy", "lock", "sandbox_id = prime_sandbox.open.id", "allow      = "+allow) +
		acctest.SandboxFleetHCL("eval", "digest", 1) + fmt.Sprintf(`
resource "prime_fleet_egress_policy" "lock" {
  sandbox_ids = prime_sandbox_fleet.eval.sandbox_ids
  allow       = %s
}
`, allow))
}

// lists_sha256 names the destinations every policy lets through, the same
// on the egress block, prime_egress_policy and prime_fleet_egress_policy:
// known in the plan, unchanged by a respelling (which writes nothing), new
// when the destinations change — so a command's triggers can name it — and
// the digest prime.EgressPolicy.Digest gives, which each run records of the
// policy its sandbox enforces.
func TestAccEgress_listsDigestFollowsTheDestinations(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	digests := []struct{ resource, path string }{
		{"prime_sandbox.born", "egress.lists_sha256"}, {"prime_egress_policy.lock", "lists_sha256"},
		{"prime_fleet_egress_policy.lock", "lists_sha256"},
	}
	pathOf := func(p string) tfjsonpath.Path {
		if p == "egress.lists_sha256" {
			return tfjsonpath.New("egress").AtMapKey("lists_sha256")
		}
		return tfjsonpath.New(p)
	}
	planned := func(hosts ...string) []plancheck.PlanCheck {
		var out []plancheck.PlanCheck
		for _, d := range digests {
			out = append(out, plancheck.ExpectKnownValue(d.resource, pathOf(d.path),
				knownvalue.StringExact(prime.EgressPolicy{Allowlist: hosts}.Digest())))
		}
		return out
	}
	stored := func(hosts ...string) []statecheck.StateCheck {
		var out []statecheck.StateCheck
		for _, d := range digests {
			out = append(out, statecheck.ExpectKnownValue(d.resource, pathOf(d.path),
				knownvalue.StringExact(prime.EgressPolicy{Allowlist: hosts}.Digest())))
		}
		return out
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config:            listsDigestHCL(m, `["example.com", "10.0.0.5"]`),
				ConfigPlanChecks:  resource.ConfigPlanChecks{PreApply: planned("example.com", "10.0.0.5")},
				ConfigStateChecks: stored("10.0.0.5/32", "example.com"),
			},
			{
				// The same destinations, spelled otherwise: nothing to do.
				Config: listsDigestHCL(m, `["Example.COM.", "10.0.0.5/32"]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue("prime_egress_policy.lock", tfjsonpath.New("lists_sha256"),
						knownvalue.StringExact(prime.EgressPolicy{Allowlist: []string{"example.com", "10.0.0.5"}}.Digest())),
				}},
			},
			{
				Config:            listsDigestHCL(m, `["example.com", "pypi.org"]`),
				ConfigPlanChecks:  resource.ConfigPlanChecks{PreApply: planned("example.com", "pypi.org")},
				ConfigStateChecks: stored("pypi.org", "example.com"),
			},
		},
	})
}
