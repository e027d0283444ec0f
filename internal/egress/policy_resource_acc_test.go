package egress_test

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
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// vmSandbox is the sandbox every policy test restricts.
var vmSandbox = acctest.SandboxHCL("vm", "agent-box")

// policyHCL renders a policy on prime_sandbox.vm with the interception
// route; listLine is e.g. `allow = ["example.com"]`.
func policyHCL(listLine string, extra ...string) string {
	return fmt.Sprintf(`
resource "prime_egress_policy" "agent" {
  sandbox_id = prime_sandbox.vm.id
  %s
  routes     = ["https://%s/v1/chat/completions"]
  %s
}
`, listLine, acctest.RouteHost, strings.Join(extra, "\n  "))
}

// The upstream verification table: an agent probing example.com and
// google.com (here the mock's reachability probe) under four runtime
// configurations, with the interception route always reachable when
// allowlisting.
func TestAccEgressPolicy_verificationTable(t *testing.T) {
	scenarios := []struct {
		name   string
		policy string
		want   map[string]bool
	}{
		{"open", "", map[string]bool{"example.com": true, "google.com": true, acctest.RouteHost: true}},
		{"partial allow", policyHCL(`allow = ["example.com"]`), map[string]bool{"example.com": true, "google.com": false, acctest.RouteHost: true}},
		{"blocked", policyHCL(`allow = []`), map[string]bool{"example.com": false, "google.com": false, acctest.RouteHost: true}},
		{"deny one", policyHCL(`block = ["example.com"]`), map[string]bool{"example.com": false, "google.com": true, acctest.RouteHost: true}},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			m := mocktest.New(t, mocktest.Fast())
			checks := []resource.TestCheckFunc{acctest.Reachability(t, m, sc.want)}
			if sc.policy != "" {
				checks = append(checks,
					resource.TestCheckResourceAttr("prime_egress_policy.agent", "applied", "true"),
					resource.TestCheckResourceAttr("prime_egress_policy.agent", "generation", "1"),
					resource.TestCheckResourceAttr("prime_egress_policy.agent", "applied_generation", "1"),
				)
			}
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: acctest.ProviderFactories(t),
				CheckDestroy:             m.CheckNoLiveSandboxes,
				Steps: []resource.TestStep{{
					Config: m.Config(vmSandbox + sc.policy),
					Check:  resource.ComposeAggregateTestCheckFunc(checks...),
				}},
			})
		})
	}
}

// The same scenarios with a data plane that never applies (the upstream
// platform gap): every policy fails closed with a clear message, nothing is
// recorded as applied, and the agent that depends on the policy is never
// created.
func TestAccEgressPolicy_failsClosedWhenNeverApplied(t *testing.T) {
	for _, listLine := range []string{`allow = ["example.com"]`, `allow = []`, `block = ["example.com"]`} {
		t.Run(listLine, func(t *testing.T) {
			o := mocktest.Fast()
			o.NeverApply = true
			m := mocktest.New(t, o)
			cfg := m.Config(vmSandbox + policyHCL(listLine, `timeouts { create = "1s" }`) + acctest.SandboxHCL("agent", "agent-depends-on-policy", "depends_on = [prime_egress_policy.agent]"))
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: acctest.ProviderFactories(t),
				CheckDestroy:             m.CheckNoLiveSandboxes,
				Steps: []resource.TestStep{
					{
						Config: cfg,
						ExpectError: acctest.ExpectErr("was accepted (generation 1) but is not enforced after 1s (the platform reports " +
							"applied_generation -1, applied false). Failing closed: the policy is not recorded as applied, " +
							"and nothing that depends on it was started."),
					},
					{
						// Not recorded at all: the next plan creates the policy
						// (write and wait again), the sandbox stays.
						Config:             cfg,
						PlanOnly:           true,
						ExpectNonEmptyPlan: true,
						ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
							plancheck.ExpectResourceAction("prime_egress_policy.agent", plancheck.ResourceActionCreate),
							plancheck.ExpectResourceAction("prime_sandbox.agent", plancheck.ResourceActionCreate),
							plancheck.ExpectResourceAction("prime_sandbox.vm", plancheck.ResourceActionNoop),
						}},
					},
				},
			})
			if got := m.Stats().SandboxesCreated; got != 1 {
				t.Fatalf("sandboxes created = %d: the agent that depends on the policy must never be created", got)
			}
			for _, e := range m.Events() {
				if e.Type == primemock.EventPolicyPut && e.Policy != nil && e.Policy.IsOpen() {
					t.Fatalf("egress was reopened (event %d)", e.Seq)
				}
			}
		})
	}
}

