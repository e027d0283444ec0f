package sandbox_test

import (
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/querycheck"
	"github.com/hashicorp/terraform-plugin-testing/querycheck/queryfilter"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
)

// listedSandboxes are the sandboxes the list resource tests look for: three
// "lost-*" of a run, one more under its label with another name, one
// unrelated.
var listedSandboxes = `
resource "prime_sandbox" "lost" {
  count        = 3
  name         = "lost-${count.index}"
  docker_image = "python:3.12-slim"
  labels       = ["lost-run", "eval"]
}
` + acctest.SandboxHCL("other", "other", `labels = ["lost-run"]`) + acctest.SandboxHCL("unrelated", "unrelated", `labels = ["elsewhere"]`)

// The prime_sandbox list resource filters by labels (all of them), name
// prefix and creation time, honours limit, and with include_resource
// carries what an import holds, minus what the platform cannot report.
func TestAccSandboxList_query(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	query := func(config string) string {
		return fmt.Sprintf("list \"prime_sandbox\" \"found\" {\n  provider = prime\n%s\n}\n", config)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		TerraformVersionChecks:   acctest.SkipBelow(acctest.Query),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{Config: m.Config(listedSandboxes)},
			{
				Query:  true,
				Config: query("  config {\n    labels = [\"lost-run\"]\n  }"),
				QueryResultChecks: []querycheck.QueryResultCheck{
					querycheck.ExpectLength("prime_sandbox.found", 4),
					querycheck.ExpectIdentity("prime_sandbox.found", map[string]knownvalue.Check{"id": knownvalue.NotNull()}),
					querycheck.ExpectResourceDisplayName("prime_sandbox.found",
						queryfilter.ByDisplayName(knownvalue.StringRegexp(regexp.MustCompile(`^other \(`))),
						knownvalue.StringRegexp(regexp.MustCompile(`^other \(.+\)$`))),
				},
			},
			{
				Query: true,
				Config: query(`  include_resource = true
  config {
    labels      = ["lost-run", "eval"]
    name_prefix = "lost-"
  }`),
				QueryResultChecks: []querycheck.QueryResultCheck{
					querycheck.ExpectLength("prime_sandbox.found", 3),
					querycheck.ExpectResourceKnownValues("prime_sandbox.found",
						queryfilter.ByDisplayName(knownvalue.StringRegexp(regexp.MustCompile(`^lost-1 \(`))),
						[]querycheck.KnownValueCheck{
							{Path: tfjsonpath.New("name"), KnownValue: knownvalue.StringExact("lost-1")},
							{Path: tfjsonpath.New("docker_image"), KnownValue: knownvalue.StringExact("python:3.12-slim")},
							{Path: tfjsonpath.New("cpu_cores"), KnownValue: knownvalue.Int64Exact(1)},
							{Path: tfjsonpath.New("status"), KnownValue: knownvalue.StringExact("RUNNING")},
							// Not reported by the platform: left out, so
							// generated configuration does not claim it.
							{Path: tfjsonpath.New("guaranteed"), KnownValue: knownvalue.Null()},
							{Path: tfjsonpath.New("secrets"), KnownValue: knownvalue.Null()},
							// Deprecated: left out, so generated configuration
							// does not warn.
							{Path: tfjsonpath.New("vm"), KnownValue: knownvalue.Null()},
						}),
				},
			},
			{
				Query:             true,
				Config:            query("  limit = 2\n  config {\n    labels = [\"lost-run\"]\n  }"),
				QueryResultChecks: []querycheck.QueryResultCheck{querycheck.ExpectLength("prime_sandbox.found", 2)},
			},
			{
				Query: true,
				Config: query(fmt.Sprintf("  config {\n    labels        = [\"lost-run\"]\n    created_after = %q\n  }",
					time.Now().Add(time.Hour).UTC().Format(time.RFC3339))),
				QueryResultChecks: []querycheck.QueryResultCheck{querycheck.ExpectLength("prime_sandbox.found", 0)},
			},
			{
				Query:       true,
				Config:      query("  config {\n    created_before = \"yesterday\"\n  }"),
				ExpectError: acctest.ExpectErr(`created_before: parsing time "yesterday"`),
			},
		},
	})
}

// The prime_sandbox_fleet list resource gives one result per label, with
// the whole fleet as an import reads it; sandboxes that cannot be one
// fleet are left out.
func TestAccSandboxFleetList_query(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cfg := m.Config(acctest.SandboxFleetHCL("a", "a", 2, `labels = ["fleet-a"]`) + `resource "prime_sandbox_fleet" "b" {
  name_prefix  = "b"
  docker_image = "python:3.12-slim"
  labels       = ["fleet-b"]
  members      = ["x", "y"]
}
resource "prime_sandbox" "odd" {
  count        = 2
  name         = "odd-${count.index}"
  docker_image = count.index == 0 ? "python:3.12-slim" : "node:22"
  labels       = ["fleet-c"]
}
`)
	fleet := func(label string) queryfilter.QueryFilter {
		return queryfilter.ByDisplayName(knownvalue.StringExact(label + " (2 members)"))
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		TerraformVersionChecks:   acctest.SkipBelow(acctest.Query),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				Query: true,
				Config: `list "prime_sandbox_fleet" "fleets" {
  provider         = prime
  include_resource = true
  config {
    label_prefix = "fleet-"
  }
}
`,
				QueryResultChecks: []querycheck.QueryResultCheck{
					querycheck.ExpectLength("prime_sandbox_fleet.fleets", 2),
					querycheck.ExpectIdentity("prime_sandbox_fleet.fleets", map[string]knownvalue.Check{
						"id": knownvalue.Null(), "label": knownvalue.StringExact("fleet-a"), "sandbox_ids": knownvalue.ListSizeExact(2),
					}),
					querycheck.ExpectResourceKnownValues("prime_sandbox_fleet.fleets", fleet("fleet-a"), []querycheck.KnownValueCheck{
						{Path: tfjsonpath.New("name_prefix"), KnownValue: knownvalue.StringExact("a")},
						{Path: tfjsonpath.New("size"), KnownValue: knownvalue.Int64Exact(2)},
						{Path: tfjsonpath.New("guaranteed"), KnownValue: knownvalue.Null()},
					}),
					querycheck.ExpectResourceKnownValues("prime_sandbox_fleet.fleets", fleet("fleet-b"), []querycheck.KnownValueCheck{
						{Path: tfjsonpath.New("members"), KnownValue: knownvalue.SetExact([]knownvalue.Check{
							knownvalue.StringExact("x"), knownvalue.StringExact("y")})},
					}),
				},
			},
			{
				Query:             true,
				Config:            "list \"prime_sandbox_fleet\" \"one\" {\n  provider = prime\n  config {\n    label = \"fleet-b\"\n  }\n}\n",
				QueryResultChecks: []querycheck.QueryResultCheck{querycheck.ExpectLength("prime_sandbox_fleet.one", 1)},
			},
			{
				Query:       true,
				Config:      "list \"prime_sandbox_fleet\" \"none\" {\n  provider = prime\n  config {\n    labels = [\"fleet-a\"]\n  }\n}\n",
				ExpectError: acctest.ExpectErr(`No attribute specified when one (and only one) of [label,label_prefix] is required`),
			},
		},
	})
}
