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
	RunID           types.String `tfsdk:"run_id"`
	StartedAt       types.String `tfsdk:"started_at"`
	EgressGen       types.Int64  `tfsdk:"egress_generation"`
	EgressSHA256    types.String `tfsdk:"egress_sha256"`
	CommandSHA256   types.String `tfsdk:"command_sha256"`
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

// recordRun stores which run m's result is (its ID is also the second
// half of m's id).
func recordRun(m *sandboxCommandModel, run runStart) {
	m.ID = types.StringValue(m.SandboxID.ValueString() + "/" + run.RunID)
	m.RunID = types.StringValue(run.RunID)
	v := run.values()
	m.StartedAt, m.EgressGen, m.EgressSHA256 = v.StartedAt, v.EgressGeneration, v.EgressSHA256
}

// runStart is the run m records (nil when it records none).
func (m sandboxCommandModel) runStart() *runStart {
	if m.RunID.IsNull() || m.RunID.IsUnknown() {
		return nil
	}
	r := &runStart{RunID: m.RunID.ValueString()}
	if t, err := time.Parse(time.RFC3339, m.StartedAt.ValueString()); err == nil {
		r.StartedAt = t
	}
	if !m.EgressGen.IsNull() && !m.EgressGen.IsUnknown() {
		r.Egress = &runEgress{Generation: m.EgressGen.ValueInt64(), SHA256: m.EgressSHA256.ValueString()}
	}
	return r
}

// recordOf is the command's run.json.
func (m sandboxCommandModel) recordOf() runRecord {
	rec := runRecord{RunID: m.RunID.ValueString(), SandboxID: m.SandboxID.ValueString(), StartedAt: stringPtr(m.StartedAt),
		EndedAt: stringPtr(m.ExecutedAt), ExitCode: int64Ptr(m.ExitCode), Failed: m.JobStatus.ValueString() == jobFailed,
		CommandSHA256: m.CommandSHA256.ValueString(), EgressGeneration: int64Ptr(m.EgressGen),
		EgressSHA256: stringPtr(m.EgressSHA256), Triggers: knownStrings(m.Triggers)}
	if rec.Triggers == nil {
		rec.Triggers = map[string]string{}
	}
	return rec
}

// recordResult stores a run's result in m, the output where
// sensitive_output wants it.
func recordResult(m *sandboxCommandModel, res *commandResult) {
	m.ExitCode = types.Int64Value(int64(res.ExitCode))
	m.recordedOutput = outputOf(res, m.SensitiveOutput.ValueBool())
	m.OutputTruncated = types.BoolValue(res.Truncated)
	m.ExecutedAt = types.StringValue(res.ExecutedAt.Format(time.RFC3339))
}
