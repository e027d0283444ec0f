package egress_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// The 2026 egress contract, through the provider.

// A policy on a PAUSED sandbox is written (the platform accepts it and
// applies it on resume, so the sandbox resumes restricted) but never
// reported enforced: the create fails closed at once, saying so, and
// records nothing.
func TestAccEgressPolicy_pausedSandboxFailsClosed(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	sb := m.RunningVM(t, "paused")
	if err := m.Pause(sb); err != nil {
		t.Fatal(err)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		Steps: []resource.TestStep{{
			Config: m.Config(fmt.Sprintf(`
resource "prime_egress_policy" "lock" {
  sandbox_id = %q
  allow      = ["example.com"]
}
`, sb)),
			ExpectError: acctest.ExpectInOrder(`Egress policy not enforced`, `is PAUSED`, `applies the policy when the sandbox`,
				`resumes`, `Failing closed`),
		}},
	})
	puts := 0
	for _, e := range m.Events() {
		switch {
		case e.Type == primemock.EventPolicyPut && e.SandboxID == sb:
			puts++
		case e.Type == primemock.EventPolicyApplied && e.SandboxID == sb:
			t.Errorf("a policy was applied on the paused sandbox: generation %d", e.Generation)
		}
	}
	if puts == 0 {
		t.Error("the policy was not written: the sandbox would resume unrestricted")
	}
	// The resume applies what was written.
	if err := m.Resume(sb); err != nil {
		t.Fatal(err)
	}
	if _, err := m.WaitForEvent(mocktest.WaitCtx(t), func(e primemock.Event) bool {
		return e.Type == primemock.EventPolicyApplied && e.SandboxID == sb
	}); err != nil {
		t.Fatal(err)
	}
	if m.Reaches(t, sb, "google.com") || !m.Reaches(t, sb, "example.com") {
		t.Error("after the resume the written policy is not the one enforced")
	}
}

// A 202 without a body (the contract publishes no schema for it) still
// locks: the generation comes from one GET, the policy is enforced and its
// id names that generation.
func TestAccEgressPolicy_acceptedWithoutABody(t *testing.T) {
	o := mocktest.Fast()
	o.EgressPutAnswer = primemock.EgressPutEmpty
	m := mocktest.New(t, o)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config: m.Config(vmSandbox + policyHCL(`allow = ["example.com"]`)),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("prime_egress_policy.agent", "applied", "true"),
				resource.TestCheckResourceAttr("prime_egress_policy.agent", "generation", "1"),
				acctest.Reachability(t, m, map[string]bool{"example.com": true, "google.com": false, acctest.RouteHost: true}),
				func(s *terraform.State) error {
					id, err := acctest.StateID(s, "prime_sandbox.vm")
					if err != nil {
						return err
					}
					return resource.TestCheckResourceAttr("prime_egress_policy.agent", "id", id+"/1")(s)
				},
			),
		}},
	})
}