// A policy that fails to apply and is then applied again never reopens
// egress in between, and its destroy reopens it.
func TestAccEgressPolicy_retryAfterFailClosedDoesNotReopen(t *testing.T) {
	o := mocktest.Fast()
	o.NeverApply = true
	m := mocktest.New(t, o)
	cfg := m.Config(vmSandbox + policyHCL(`allow = ["example.com"]`, `timeouts { create = "1s" }`))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{Config: cfg, ExpectError: acctest.ExpectErr("but is not enforced after 1s")},
			{
				PreConfig: func() { m.SetNeverApply(false) },
				Config:    cfg,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("prime_egress_policy.agent", "applied", "true"),
					resource.TestCheckResourceAttr("prime_egress_policy.agent", "generation", "2"),
					acctest.Reachability(t, m, map[string]bool{"example.com": true, "google.com": false}),
					func(*terraform.State) error {
						var puts []string
						for _, e := range m.Events() {
							if e.Type == primemock.EventPolicyPut {
								puts = append(puts, fmt.Sprintf("%+v", *e.Policy))
								if e.Policy.IsOpen() {
									return fmt.Errorf("egress was reopened between the attempts: %v", puts)
								}
							}
						}
						if len(puts) != 2 {
							return fmt.Errorf("policy writes = %v, want 2", puts)
						}
						return nil
					},
				),
			},
			{
				// The failed create's write stayed on the sandbox unrecorded;
				// the retry still knew what the sandbox held before it, so
				// the destroy reopens egress (the reuse guard) instead of
				// "restoring" the lock.
				Config: m.Config(vmSandbox),
				Check:  acctest.Reachability(t, m, map[string]bool{"example.com": true, "google.com": true}),
			},
		},
	})
}

// Update in place, then a failed update keeps the previous values and the
// next apply writes again.
func TestAccEgressPolicy_updateInPlace(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: m.Config(vmSandbox + policyHCL(`allow = ["example.com"]`)),
				Check:  acctest.Reachability(t, m, map[string]bool{"example.com": true, "google.com": false}),
			},
			{
				Config: m.Config(vmSandbox + policyHCL(`allow = ["google.com"]`)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_egress_policy.agent", plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue("prime_egress_policy.agent", tfjsonpath.New("effective_allow"),
						knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact(acctest.RouteHost), knownvalue.StringExact("google.com")})),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("prime_egress_policy.agent", "generation", "2"),
					acctest.Reachability(t, m, map[string]bool{"example.com": false, "google.com": true}),
				),
			},
			{
				// Block mode, in place.
				Config: m.Config(vmSandbox + policyHCL(`block = ["google.com"]`)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_egress_policy.agent", plancheck.ResourceActionUpdate),
				}},
				Check: acctest.Reachability(t, m, map[string]bool{"example.com": true, "google.com": false}),
			},
			{
				PreConfig:   func() { m.SetNeverApply(true) },
				Config:      m.Config(vmSandbox + policyHCL(`block = ["example.com"]`, `timeouts { update = "1s" }`)),
				ExpectError: acctest.ExpectErr("Failing closed: the policy is not recorded as applied"),
			},
			{
				// Nothing was recorded as applied: with the data plane still
				// stuck, a refresh finds the unapplied write and the plan
				// writes again (applied false -> true).
				Config:             m.Config(vmSandbox + policyHCL(`block = ["example.com"]`)),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_egress_policy.agent", plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue("prime_egress_policy.agent", tfjsonpath.New("applied"), knownvalue.Bool(true)),
				}},
			},
			{
				// Once the data plane works again, the apply converges.
				PreConfig: func() { m.SetNeverApply(false) },
				Config:    m.Config(vmSandbox + policyHCL(`block = ["example.com"]`)),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("prime_egress_policy.agent", "applied", "true"),
					acctest.Reachability(t, m, map[string]bool{"example.com": false, "google.com": true}),
				),
			},
		},
	})
}

