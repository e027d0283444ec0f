package command

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func nullArguments() runArguments {
	return runArguments{
		WorkingDir: types.StringNull(), Env: types.MapNull(types.StringType), EnvWO: types.MapNull(types.StringType),
		TimeoutSeconds: types.Int64Null(), AllowedExitCodes: types.SetNull(types.Int64Type),
		RequireOpenEgress: types.BoolNull(), SensitiveOutput: types.BoolNull(),
	}
}

// An action's unset arguments take the resources' defaults; set ones stay.
func TestRunArgumentsWithDefaults(t *testing.T) {
	got := nullArguments().withDefaults()
	if got.TimeoutSeconds.ValueInt64() != defaultCommandTimeout || len(got.AllowedExitCodes.Elements()) != 1 ||
		!got.AllowedExitCodes.Elements()[0].Equal(types.Int64Value(0)) {
		t.Fatalf("defaults: %+v", got)
	}
	set := nullArguments()
	set.TimeoutSeconds = types.Int64Value(5)
	set.AllowedExitCodes = types.SetValueMust(types.Int64Type, []attr.Value{types.Int64Value(3)})
	if got := set.withDefaults(); got.TimeoutSeconds.ValueInt64() != 5 || !got.AllowedExitCodes.Equal(set.AllowedExitCodes) {
		t.Fatalf("set values changed: %+v", got)
	}
}

// specOf reads the shared arguments, env_wo from the configuration, and
// leaves what a form adds (sandbox, command, background, failure wording)
// to the caller.
func TestSpecOf(t *testing.T) {
	a := nullArguments().withDefaults()
	a.WorkingDir, a.RequireOpenEgress, a.SensitiveOutput = types.StringValue("/w"), types.BoolValue(true), types.BoolValue(true)
	a.Env = types.MapValueMust(types.StringType, map[string]attr.Value{"A": types.StringValue("1")})
	wo := types.MapValueMust(types.StringType, map[string]attr.Value{"S": types.StringValue("secret")})
	spec, diags := specOf(context.Background(), a, wo)
	if diags.HasError() {
		t.Fatal(diags)
	}
	if spec.WorkingDir != "/w" || spec.Env["A"] != "1" || spec.EnvWO["S"] != "secret" || spec.Timeout != defaultCommandTimeout*time.Second ||
		len(spec.Allowed) != 1 || !spec.RequireOpenEgress || !spec.SensitiveOutput {
		t.Fatalf("spec = %+v", spec)
	}
	if spec.SandboxID != "" || spec.Command != "" || spec.Background || spec.AfterFailure != "" || spec.ResultPaths != nil {
		t.Fatalf("specOf set what its caller owns: %+v", spec)
	}
}

// Output is kept in stdout/stderr or in sensitive_streams, and moves
// between them without loss when sensitive_output changes.
func TestRecordedOutputMoves(t *testing.T) {
	out, errOut := types.StringValue("out"), types.StringValue("err")
	plain := placedOutput(false, out, errOut)
	if !plain.Stdout.Equal(out) || !plain.Stderr.Equal(errOut) || !plain.SensitiveStreams.IsNull() {
		t.Fatalf("plain: %+v", plain)
	}
	hidden := plain.moved(false, true)
	if !hidden.Stdout.IsNull() || !hidden.Stderr.IsNull() {
		t.Fatalf("sensitive output left in stdout/stderr: %+v", hidden)
	}
	if o, e := streamsOf(hidden.SensitiveStreams); !o.Equal(out) || !e.Equal(errOut) {
		t.Fatalf("sensitive_streams = %v", hidden.SensitiveStreams)
	}
	same := func(a, b recordedOutput) bool {
		return a.Stdout.Equal(b.Stdout) && a.Stderr.Equal(b.Stderr) && a.SensitiveStreams.Equal(b.SensitiveStreams)
	}
	if back := hidden.moved(true, false); !same(back, plain) {
		t.Fatalf("moved back: %+v, want %+v", back, plain)
	}
	res := outputOf(&commandResult{Stdout: "out", Stderr: "err"}, false)
	if !same(res, plain) {
		t.Fatalf("outputOf = %+v", res)
	}
}
