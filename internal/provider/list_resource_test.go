package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/querycheck"
	"github.com/hashicorp/terraform-plugin-testing/querycheck/queryfilter"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
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
` + sandboxHCL("other", "other", `labels = ["lost-run"]`) + sandboxHCL("unrelated", "unrelated", `labels = ["elsewhere"]`)

// The prime_sandbox list resource filters by labels (all of them), name
// prefix and creation time, honours limit, and with include_resource
// carries what an import holds, minus what the platform cannot report.
func TestAccSandboxList_query(t *testing.T) {
	m := newTestMock(t, fastMockOptions())
	query := func(config string) string {
		return fmt.Sprintf("list \"prime_sandbox\" \"found\" {\n  provider = prime\n%s\n}\n", config)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories(t),
		TerraformVersionChecks:   skipBelow(tfQuery),
		CheckDestroy:             m.checkNoLiveSandboxes,
		Steps: []resource.TestStep{
			{Config: m.config(listedSandboxes)},
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
				ExpectError: expectErr(`created_before: parsing time "yesterday"`),
			},
		},
	})
}

// The prime_sandbox_fleet list resource gives one result per label, with
// the whole fleet as an import reads it; sandboxes that cannot be one
// fleet are left out.
func TestAccSandboxFleetList_query(t *testing.T) {
	m := newTestMock(t, fastMockOptions())
	cfg := m.config(sandboxFleetHCL("a", "a", 2, `labels = ["fleet-a"]`) + `resource "prime_sandbox_fleet" "b" {
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
		ProtoV6ProviderFactories: providerFactories(t),
		TerraformVersionChecks:   skipBelow(tfQuery),
		CheckDestroy:             m.checkNoLiveSandboxes,
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
				ExpectError: expectErr(`No attribute specified when one (and only one) of [label,label_prefix] is required`),
			},
		},
	})
}

// The filter is applied to every listed sandbox, whatever the API did.
func TestSandboxFilterMatches(t *testing.T) {
	ctx := context.Background()
	created := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	team := "team-1"
	sb := prime.Sandbox{Name: "lost-1", Status: prime.StatusRunning, Labels: []string{"a", "b"}, CreatedAt: created, TeamID: &team}
	model := func(labels []string, status, prefix, teamID, before, after string) sandboxListModel {
		str := func(s string) types.String {
			if s == "" {
				return types.StringNull()
			}
			return types.StringValue(s)
		}
		l := types.ListNull(types.StringType)
		if labels != nil {
			l, _ = types.ListValueFrom(ctx, types.StringType, labels)
		}
		return sandboxListModel{Labels: l, Status: str(status), NamePrefix: str(prefix), TeamID: str(teamID),
			CreatedBefore: str(before), CreatedAfter: str(after)}
	}
	for _, c := range []struct {
		name string
		m    sandboxListModel
		want bool
	}{
		{"no filter", model(nil, "", "", "", "", ""), true},
		{"all labels", model([]string{"a", "b"}, "", "", "", "", ""), true},
		{"a missing label", model([]string{"a", "c"}, "", "", "", "", ""), false},
		{"name prefix", model(nil, "", "lost-", "", "", ""), true},
		{"other prefix", model(nil, "", "kept-", "", "", ""), false},
		{"team", model(nil, "", "", "team-1", "", ""), true},
		{"other team", model(nil, "", "", "team-2", "", ""), false},
		{"created before, later bound", model(nil, "", "", "", "2026-06-02T00:00:00Z", ""), true},
		{"created before, exact", model(nil, "", "", "", "2026-06-01T12:00:00Z", ""), false},
		{"created after, exact", model(nil, "", "", "", "", "2026-06-01T12:00:00Z"), true},
		{"created after, later", model(nil, "", "", "", "", "2026-06-01T12:00:01Z"), false},
		{"status", model(nil, prime.StatusRunning, "", "", "", ""), true},
		{"other status", model(nil, prime.StatusPaused, "", "", "", ""), false},
	} {
		f, diags := sandboxFilterOfList(ctx, c.m)
		if diags.HasError() {
			t.Fatalf("%s: %v", c.name, diags)
		}
		if got := f.matches(&sb); got != c.want {
			t.Errorf("%s: matches = %t, want %t", c.name, got, c.want)
		}
	}
	// Without a status only live sandboxes match (is_active=true); with
	// one, terminal ones can (is_active=false, as the CLI sends).
	gone := sb
	gone.Status = prime.StatusTerminated
	live, _ := sandboxFilterOfList(ctx, model(nil, "", "", "", "", ""))
	dead, _ := sandboxFilterOfList(ctx, model(nil, prime.StatusTerminated, "", "", "", ""))
	if live.matches(&gone) || !dead.matches(&gone) || !*live.listOptions().IsActive || *dead.listOptions().IsActive {
		t.Fatal("terminal sandboxes: listed without a status filter, or not listed with TERMINATED")
	}
	if _, diags := sandboxFilterOfList(ctx, model(nil, "", "", "", "June", "")); !diags.HasError() {
		t.Fatal("created_before = June was accepted")
	}
}

// The list stops paging at its limit: 150 matching sandboxes are two pages
// of 100, and 10 of them take one request.
func TestSandboxFilterWalkStopsAtLimit(t *testing.T) {
	ctx := context.Background()
	m := newTestMock(t, fastMockOptions())
	c := m.client(t)
	for i := range 150 {
		if _, err := c.CreateSandbox(ctx, prime.CreateSandboxRequest{Name: fmt.Sprintf("s%03d", i), DockerImage: "img", Labels: []string{"l"}}); err != nil {
			t.Fatal(err)
		}
	}
	f := sandboxFilter{labels: []string{"l"}}
	for _, c2 := range []struct {
		limit         int64
		seen, perPage int
	}{{10, 10, 1}, {0, 150, 2}, {120, 120, 2}} {
		before := m.Stats().Requests["GET /api/v1/sandbox"]
		seen := 0
		if err := f.walk(ctx, c, c2.limit, func(*prime.Sandbox) bool { seen++; return true }); err != nil {
			t.Fatal(err)
		}
		if got := m.Stats().Requests["GET /api/v1/sandbox"] - before; seen != c2.seen || got != c2.perPage {
			t.Errorf("limit %d: saw %d sandboxes in %d requests, want %d in %d", c2.limit, seen, got, c2.seen, c2.perPage)
		}
	}
}

// Sandboxes group by the labels that name fleets.
func TestFleetGroups(t *testing.T) {
	sbs := []prime.Sandbox{
		{ID: "1", Labels: []string{"run-1", "eval"}}, {ID: "2", Labels: []string{"run-1"}},
		{ID: "3", Labels: []string{"run-2", "run-10"}}, {ID: "4", Labels: []string{"other"}},
	}
	labels, groups := fleetGroups(sbs, "", "run-")
	if fmt.Sprint(labels) != "[run-1 run-10 run-2]" || len(groups["run-1"]) != 2 || len(groups["run-10"]) != 1 {
		t.Fatalf("by prefix: %v %v", labels, groups)
	}
	labels, groups = fleetGroups(sbs, "run-1", "")
	if fmt.Sprint(labels) != "[run-1]" || len(groups["run-1"]) != 2 {
		t.Fatalf("by label: %v %v", labels, groups)
	}
}
