package egress_test

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
)

func TestAccEgressPolicyDataSource(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				// A fresh VM: open, nothing written or applied yet (the SDK's
				// fixture for an untouched VM).
				Config: m.Config(vmSandbox + `
data "prime_egress_policy" "x" {
  sandbox_id = prime_sandbox.vm.id
}
`),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("data.prime_egress_policy.x", "mode", "open"),
					resource.TestCheckResourceAttr("data.prime_egress_policy.x", "generation", "0"),
					resource.TestCheckResourceAttr("data.prime_egress_policy.x", "applied_generation", "-1"),
					resource.TestCheckResourceAttr("data.prime_egress_policy.x", "applied", "false"),
				),
			},
			{
				Config: m.Config(vmSandbox + policyHCL(`allow = ["Example.COM"]`) + `
data "prime_egress_policy" "x" {
  sandbox_id = prime_egress_policy.agent.sandbox_id
}
`),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("data.prime_egress_policy.x", "mode", "allow"),
					resource.TestCheckResourceAttr("data.prime_egress_policy.x", "allow.#", "2"),
					resource.TestCheckResourceAttr("data.prime_egress_policy.x", "allow.1", "example.com"),
					resource.TestCheckNoResourceAttr("data.prime_egress_policy.x", "block"),
					resource.TestCheckResourceAttr("data.prime_egress_policy.x", "generation", "1"),
					resource.TestCheckResourceAttr("data.prime_egress_policy.x", "applied", "true"),
				),
			},
		},
	})
}
