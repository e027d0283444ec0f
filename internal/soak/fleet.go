package soak

import (
	"fmt"
	"strings"
)

// Fleet describes a generated configuration: N sandboxes, each with an
// egress policy, optionally a setup command before the policy and an agent
// command after it (sandbox → setup → policy → agent).
//
// Every instance is its own resource block (s000, p000, …) rather than one
// counted resource: Terraform orders counted resources resource by resource
// (every p[i] would wait for all of s[*]), while separate blocks give each
// sandbox its own chain, the schedule the benchmark's physical limit
// assumes.
type Fleet struct {
	N       int
	BaseURL string
	// Image defaults to python:3.12-slim.
	Image string
	// Allow and Routes of every policy (default example.com and
	// https://intercept.example.net/v1).
	Allow  []string
	Routes []string
	// PolicyCreateTimeout sets timeouts { create = … } on every policy.
	PolicyCreateTimeout string
	Setup               bool
	Agent               bool
	// ProviderExtra is added to the provider block verbatim (say
	// "max_requests_per_second = 0").
	ProviderExtra string
	// Prefix names sandboxes (default "fleet").
	Prefix string
}

// Default policy contents.
var (
	DefaultAllow  = []string{"example.com"}
	DefaultRoutes = []string{"https://intercept.example.net/v1"}
	// AllowedHosts must be reachable under the policy, BlockedHost must not.
	AllowedHosts = []string{"example.com", "intercept.example.net"}
	BlockedHost  = "blocked.example.org"
)

// Addresses of instance i.
func SandboxAddr(i int) string { return fmt.Sprintf("prime_sandbox.s%03d", i) }
func PolicyAddr(i int) string  { return fmt.Sprintf("prime_egress_policy.p%03d", i) }
func SetupAddr(i int) string   { return fmt.Sprintf("prime_sandbox_command.setup%03d", i) }
func AgentAddr(i int) string   { return fmt.Sprintf("prime_sandbox_command.agent%03d", i) }

// AgentCommand is the agent command of instance i (recognisable in
// command_executed events).
func AgentCommand(i int) string { return fmt.Sprintf("echo agent-%03d", i) }

// SetupCommand is the setup command of instance i.
func SetupCommand(i int) string { return fmt.Sprintf("echo setup-%03d", i) }

func hclList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// HCL renders the configuration.
func (f Fleet) HCL() string {
	image := orStr(f.Image, "python:3.12-slim")
	prefix := orStr(f.Prefix, "fleet")
	allow, routes := f.Allow, f.Routes
	if allow == nil {
		allow = DefaultAllow
	}
	if routes == nil {
		routes = DefaultRoutes
	}
	var b strings.Builder
	fmt.Fprintf(&b, `terraform {
  required_providers {
    prime = { source = "primeintellect/prime" }
  }
}

provider "prime" {
  base_url = %q
  api_key  = %q
%s}
`, f.BaseURL, APIKey, indent(f.ProviderExtra))
	for i := 0; i < f.N; i++ {
		fmt.Fprintf(&b, `
resource "prime_sandbox" "s%03d" {
  name         = "%s-%03d"
  docker_image = %q
}
`, i, prefix, i, image)
		policyDeps := ""
		if f.Setup {
			fmt.Fprintf(&b, `
resource "prime_sandbox_command" "setup%03d" {
  sandbox_id = prime_sandbox.s%03d.id
  command    = %q
}
`, i, i, SetupCommand(i))
			policyDeps = fmt.Sprintf("  depends_on = [prime_sandbox_command.setup%03d]\n", i)
		}
		timeouts := ""
		if f.PolicyCreateTimeout != "" {
			timeouts = fmt.Sprintf("  timeouts {\n    create = %q\n  }\n", f.PolicyCreateTimeout)
		}
		fmt.Fprintf(&b, `
resource "prime_egress_policy" "p%03d" {
  sandbox_id = prime_sandbox.s%03d.id
  allow      = %s
  routes     = %s
%s%s}
`, i, i, hclList(allow), hclList(routes), timeouts, policyDeps)
		if f.Agent {
			fmt.Fprintf(&b, `
resource "prime_sandbox_command" "agent%03d" {
  sandbox_id = prime_egress_policy.p%03d.sandbox_id
  command    = %q
  depends_on = [prime_egress_policy.p%03d]
}
`, i, i, AgentCommand(i), i)
		}
	}
	return b.String()
}

func indent(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = "  " + strings.TrimSpace(l)
	}
	return strings.Join(lines, "\n") + "\n"
}

func orStr(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// SandboxFleet is the fleet path of the same job: one prime_sandbox_fleet of
// N members (one resource; the provider creates and waits for every member
// at once) and one prime_fleet_egress_policy on its sandbox_ids, with the
// same policy contents as Fleet's per-instance policies.
type SandboxFleet struct {
	N       int
	BaseURL string
	// Image defaults to python:3.12-slim.
	Image string
	// Allow and Routes of the policy (default DefaultAllow and
	// DefaultRoutes).
	Allow  []string
	Routes []string
	// ProviderExtra is added to the provider block verbatim.
	ProviderExtra string
	// Prefix is the fleet's name_prefix (default "fleet").
	Prefix string
}

// Addresses of the fleet path's two resources.
const (
	FleetAddr       = "prime_sandbox_fleet.fleet"
	FleetPolicyAddr = "prime_fleet_egress_policy.lock"
)

// HCL renders the configuration.
func (f SandboxFleet) HCL() string {
	allow, routes := f.Allow, f.Routes
	if allow == nil {
		allow = DefaultAllow
	}
	if routes == nil {
		routes = DefaultRoutes
	}
	return fmt.Sprintf(`terraform {
  required_providers {
    prime = { source = "primeintellect/prime" }
  }
}

provider "prime" {
  base_url = %q
  api_key  = %q
%s}

resource "prime_sandbox_fleet" "fleet" {
  name_prefix  = %q
  size         = %d
  docker_image = %q
}

resource "prime_fleet_egress_policy" "lock" {
  sandbox_ids = prime_sandbox_fleet.fleet.sandbox_ids
  allow       = %s
  routes      = %s
}
`, f.BaseURL, APIKey, indent(f.ProviderExtra), orStr(f.Prefix, "fleet"), f.N, orStr(f.Image, "python:3.12-slim"),
		hclList(allow), hclList(routes))
}
