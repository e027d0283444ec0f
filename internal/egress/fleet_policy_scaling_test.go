package egress_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/primeintellect/terraform-provider-prime/internal/egress"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit/tfkittest"
)

// A fleet policy's no-change plan does the same work per member at 200
// members and at 1,600: the framework's plan of a map of nested attributes
// copies the whole map once per member (quadratic: at 3,000 members the
// second plan took 3.7 times the CPU of 1,000), which `members`, a map of
// objects, never enters. Allocated bytes stand for the work: they do not
// depend on the machine's load.
func TestFleetPolicyPlanIsLinearInMembers(t *testing.T) {
	perMember := tfkittest.PlanBytesPerMember(t, egress.NewFleetPolicyResource, fleetPolicySnapshot, 200, 1600)
	t.Logf("bytes per member: %.0f at 200, %.0f at 1,600", perMember[0], perMember[1])
	if perMember[1] > 1.25*perMember[0] {
		t.Fatalf("a no-change plan allocates %.0f bytes per member at 1,600 members, %.0f at 200: more work per "+
			"member as the fleet grows", perMember[1], perMember[0])
	}
}

// fleetPolicySnapshot is an applied fleet policy on n members.
func fleetPolicySnapshot(n int) (state, config map[string]tftypes.Value) {
	str := func(s string) tftypes.Value { return tftypes.NewValue(tftypes.String, s) }
	strs := func(typ tftypes.Type, ss ...string) tftypes.Value {
		vals := make([]tftypes.Value, len(ss))
		for i, s := range ss {
			vals[i] = str(s)
		}
		return tftypes.NewValue(typ, vals)
	}
	member := tftypes.Object{AttributeTypes: map[string]tftypes.Type{
		"sandbox_id": tftypes.String, "generation": tftypes.Number, "applied": tftypes.Bool,
	}}
	ids, members := map[string]tftypes.Value{}, map[string]tftypes.Value{}
	for i := range n {
		key, id := fmt.Sprint(i), fmt.Sprintf("sbx-%08d", i)
		ids[key] = str(id)
		members[key] = tftypes.NewValue(member, map[string]tftypes.Value{
			"sandbox_id": str(id), "generation": tftypes.NewValue(tftypes.Number, 1),
			"applied": tftypes.NewValue(tftypes.Bool, true),
		})
	}
	config = map[string]tftypes.Value{
		"sandbox_ids": tftypes.NewValue(tftypes.Map{ElementType: tftypes.String}, ids),
		"allow":       strs(tftypes.Set{ElementType: tftypes.String}, "example.com"),
		"routes":      strs(tftypes.List{ElementType: tftypes.String}, "https://intercept.example.net/v1"),
	}
	state = map[string]tftypes.Value{
		"id":              str("0123456789abcdef"),
		"effective_allow": strs(tftypes.List{ElementType: tftypes.String}, "example.com", "intercept.example.net"),
		"effective_block": tftypes.NewValue(tftypes.List{ElementType: tftypes.String}, nil),
		"members":         tftypes.NewValue(tftypes.Map{ElementType: member}, members),
	}
	for k, v := range config {
		state[k] = v
	}
	return state, config
}
