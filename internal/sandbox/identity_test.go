package sandbox

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"
)

// The identity's label survives as long as the fleet carries it; a fleet
// with several labels and no import has none.
func TestFleetIdentityLabel(t *testing.T) {
	for _, c := range []struct {
		prior  string
		labels []string
		want   string
	}{
		{"", []string{"run-1"}, "run-1"},
		{"", []string{"eval", "run-1"}, ""},
		{"run-1", []string{"eval", "run-1"}, "run-1"},
		{"gone", []string{"eval", "run-1"}, ""},
		{"gone", []string{"run-2"}, "run-2"},
		{"", nil, ""},
	} {
		if got := fleetIdentityLabel(c.prior, c.labels); got != c.want {
			t.Errorf("fleetIdentityLabel(%q, %v) = %q, want %q", c.prior, c.labels, got, c.want)
		}
	}
}

// An identity imports by its label, else by its IDs; an empty one is
// refused.
func TestFleetImportID(t *testing.T) {
	ctx := context.Background()
	byLabel, _ := fleetIdentityValue(ctx, "fleet-1", "run-1", []string{"b", "a"})
	if id, err := fleetImportID(byLabel); err != nil || id != "label:run-1" {
		t.Fatalf("by label: %q, %v", id, err)
	}
	byIDs, _ := fleetIdentityValue(ctx, "fleet-1", "", []string{"b", "a"})
	if id, err := fleetImportID(byIDs); err != nil || id != "a,b" {
		t.Fatalf("by IDs (sorted): %q, %v", id, err)
	}
	empty := fleetIdentityModel{ID: types.StringValue("fleet-1"), Label: types.StringNull(), SandboxIDs: types.ListNull(types.StringType)}
	if _, err := fleetImportID(empty); err == nil {
		t.Fatal("an identity without label and sandbox_ids was accepted")
	}
}
