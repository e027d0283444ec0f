package sandbox_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/primeintellect/terraform-provider-prime/internal/sandbox"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit/tfkittest"
)

// A fleet's no-change plan does the same work per member at 200 members
// and at 1,600 (see memberkit.MemberMapAttribute: a map of nested
// attributes made it quadratic). Allocated bytes stand for the work: they
// do not depend on the machine's load.
func TestFleetPlanIsLinearInMembers(t *testing.T) {
	perMember := tfkittest.PlanBytesPerMember(t, sandbox.NewFleetResource, fleetSnapshot, 200, 1600)
	t.Logf("bytes per member: %.0f at 200, %.0f at 1,600", perMember[0], perMember[1])
	if perMember[1] > 1.25*perMember[0] {
		t.Fatalf("a no-change plan allocates %.0f bytes per member at 1,600 members, %.0f at 200: more work per "+
			"member as the fleet grows", perMember[1], perMember[0])
	}
}

// fleetSnapshot is an applied fleet of n members (size = n).
func fleetSnapshot(n int) (state, config map[string]tftypes.Value) {
	str := func(s string) tftypes.Value { return tftypes.NewValue(tftypes.String, s) }
	member := tftypes.Object{AttributeTypes: map[string]tftypes.Type{
		"id": tftypes.String, "name": tftypes.String, "status": tftypes.String, "created_at": tftypes.String,
		"egress_generation": tftypes.Number, "egress_applied": tftypes.Bool,
	}}
	ids, members := map[string]tftypes.Value{}, map[string]tftypes.Value{}
	for i := range n {
		key, id := fmt.Sprint(i), fmt.Sprintf("sbx-%08d", i)
		ids[key] = str(id)
		members[key] = tftypes.NewValue(member, map[string]tftypes.Value{
			"id": str(id), "name": str("bench-" + key), "status": str("RUNNING"), "created_at": str("2026-12-04T18:15:49Z"),
			"egress_generation": tftypes.NewValue(tftypes.Number, nil), "egress_applied": tftypes.NewValue(tftypes.Bool, nil),
		})
	}
	config = map[string]tftypes.Value{
		"name_prefix":  str("bench"),
		"size":         tftypes.NewValue(tftypes.Number, n),
		"docker_image": str("python:3.12-slim"),
	}
	state = map[string]tftypes.Value{
		"id":          str("fleet-0123456789abcdef"),
		"sandbox_ids": tftypes.NewValue(tftypes.Map{ElementType: tftypes.String}, ids),
		"sandboxes":   tftypes.NewValue(tftypes.Map{ElementType: member}, members),
	}
	for k, v := range config {
		state[k] = v
	}
	return state, config
}