// An out-of-band change (say, from the CLI) shows as drift and the next
// apply restores the configured policy.
func TestAccEgressPolicy_drift(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cfg := m.Config(vmSandbox + policyHCL(`allow = ["example.com"]`))
	var sandboxID string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: cfg,
				Check: func(s *terraform.State) (err error) {
					sandboxID, err = acctest.StateID(s, "prime_sandbox.vm")
					return err
				},
			},
			{
				PreConfig: func() {
					c := m.Client(t)
					st, err := c.PutEgressPolicy(mocktest.WaitCtx(t), sandboxID, prime.EgressPolicy{Allowlist: []string{"evil.example.org"}})
					if err != nil {
						t.Fatal(err)
					}
					if _, err := c.WaitForEgressApplied(mocktest.WaitCtx(t), sandboxID, st.Generation, st); err != nil {
						t.Fatal(err)
					}
				},
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_egress_policy.agent", plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("prime_egress_policy.agent", "generation", "3"),
					acctest.Reachability(t, m, map[string]bool{"example.com": true, "evil.example.org": false}),
				),
			},
		},
	})
}

// Import by sandbox ID reads the platform's policy back; the platform's
// canonical spelling is equal to the configured one, so nothing differs.
func TestAccEgressPolicy_import(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{Config: m.Config(vmSandbox + `
resource "prime_egress_policy" "agent" {
  sandbox_id = prime_sandbox.vm.id
  block      = ["ads.example.com", "10.0.0.0/8"]
}
`)},
			{
				ResourceName:            "prime_egress_policy.agent",
				ImportState:             true,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
			{
				ResourceName:    "prime_egress_policy.agent",
				ImportState:     true,
				ImportStateKind: resource.ImportBlockWithID,
				ImportStateIdFunc: func(s *terraform.State) (string, error) {
					return acctest.StateID(s, "prime_sandbox.vm")
				},
			},
		},
	})
}

// Canonically equal spellings never show as a diff: Example.COM,
// 1.2.3.4 (the platform stores 1.2.3.4/32), bücher.de (xn--bcher-kva.de) and
// a trailing dot.
func TestAccEgressPolicy_canonicalFormsGiveEmptyPlan(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cfg := m.Config(vmSandbox + policyHCL(`allow = ["Example.COM", "1.2.3.4", "bücher.de", "api.openai.com.", "10.1.2.3/8"]`))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: cfg,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("prime_egress_policy.agent", tfjsonpath.New("effective_allow"), knownvalue.ListExact([]knownvalue.Check{
						knownvalue.StringExact(acctest.RouteHost), knownvalue.StringExact("1.2.3.4/32"), knownvalue.StringExact("10.0.0.0/8"),
						knownvalue.StringExact("api.openai.com"), knownvalue.StringExact("example.com"), knownvalue.StringExact("xn--bcher-kva.de"),
					})),
				},
				Check: acctest.Reachability(t, m, map[string]bool{"example.com": true, "bücher.de": true, "1.2.3.4": true, "10.200.0.1": true, "google.com": false}),
			},
			{
				// Refresh reads the platform's canonical lists; the plan stays empty.
				RefreshState: true,
			},
			{
				Config:   cfg,
				PlanOnly: true,
			},
			{
				// Respelling an entry is an in-place update that writes nothing.
				Config: m.Config(vmSandbox + policyHCL(`allow = ["example.com", "1.2.3.4/32", "xn--bcher-kva.de", "API.openai.com", "10.0.0.0/8"]`)),
				Check: func(*terraform.State) error {
					puts := 0
					for _, e := range m.Events() {
						if e.Type == primemock.EventPolicyPut {
							puts++
						}
					}
					if puts != 1 {
						return fmt.Errorf("%d policy writes; respelling the same destinations must not write again", puts)
					}
					return nil
				},
			},
		},
	})
}

