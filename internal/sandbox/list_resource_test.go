package sandbox

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

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
	m := mocktest.New(t, mocktest.Fast())
	c := m.Client(t)
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
