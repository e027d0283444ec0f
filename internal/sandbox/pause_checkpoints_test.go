package sandbox

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

type fakePrivate map[string][]byte

func (f fakePrivate) GetKey(_ context.Context, k string) ([]byte, diag.Diagnostics) { return f[k], nil }
func (f fakePrivate) SetKey(_ context.Context, k string, v []byte) diag.Diagnostics {
	if len(v) == 0 {
		delete(f, k)
	} else {
		f[k] = v
	}
	return nil
}

// Pauses add up across cycles, per sandbox, each checkpoint once; the
// record survives private state; an empty record removes the key.
func TestPauseCheckpointsRecord(t *testing.T) {
	ctx := context.Background()
	priv := fakePrivate{}
	pc, _ := readPauseCheckpoints(ctx, priv)
	pc.record("sb-1", "ck-a", nil)
	pc.record("sb-1", "", nil) // already paused: none taken
	pc.record("sb-1", "ck-a", nil)
	pc.record("sb-2", "ck-b", nil)
	pc.save(ctx, priv)

	again, d := readPauseCheckpoints(ctx, priv)
	if d.HasError() {
		t.Fatal(d)
	}
	again.record("sb-1", "ck-c", nil)
	if got := again.of("sb-1"); !slices.Equal(got, []string{"ck-a", "ck-c"}) {
		t.Fatalf("sb-1: %v", got)
	}
	if got := again.sandboxes(); !slices.Equal(got, []string{"sb-1", "sb-2"}) {
		t.Fatalf("sandboxes %v", got)
	}

	var diags diag.Diagnostics
	again.record("sb-3", "", prime.ErrPauseCheckpointUnlisted)
	again.unlistedWarning(&diags)
	if diags.WarningsCount() != 1 || diags.HasError() {
		t.Fatalf("an unlisted pause checkpoint is one warning: %v", diags)
	}

	empty := &pauseCheckpoints{bySandbox: map[string][]string{"sb-1": {}}}
	empty.save(ctx, priv)
	if _, ok := priv[pauseCheckpointsKey]; ok {
		t.Fatal("an empty record must remove the key")
	}
	priv[pauseCheckpointsKey] = []byte("not json")
	if _, d := readPauseCheckpoints(ctx, priv); !d.HasError() {
		t.Fatal("a corrupt record must be an error, not forgotten")
	}
	if _, d := readPauseCheckpoints(ctx, nil); d.HasError() {
		t.Fatal(errors.New("no private state is an empty record"))
	}
}

// Only sandboxes no longer among the members have their pause checkpoints
// deleted.
func TestPausedAndGone(t *testing.T) {
	pc := &pauseCheckpoints{bySandbox: map[string][]string{"sb-1": {"a"}, "sb-2": {"b"}, "sb-3": {"c"}}}
	members := map[string]fleetMember{"0": {ID: types.StringValue("sb-1")}, "2": {ID: types.StringValue("sb-3")}}
	if got := pausedAndGone(pc, members); !slices.Equal(got, []string{"sb-2"}) {
		t.Fatalf("pausedAndGone = %v", got)
	}
	if got := pausedAndGone(pc, nil); len(got) != 3 {
		t.Fatalf("all gone: %v", got)
	}
}
