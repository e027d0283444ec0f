package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

func TestAccEgressPolicyDataSource(t *testing.T) {
	m := newTestMock(t, fastMockOptions())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories(t),
		CheckDestroy:             m.checkNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				// A fresh VM: open, nothing written or applied yet (the SDK's
				// fixture for an untouched VM).
				Config: m.config(vmSandbox + `
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
				Config: m.config(vmSandbox + policyHCL(`allow = ["Example.COM"]`) + `
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
