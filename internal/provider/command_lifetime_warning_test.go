package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// planOf is a new resource's plan for r's schema: every attribute null
// except those in set.
func planOf(t *testing.T, r resource.Resource, set map[string]tftypes.Value) tfsdk.Plan {
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

// modifyPlanWarnings runs r's ModifyPlan for a create and returns its
// warnings, one line each.
func modifyPlanWarnings(t *testing.T, r resource.ResourceWithModifyPlan, plan tfsdk.Plan) string {
	t.Helper()
	resp := resource.ModifyPlanResponse{Plan: plan}
	r.ModifyPlan(context.Background(), resource.ModifyPlanRequest{
		Plan: plan, State: tfsdk.State{Schema: plan.Schema, Raw: tftypes.NewValue(plan.Raw.Type(), nil)},
	}, &resp)
	if resp.Diagnostics.HasError() {
		t.Fatalf("ModifyPlan: %v", resp.Diagnostics)
	}
	return warningLines(resp.Diagnostics)
}

func warningLines(d diag.Diagnostics) string {
	var b strings.Builder
	for _, w := range d.Warnings() {
		b.WriteString(w.Summary() + ": " + w.Detail() + "\n")
	}
	return b.String()
}

// Both command resources warn, with one rule, when a step may run longer
// than its sandbox lives; neither warns for a sandbox without a lifetime
// limit or a step that fits.
func TestCommandOutlivesSandboxWarning(t *testing.T) {
	m := newTestMock(t, fastMockOptions())
	c := m.client(t)
	newSandbox := func(timeoutMinutes int) string {
		sb, err := c.CreateSandbox(waitCtx(t), prime.CreateSandboxRequest{Name: "life", DockerImage: "python:3.12-slim",
			TimeoutMinutes: &timeoutMinutes})
		if err != nil {
			t.Fatal(err)
		}
		return sb.ID
	}
	short, unlimited := newSandbox(2), newSandbox(-1)
	str := func(s string) tftypes.Value { return tftypes.NewValue(tftypes.String, s) }
	num := func(n int) tftypes.Value { return tftypes.NewValue(tftypes.Number, n) }
	const want = "Command may outlive its sandbox"
	for _, tc := range []struct {
		sandbox string
		timeout int
		warns   bool
	}{
		{short, 200, true},
		{short, 100, false},
		{unlimited, 86400, false},
	} {
		// A fresh client per case: what one case taught it must not decide
		// the next.
		fresh := m.client(t)
		single := modifyPlanWarnings(t, &sandboxCommandResource{client: fresh}, planOf(t, &sandboxCommandResource{}, map[string]tftypes.Value{
			"sandbox_id": str(tc.sandbox), "command": str("sleep 200"), "timeout_seconds": num(tc.timeout),
		}))
		fleet := modifyPlanWarnings(t, &fleetCommandResource{client: fresh}, planOf(t, &fleetCommandResource{}, map[string]tftypes.Value{
			"sandbox_ids":     tftypes.NewValue(tftypes.Map{ElementType: tftypes.String}, map[string]tftypes.Value{"m0": str(tc.sandbox)}),
			"commands":        tftypes.NewValue(tftypes.List{ElementType: tftypes.String}, []tftypes.Value{str("sleep 200")}),
			"timeout_seconds": num(tc.timeout), "max_concurrency": num(32),
			"sensitive_output":   tftypes.NewValue(tftypes.Bool, false),
			"allowed_exit_codes": tftypes.NewValue(tftypes.Set{ElementType: tftypes.Number}, []tftypes.Value{num(0)}),
		}))
		if got := strings.Contains(single, want); got != tc.warns {
			t.Errorf("prime_sandbox_command on %s, timeout %d s: warned %t, want %t (%q)", tc.sandbox, tc.timeout, got, tc.warns, single)
		}
		if got := strings.Contains(fleet, want); got != tc.warns {
			t.Errorf("prime_fleet_command on %s, timeout %d s: warned %t, want %t (%q)", tc.sandbox, tc.timeout, got, tc.warns, fleet)
		}
		if tc.warns && (!strings.Contains(fleet, `Member "m0": Sandbox `+tc.sandbox+" declares a lifetime of 2m0s") ||
			!strings.Contains(single, "Sandbox "+tc.sandbox+" declares a lifetime")) {
			t.Errorf("the warnings do not name the member, the sandbox and its lifetime:\n%s\n%s", single, fleet)
		}
	}
}
