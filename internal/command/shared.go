package command

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

// runArguments are the arguments every form of a command takes: both
// command resources and both exec actions embed them (schemas from
// commandArgumentAttributes), and one rule (specOf) reads them, so a fleet
// or an action never builds a partial prime_sandbox_command to reuse it.
type runArguments struct {
	WorkingDir        types.String `tfsdk:"working_dir"`
	Env               types.Map    `tfsdk:"env"`
	EnvWO             types.Map    `tfsdk:"env_wo"`
	TimeoutSeconds    types.Int64  `tfsdk:"timeout_seconds"`
	AllowedExitCodes  types.Set    `tfsdk:"allowed_exit_codes"`
	RequireOpenEgress types.Bool   `tfsdk:"require_open_egress"`
	SensitiveOutput   types.Bool   `tfsdk:"sensitive_output"`
}

// withDefaults is a as the command resources hold it after planning: an
// action's unset arguments take the resources' defaults.
func (a runArguments) withDefaults() runArguments {
	if a.TimeoutSeconds.IsNull() {
		a.TimeoutSeconds = types.Int64Value(defaultCommandTimeout)
	}
	if a.AllowedExitCodes.IsNull() {
		a.AllowedExitCodes = types.SetValueMust(types.Int64Type, []attr.Value{types.Int64Value(0)})
	}
	return a
}

// specOf is the run a's plan asks for; envWO comes from the configuration
// (write-only values are not in a plan). The caller adds what its form
// has: the sandbox and command, background, result paths, the failure
// wording.
func specOf(ctx context.Context, a runArguments, envWO types.Map) (commandSpec, diag.Diagnostics) {
	var diags diag.Diagnostics
	env, d := tfkit.StringMap(ctx, a.Env)
	diags.Append(d...)
	secret, d := tfkit.StringMap(ctx, envWO)
	diags.Append(d...)
	var allowed []int64
	diags.Append(a.AllowedExitCodes.ElementsAs(ctx, &allowed, false)...)
	return commandSpec{
		WorkingDir: a.WorkingDir.ValueString(), Env: env, EnvWO: secret,
		Timeout: time.Duration(a.TimeoutSeconds.ValueInt64()) * time.Second, Allowed: allowed,
		RequireOpenEgress: a.RequireOpenEgress.ValueBool(), SensitiveOutput: a.SensitiveOutput.ValueBool(),
	}, diags
}

// recordedOutput is where a command's output is kept: in stdout and
// stderr, or, with sensitive_output, in the one sensitive_streams object.
// prime_sandbox_command embeds it; a fleet command's steps use the same
// rules.
type recordedOutput struct {
	Stdout           types.String `tfsdk:"stdout"`
	Stderr           types.String `tfsdk:"stderr"`
	SensitiveStreams types.Object `tfsdk:"sensitive_streams"`
}

// placedOutput is stdout and stderr kept where sensitive says.
func placedOutput(sensitive bool, stdout, stderr types.String) recordedOutput {
	if sensitive {
		return recordedOutput{Stdout: types.StringNull(), Stderr: types.StringNull(), SensitiveStreams: streamsValue(stdout, stderr)}
	}
	return recordedOutput{Stdout: stdout, Stderr: stderr, SensitiveStreams: types.ObjectNull(streamsType().AttrTypes)}
}

// outputOf is a run's output, kept where sensitive says.
func outputOf(res *commandResult, sensitive bool) recordedOutput {
	return placedOutput(sensitive, types.StringValue(res.Stdout), types.StringValue(res.Stderr))
}

// moved is o, recorded with sensitive_output = wasSensitive, moved to where
// sensitive_output = sensitive keeps it.
func (o recordedOutput) moved(wasSensitive, sensitive bool) recordedOutput {
	stdout, stderr := o.Stdout, o.Stderr
	if wasSensitive {
		stdout, stderr = streamsOf(o.SensitiveStreams)
	}
	return placedOutput(sensitive, stdout, stderr)
}

func streamsType() types.ObjectType {
	return types.ObjectType{AttrTypes: map[string]attr.Type{"stdout": types.StringType, "stderr": types.StringType}}
}

func streamsValue(stdout, stderr types.String) types.Object {
	return types.ObjectValueMust(streamsType().AttrTypes, map[string]attr.Value{"stdout": stdout, "stderr": stderr})
}

// streamsOf reads sensitive_streams (nulls when it is null).
func streamsOf(v types.Object) (stdout, stderr types.String) {
	stdout, stderr = types.StringNull(), types.StringNull()
	if v.IsNull() || v.IsUnknown() {
		return stdout, stderr
	}
	if s, ok := v.Attributes()["stdout"].(types.String); ok {
		stdout = s
	}
	if s, ok := v.Attributes()["stderr"].(types.String); ok {
		stderr = s
	}
	return stdout, stderr
}
