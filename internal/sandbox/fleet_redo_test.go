package sandbox

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Which members a plan redoes: a new or changed entry (or one not yet
// known) of a kept member, not a removed one; none while an import's
// exemption lasts.
func TestMembersToRedo(t *testing.T) {
	m := func(kv ...string) types.Map {
		els := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			els[kv[i]] = kv[i+1]
		}
		v, _ := types.MapValueFrom(context.Background(), types.StringType, els)
		return v
	}
	null := types.MapNull(types.StringType)
	kept := []string{"a", "b", "c"}
	for _, c := range []struct {
		name              string
		planned, recorded types.Map
		imported          bool
		want              []string
	}{
		{"unchanged", m("a", "1"), m("a", "1"), false, nil},
		{"changed", m("a", "1", "b", "1"), m("a", "2", "b", "1"), false, []string{"a"}},
		{"set for the first time", m("c", "1"), null, false, []string{"c"}},
		{"removed", m("a", "1"), m("a", "1", "b", "1"), false, nil},
		{"whole map unknown", types.MapUnknown(types.StringType), m("a", "1"), false, kept},
		{"entry of a new member", m("d", "1"), null, false, nil},
		{"after an import", m("a", "1"), null, true, nil},
		{"both null", null, null, false, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := membersToRedo(c.planned, c.recorded, kept, c.imported); !slices.Equal(got, c.want) {
				t.Errorf("membersToRedo = %v, want %v", got, c.want)
			}
		})
	}
}

// A member whose redo did not happen keeps its recorded entry, so the next
// plan redoes it again; the others take the planned entries.
func TestTriggersAfterRedo(t *testing.T) {
	ctx := context.Background()
	planned, _ := types.MapValueFrom(ctx, types.StringType, map[string]string{"a": "2", "b": "2", "c": "1"})
	recorded, _ := types.MapValueFrom(ctx, types.StringType, map[string]string{"a": "1", "b": "1"})
	got := triggersAfterRedo(planned, recorded, []string{"a", "c"})
	var out map[string]string
	if d := got.ElementsAs(ctx, &out, false); d.HasError() {
		t.Fatal(d)
	}
	if fmt.Sprint(out) != fmt.Sprint(map[string]string{"a": "1", "b": "2"}) {
		t.Fatalf("triggersAfterRedo = %v; want a kept at 1, b planned, c dropped (it had none)", out)
	}
	if got := triggersAfterRedo(planned, recorded, nil); !got.Equal(planned) {
		t.Fatalf("with every redo done: %v, want the planned map", got)
	}
}

// Unknown keys are named, each once, with the fleet's keys.
func TestValidateMemberTriggers(t *testing.T) {
	triggers, _ := types.MapValueFrom(context.Background(), types.StringType, map[string]string{"a": "1", "zz": "1", "y": "2"})
	var diags diag.Diagnostics
	validateMemberTriggers(triggers, []string{"a", "b"}, &diags)
	if diags.ErrorsCount() != 2 {
		t.Fatalf("%d errors, want 2 (y and zz): %v", diags.ErrorsCount(), diags)
	}
	if d := diags.Errors()[0].Detail(); d != `member_triggers names "y", but the fleet's member keys are "a", "b". Use a member key, or remove the entry (a removed member needs no entry).` {
		t.Fatalf("detail: %s", d)
	}
}
