package tfkittest

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// PlanOf is a new resource's plan for r's schema: every attribute null
// except those in set.
func PlanOf(t *testing.T, r resource.Resource, set map[string]tftypes.Value) tfsdk.Plan {
	t.Helper()
	var sr resource.SchemaResponse
	r.Schema(context.Background(), resource.SchemaRequest{}, &sr)
	typ, ok := sr.Schema.Type().TerraformType(context.Background()).(tftypes.Object)
	if !ok {
		t.Fatalf("schema type %T", sr.Schema.Type())
	}
	vals := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		if v, ok := set[name]; ok {
			vals[name] = v
		} else {
			vals[name] = tftypes.NewValue(at, nil)
		}
	}
	return tfsdk.Plan{Schema: sr.Schema, Raw: tftypes.NewValue(typ, vals)}
}

// ModifyPlanWarnings runs r's ModifyPlan for a create and returns its
// warnings, one line each.
func ModifyPlanWarnings(t *testing.T, r resource.ResourceWithModifyPlan, plan tfsdk.Plan) string {
	t.Helper()
	resp := resource.ModifyPlanResponse{Plan: plan}
	r.ModifyPlan(context.Background(), resource.ModifyPlanRequest{
		Plan: plan, State: tfsdk.State{Schema: plan.Schema, Raw: tftypes.NewValue(plan.Raw.Type(), nil)},
	}, &resp)
	if resp.Diagnostics.HasError() {
		t.Fatalf("ModifyPlan: %v", resp.Diagnostics)
	}
	return WarningLines(resp.Diagnostics)
}

// WarningLines is d's warnings, "summary: detail" one a line.
func WarningLines(d diag.Diagnostics) string {
	var b strings.Builder
	for _, w := range d.Warnings() {
		b.WriteString(w.Summary() + ": " + w.Detail() + "\n")
	}
	return b.String()
}
