package command

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

type sandboxCommandModel struct {
	ID        types.String `tfsdk:"id"`
	SandboxID types.String `tfsdk:"sandbox_id"`
	Command   types.String `tfsdk:"command"`
	runArguments
	EnvWOVersion types.Int64 `tfsdk:"env_wo_version"`
	Triggers     types.Map   `tfsdk:"triggers"`
	ExitCode     types.Int64 `tfsdk:"exit_code"`
	recordedOutput
	OutputTruncated types.Bool   `tfsdk:"output_truncated"`
	ExecutedAt      types.String `tfsdk:"executed_at"`
	Background      types.Bool   `tfsdk:"background"`
	OutputDir       types.String `tfsdk:"output_dir"`
	JobID           types.String `tfsdk:"job_id"`
	JobStatus       types.String `tfsdk:"job_status"`
	OutputFiles     types.List   `tfsdk:"output_files"`
	ResultPaths     types.Set    `tfsdk:"result_paths"`
}

// job_status values of a background command.
const (
	jobRunning   = "running"   // an interrupted apply left it running: the next apply collects it
	jobCompleted = "completed" // its result is recorded
	jobFailed    = "failed"    // collected by a later apply and judged a failure: the next apply runs it again
)

// spec is the command m's plan asks for (env_wo comes from the
// configuration).
func (m sandboxCommandModel) spec(ctx context.Context, envWO types.Map) (commandSpec, diag.Diagnostics) {
	spec, diags := specOf(ctx, m.runArguments, envWO)
	spec.SandboxID, spec.Command = m.SandboxID.ValueString(), m.Command.ValueString()
	spec.Background = m.Background.ValueBool()
	spec.ResultPaths = resultPathsOf(ctx, m.ResultPaths, &diags)
	spec.AfterFailure = commandNotStored
	return spec, diags
}

// recordResult stores a run's result in m, the output where
// sensitive_output wants it.
func recordResult(m *sandboxCommandModel, res *commandResult) {
	m.ExitCode = types.Int64Value(int64(res.ExitCode))
	m.recordedOutput = outputOf(res, m.SensitiveOutput.ValueBool())
	m.OutputTruncated = types.BoolValue(res.Truncated)
	m.ExecutedAt = types.StringValue(res.ExecutedAt.Format(time.RFC3339))
}
