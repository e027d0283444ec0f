package egress_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/primeintellect/terraform-provider-prime/internal/egress"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit/tfkittest"
)

// The lists' warnings (a wildcard without its apex, duplicates) come once
// per plan that writes the lists, one warning per attribute naming every
// entry: not from validation (which Terraform runs again per walk and per
// instance), not per entry, not on a plan that writes nothing, not at apply.
func TestEgressWarningsOncePerWrite(t *testing.T) {
	ctx := context.Background()
	str := func(s string) tftypes.Value { return tftypes.NewValue(tftypes.String, s) }
	num := func(n int) tftypes.Value { return tftypes.NewValue(tftypes.Number, n) }
	strs := func(typ func(tftypes.Type) tftypes.Type, vals ...string) tftypes.Value {
		elems := make([]tftypes.Value, len(vals))
		for i, v := range vals {
			elems[i] = str(v)
		}
		return tftypes.NewValue(typ(tftypes.String), elems)
	}
	set := func(e tftypes.Type) tftypes.Type { return tftypes.Set{ElementType: e} }
	list := func(e tftypes.Type) tftypes.Type { return tftypes.List{ElementType: e} }
	allow := strs(set, "*.example.com", "*.foo.com", "example.org")
	effective := strs(list, "*.example.com", "*.foo.com", "example.org")

	// validateWarnings runs ValidateConfig on the values as configuration.
	validateWarnings := func(r resource.ResourceWithValidateConfig, vals map[string]tftypes.Value) string {
		p := tfkittest.PlanOf(t, r, vals)
		var resp resource.ValidateConfigResponse
		r.ValidateConfig(ctx, resource.ValidateConfigRequest{Config: tfsdk.Config(p)}, &resp)
		if resp.Diagnostics.HasError() {
			t.Fatalf("ValidateConfig: %v", resp.Diagnostics)
		}
		return tfkittest.WarningLines(resp.Diagnostics)
	}
	// updateWarnings runs ModifyPlan for an update from state to plan.
	updateWarnings := func(r resource.ResourceWithModifyPlan, plan, state map[string]tftypes.Value) string {
		p, s := tfkittest.PlanOf(t, r, plan), tfkittest.PlanOf(t, r, state)
		resp := resource.ModifyPlanResponse{Plan: p}
		r.ModifyPlan(ctx, resource.ModifyPlanRequest{Plan: p, State: tfsdk.State(s)}, &resp)
		if resp.Diagnostics.HasError() {
			t.Fatalf("ModifyPlan: %v", resp.Diagnostics)
		}
		return tfkittest.WarningLines(resp.Diagnostics)
	}
	wantOne := func(what, got string) {
		t.Helper()
		if strings.Count(got, "Egress policy warning:") != 1 || !strings.Contains(got, `"*.example.com" does not allow example.com itself`) ||
			!strings.Contains(got, `"*.foo.com" does not allow foo.com itself`) {
			t.Errorf("%s: want one warning naming both wildcards, got:\n%s", what, got)
		}
	}
	wantNone := func(what, got string) {
		t.Helper()
		if got != "" {
			t.Errorf("%s: want no warning, got:\n%s", what, got)
		}
	}

	// The resources' own types are the egress package's: their
	// constructors give what these checks call.
	type validatingPlanner interface {
		resource.ResourceWithValidateConfig
		resource.ResourceWithModifyPlan
	}
	policy := egress.NewPolicyResource().(validatingPlanner)
	fleetPolicy := egress.NewFleetPolicyResource().(validatingPlanner)

	single := map[string]tftypes.Value{"sandbox_id": str("sb-1"), "allow": allow}
	wantNone("prime_egress_policy validation", validateWarnings(policy, single))
	wantOne("prime_egress_policy create", tfkittest.ModifyPlanWarnings(t, policy, tfkittest.PlanOf(t, policy, single)))
	singleState := map[string]tftypes.Value{"id": str("sb-1/1"), "sandbox_id": str("sb-1"), "allow": allow,
		"effective_allow": effective, "generation": num(1), "applied_generation": num(1), "applied": tftypes.NewValue(tftypes.Bool, true)}
	wantNone("prime_egress_policy unchanged", updateWarnings(policy, single, singleState))

	ids := tftypes.NewValue(tftypes.Map{ElementType: tftypes.String}, map[string]tftypes.Value{"a": str("sb-a"), "b": str("sb-b")})
	fleet := map[string]tftypes.Value{"sandbox_ids": ids, "allow": allow}
	wantNone("prime_fleet_egress_policy validation", validateWarnings(fleetPolicy, fleet))
	wantOne("prime_fleet_egress_policy create", tfkittest.ModifyPlanWarnings(t, fleetPolicy, tfkittest.PlanOf(t, fleetPolicy, fleet)))
	memberType := tftypes.Object{AttributeTypes: map[string]tftypes.Type{
		"sandbox_id": tftypes.String, "generation": tftypes.Number, "applied": tftypes.Bool}}
	member := func(id string) tftypes.Value {
		return tftypes.NewValue(memberType, map[string]tftypes.Value{"sandbox_id": str(id), "generation": num(1),
			"applied": tftypes.NewValue(tftypes.Bool, true)})
	}
	fleetState := map[string]tftypes.Value{"id": str("f-1"), "sandbox_ids": ids, "allow": allow, "effective_allow": effective,
		"members": tftypes.NewValue(tftypes.Map{ElementType: memberType}, map[string]tftypes.Value{"a": member("sb-a"), "b": member("sb-b")})}
	wantNone("prime_fleet_egress_policy unchanged", updateWarnings(fleetPolicy, fleet, fleetState))
}