// Every plan-time error of the policy, before any API call.
func TestAccEgressPolicy_planTimeValidation(t *testing.T) {
	many := make([]string, 256)
	for i := range many {
		many[i] = fmt.Sprintf("%q", fmt.Sprintf("h%d.example.com", i))
	}
	cases := []struct{ name, body, want string }{
		{"neither list", `routes = []`, "allow: exactly one of allow and block must be set"},
		{"both lists", "allow = []\n block = []", "allow and block are mutually exclusive"},
		{"bad allow entry", `allow = ["ok.com", "a b.com"]`, `allow: "a b.com": inner whitespace is not allowed`},
		{"url in allow", `allow = ["https://example.com/x"]`, `allow: "https://example.com/x": URLs are not supported`},
		{"port in allow", `allow = ["example.com:443"]`, `allow: "example.com:443": ports are not supported`},
		{"IPv6 in block", `block = ["::1"]`, `block: "::1": IPv6 is not supported`},
		{"bad IPv4", `block = ["256.1.1.1"]`, `block: "256.1.1.1": not a valid IPv4 address`},
		{"wildcard not leftmost", `allow = ["a.*.com"]`, `allow: "a.*.com": wildcard is only supported as the leftmost label`},
		{"lone star allow", `allow = ["*"]`, `allow: "*" is not an entry. To deny all egress except the routes, use allow = []; to leave egress open, use block = [] or no prime_egress_policy at all`},
		{"lone star block", `block = ["*"]`, `block: "*" is not an entry`},
		{"too many with routes", "allow = [" + strings.Join(many, ", ") + "]\n routes = [\"https://intercept.example.net\"]", "allow: the policy would send 257 entries (route hosts included); the platform accepts at most 256"},
		{"route not a URL", "allow = []\n routes = [\"intercept.example.net\"]", `routes: "intercept.example.net" must be an http:// or https:// URL`},
		{"route IPv6", "allow = []\n routes = [\"http://[fd00::1]:8080/mcp\"]", `routes: "http://[fd00::1]:8080/mcp" has an IPv6 host; the platform's egress policies are IPv4-only`},
		{"block cuts a route", "block = [\"*.example.net\"]\n routes = [\"https://intercept.example.net/v1\"]", `block: "*.example.net" blocks the framework route host intercept.example.net (from routes)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := mocktest.New(t, mocktest.Fast())
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: acctest.ProviderFactories(t),
				Steps: []resource.TestStep{{
					Config: m.Config(fmt.Sprintf(`
resource "prime_egress_policy" "p" {
  sandbox_id = "sbx-anything"
  %s
}
`, tc.body)),
					PlanOnly:    true,
					ExpectError: acctest.ExpectErr(tc.want),
				}},
			})
			m.NoAPICalls(t)
		})
	}
}

// Warnings do not fail the plan: the wildcard apex rule and duplicates.
func TestAccEgressPolicy_warningsDoNotFail(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config: m.Config(vmSandbox + acctest.EgressPolicyHCL("agent", "prime_sandbox.vm.id", []string{"*.github.com", "pypi.org", "PyPI.org."})),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("prime_egress_policy.agent", "effective_allow.#", "2"),
				acctest.Reachability(t, m, map[string]bool{"api.github.com": true, "github.com": false, "pypi.org": true}),
			),
		}},
	})
}
