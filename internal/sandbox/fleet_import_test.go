package sandbox

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/memberkit"
)

// rekeyMembers never drops a member: two members that map to one key are
// an error naming both, whatever the map order.
func TestRekeyMembersCollision(t *testing.T) {
	member := func(id, name string) fleetMember {
		return fleetMember{ID: types.StringValue(id), Name: types.StringValue(name)}
	}
	in := map[string]fleetMember{"a": member("sb-1", "a"), "eval-a": member("sb-2", "eval-a"), "eval-b": member("sb-3", "eval-b")}
	for range 20 {
		_, err := rekeyMembers(in, types.StringValue("eval"))
		if err == nil || !strings.Contains(err.Error(), `sb-1 ("a") and sb-2 ("eval-a") both map to member key "a"`) {
			t.Fatalf("err = %v", err)
		}
	}
	out, err := rekeyMembers(map[string]fleetMember{"task-a": member("sb-1", "eval-task-a"), "b": member("sb-2", "eval-b")}, types.StringValue("eval"))
	if err != nil || len(out) != 2 || out["task-a"].ID.ValueString() != "sb-1" || out["b"].ID.ValueString() != "sb-2" {
		t.Fatalf("out %v, err %v", out, err)
	}
}

// The first plan after a fleet import names the members that the
// configured name_prefix does not rename.
func TestWarnMembersNotRenamed(t *testing.T) {
	members := map[string]fleetMember{
		"0": {ID: types.StringValue("sb-1"), Name: types.StringValue("eval-0")},
		"1": {ID: types.StringValue("sb-2"), Name: types.StringValue("renamed-1")},
	}
	var diags diag.Diagnostics
	warnMembersNotRenamed(types.StringValue("renamed"), members, &diags)
	if len(diags) != 1 || !strings.Contains(diags[0].Detail(), `not named renamed-<key>: "0" (eval-0).`) {
		t.Fatalf("diags = %v", diags)
	}
	diags = nil
	warnMembersNotRenamed(types.StringValue("eval"), map[string]fleetMember{"0": members["0"]}, &diags)
	if len(diags) != 0 {
		t.Fatalf("members named <prefix>-<key> warned: %v", diags)
	}
}

// The failure message says what became of each failed member, read from
// the state the apply leaves.
func TestSandboxFleetFailureSaysWhatBecameOfEachMember(t *testing.T) {
	var p memberkit.Problems
	for _, k := range []string{"gone", "locked", "removed", "stuck"} {
		p.Add(k, "failed")
	}
	member := func(applied types.Bool) fleetMember {
		return fleetMember{ID: types.StringValue("sb"), EgressApplied: applied}
	}
	state := map[string]fleetMember{
		"ok": member(types.BoolNull()), "locked": member(types.BoolValue(false)),
		"removed": member(types.BoolNull()), "stuck": member(types.BoolNull()),
	}
	msg := strings.Join(strings.Fields(sandboxFleetFailure(&p, state, []string{"ok", "gone", "locked", "stuck"}, false)), " ")
	for _, want := range []string{
		"4 member(s) failed; 1 are healthy.",
		`Member "gone" is not in state (deleted, or never created): the next apply creates it again.`,
		`Member "locked" stays in state with egress_applied = false; the next apply writes its egress policy again.`,
		`Member "removed" could not be deleted and stays in state; the next apply deletes it again.`,
		`Member "stuck" stays in state as it is`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "were deleted") || strings.Contains(msg, "untaint") {
		t.Errorf("message claims what did not happen:\n%s", msg)
	}
}
