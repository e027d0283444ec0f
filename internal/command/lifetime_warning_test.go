package command

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit/tfkittest"
)

// Both command resources warn, with one rule, when a step may run longer
// than its sandbox lives; neither warns for a sandbox without a lifetime
// limit or a step that fits.
func TestCommandOutlivesSandboxWarning(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	c := m.Client(t)
	newSandbox := func(timeoutMinutes int) string {
		sb, err := c.CreateSandbox(context.Background(), prime.CreateSandboxRequest{Name: "life", DockerImage: "python:3.12-slim",
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
		fresh := m.Client(t)
		single := tfkittest.ModifyPlanWarnings(t, &sandboxCommandResource{client: fresh}, tfkittest.PlanOf(t, &sandboxCommandResource{}, map[string]tftypes.Value{
			"sandbox_id": str(tc.sandbox), "command": str("sleep 200"), "timeout_seconds": num(tc.timeout),
		}))
		fleet := tfkittest.ModifyPlanWarnings(t, &fleetCommandResource{client: fresh}, tfkittest.PlanOf(t, &fleetCommandResource{}, map[string]tftypes.Value{
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
