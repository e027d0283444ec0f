package command

import (
	"github.com/hashicorp/terraform-plugin-framework/types"
)

type fleetCommandModel struct {
	ID         types.String `tfsdk:"id"`
	SandboxIDs types.Map    `tfsdk:"sandbox_ids"`
	Commands   types.List   `tfsdk:"commands"`
	runArguments
	MemberEnv        types.Map    `tfsdk:"member_env"`
	MemberTriggers   types.Map    `tfsdk:"member_triggers"`
	Background       types.Bool   `tfsdk:"background"`
	OutputDir        types.String `tfsdk:"output_dir"`
	EnvWOVersion     types.Int64  `tfsdk:"env_wo_version"`
	Triggers         types.Map    `tfsdk:"triggers"`
	MaxConcurrency   types.Int64  `tfsdk:"max_concurrency"`
	CommandsSHA256   types.String `tfsdk:"commands_sha256"`
	Results          types.Map    `tfsdk:"results"`
	SensitiveStreams types.Map    `tfsdk:"sensitive_streams"`
	ResultPaths      types.Set    `tfsdk:"result_paths"`
	OnMemberFailure  types.String `tfsdk:"on_member_failure"`
	StepOutput       types.String `tfsdk:"step_output"`
	RunningJobs      types.Map    `tfsdk:"running_jobs"`
}

// fleetCommandResult is one entry of results: a member that ran every step
// with an allowed exit code, or a failed one (failed, error).
type fleetCommandResult struct {
	SandboxID  types.String       `tfsdk:"sandbox_id"`
	ExitCode   types.Int64        `tfsdk:"exit_code"`
	Steps      []fleetCommandStep `tfsdk:"steps"`
	ExecutedAt types.String       `tfsdk:"executed_at"`
	RunID      types.String       `tfsdk:"run_id"`
	Failed     types.Bool         `tfsdk:"failed"`
	Error      types.String       `tfsdk:"error"`
	// The run's provenance: started_at, egress_generation, egress_sha256.
	runValues
}

// fleetCommandStep is one step's result, with prime_sandbox_command's
// output attributes. With sensitive_output the output is in the resource's
// one sensitive_streams attribute instead.
type fleetCommandStep struct {
	ExitCode        types.Int64  `tfsdk:"exit_code"`
	Stdout          types.String `tfsdk:"stdout"`
	Stderr          types.String `tfsdk:"stderr"`
	OutputTruncated types.Bool   `tfsdk:"output_truncated"`
}

// fleetStreamsType is an entry of sensitive_streams: one
// prime_sandbox_command sensitive_streams object per step.
func fleetStreamsType() types.ListType { return types.ListType{ElemType: streamsType()} }

// commandMemberRecord is a member's recorded run: its results entry and, per step,
// its sensitive_streams object (null without sensitive_output).
type commandMemberRecord struct {
	Result  fleetCommandResult
	Streams []types.Object
}
