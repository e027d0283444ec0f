package command

// prime_fleet_command: prime_sandbox_command's steps on every member of a
// fleet. Each step of each member goes through runCommand, with the same
// arguments, rules and error texts as the single-sandbox resource.

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/primeintellect/terraform-provider-prime/internal/fleet"
	"github.com/primeintellect/terraform-provider-prime/internal/journal"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

var (
	_ resource.ResourceWithConfigure      = (*fleetCommandResource)(nil)
	_ resource.ResourceWithValidateConfig = (*fleetCommandResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*fleetCommandResource)(nil)
)

// NewFleetResource is the prime_fleet_command constructor.
func NewFleetResource() resource.Resource { return &fleetCommandResource{} }

type fleetCommandResource struct {
	client *prime.Client
	jobs   *journal.Jobs
}

// FleetStepOutput is how much of each step's stdout and stderr is kept:
// the last 4 KiB (a fleet multiplies state by members × steps).
const FleetStepOutput = 4 << 10

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

func (r *fleetCommandResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_fleet_command"
}

func (r *fleetCommandResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = tfkit.ClientFrom(req.ProviderData, &resp.Diagnostics)
	r.jobs = journal.JobsFrom(req.ProviderData)
}

func (r *fleetCommandResource) attributes() map[string]schema.Attribute {
	attrs := commandArgumentAttributes()
	// allowed_exit_codes judges each member's recorded codes (see
	// ModifyPlan) instead of replacing the whole fleet.
	allowed := attrs["allowed_exit_codes"].(schema.SetAttribute)
	allowed.PlanModifiers = nil
	allowed.MarkdownDescription = "Exit codes that count as success, for every step. Default `[0]`. A member stops " +
		"at its first step whose exit code is not allowed. Changing it updates the recorded results in place, " +
		"except on members whose recorded exit codes are no longer allowed: those run all steps again."
	attrs["allowed_exit_codes"] = allowed
	timeout := attrs["timeout_seconds"].(schema.Int64Attribute)
	timeout.MarkdownDescription += " The limit applies to each step on each member."
	attrs["timeout_seconds"] = timeout
	open := attrs["require_open_egress"].(schema.BoolAttribute)
	open.MarkdownDescription += " On a fleet it is checked per member, right before that member's first step."
	attrs["require_open_egress"] = open

	attrs["id"] = schema.StringAttribute{
		Computed: true, MarkdownDescription: "Unique ID of this run of the fleet: a new one every time every member " +
			"runs again (the resource is replaced); kept when only some members run.",
		PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
	}
	attrs["sandbox_ids"] = fleet.SandboxIDsAttribute("Member key → ID of a `RUNNING` sandbox, usually " +
		"`prime_sandbox_fleet.<name>.sandbox_ids` or `{ for i, s in prime_sandbox.box : tostring(i) => s.id }`. " +
		"Changing it updates in place: only members that are new or whose sandbox ID changed run; removed keys drop " +
		"out of `results`.")
	attrs["commands"] = schema.ListAttribute{
		Required: true, ElementType: types.StringType,
		PlanModifiers: []planmodifier.List{listplanmodifier.RequiresReplace()},
		MarkdownDescription: "Steps run in order on each member, each with `/bin/bash -c`. A member stops at its first " +
			"step whose exit code is not in `allowed_exit_codes`; the other members go on. Changing it runs every " +
			"member again (the resource is replaced).",
		Validators: []validator.List{listvalidator.SizeAtLeast(1), listvalidator.ValueStringsAre(stringvalidator.LengthAtLeast(1))},
	}
	env := attrs["env"].(schema.MapAttribute)
	env.MarkdownDescription = "Extra environment variables for every member's steps (a member's `member_env` entry " +
		"wins over it). Every member also gets `" + memberKeyEnv + "`, its key, so one command can run a different " +
		"task per member. Stored in state and shown in plans: not for secrets, use `env_wo`." + rerun
	attrs["env"] = env
	attrs["member_env"] = schema.MapAttribute{
		Optional: true, ElementType: types.MapType{ElemType: types.StringType},
		MarkdownDescription: "Per-member environment: member key → variables for that member's steps, merged over " +
			"`env` — the task of an evaluation whose members run different tasks (say `{ for k, t in var.tasks : k => " +
			"{ TASK_ID = t.id } }`). Changing one member's entry runs only that member again (an in-place update); the " +
			"other members keep their results. Stored in state and shown in plans: not for secrets.",
	}
	attrs["member_triggers"] = schema.MapAttribute{
		Optional: true, ElementType: types.StringType,
		MarkdownDescription: "Per-member re-run switch: member key → any value; a member whose value changes runs all " +
			"steps again, alone (an in-place update). Give it what a member's run depends on, for example its task's " +
			"fingerprint: `{ for k, f in prime_fleet_file.task.files : k => f.sha256 }`.",
	}
	attrs["max_concurrency"] = schema.Int64Attribute{
		Optional: true, Computed: true, Default: int64default.StaticInt64(fleet.DefaultConcurrency),
		MarkdownDescription: fmt.Sprintf("How many members run at once. Default `%d`. Each running member holds a "+
			"gateway command stream, which the provider's request pacing does not limit. With `background`, every "+
			"member's job runs at the same time, and this bounds only the members starting or collecting a job at "+
			"once (a waiting job holds nothing but its place in the shared poll). Changing it updates in place; "+
			"nothing runs again.", fleet.DefaultConcurrency),
		Validators: []validator.Int64{int64validator.AtLeast(1)},
	}
	outputDoc := func(what, when string) string {
		return fmt.Sprintf("%s of the step, as `step_output` says: its last line (default), its last %d KiB, or null. %s",
			what, FleetStepOutput>>10, when)
	}
	attrs["results"] = schema.MapNestedAttribute{
		Computed: true,
		MarkdownDescription: "Member key → the member's result. A member whose every step exited with an allowed code " +
			"has `failed = false`; a member that failed (a step's exit code not allowed, a timeout, a lost sandbox or " +
			"job) has `failed = true` and `error`, and the next apply runs it again (the plan shows its entry as known " +
			"after apply). A member planned to run shows as unknown until the apply. Members whose outcome an " +
			"interrupted apply left open are not in it (see `running_jobs`). Read the members that succeeded " +
			"with `{ for k, r in prime_fleet_command.<name>.results : k => r.sandbox_id if !r.failed }`.",
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"sandbox_id": schema.StringAttribute{Computed: true, MarkdownDescription: "Sandbox the steps ran in."},
			"exit_code": schema.Int64Attribute{Computed: true, MarkdownDescription: "Exit code of the last step that ran " +
				"(of the failed step, when it exited); null when the failed step has none (a timeout, a lost sandbox)."},
			"executed_at": schema.StringAttribute{Computed: true,
				MarkdownDescription: "When the member's last step finished, or it failed (RFC 3339)."},
			"run_id": schema.StringAttribute{Computed: true,
				MarkdownDescription: "Unique ID of the member's run: a new one every time the member runs again. Give it " +
					"to `prime_fleet_artifact`'s `member_triggers` so a member's result is downloaded again exactly when " +
					"it ran again."},
			"failed": schema.BoolAttribute{Computed: true,
				MarkdownDescription: "Whether the member failed. Only ever `true` with `on_member_failure = \"record\"`, or " +
					"after an update whose apply failed: the next apply runs the member again."},
			"error": schema.StringAttribute{Computed: true,
				MarkdownDescription: fmt.Sprintf("Why the member failed, on one line of at most %d bytes (the step, what "+
					"happened, the exit code; not its output): the apply's diagnostic has the whole text. Null when it "+
					"succeeded.", maxMemberError)},
			"steps": schema.ListNestedAttribute{
				Computed: true, MarkdownDescription: "One entry per step, in order.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"exit_code": schema.Int64Attribute{Computed: true, MarkdownDescription: "Exit code of the step."},
					"stdout": schema.StringAttribute{Computed: true,
						MarkdownDescription: outputDoc("Standard output", "Null when `sensitive_output` is set (see `sensitive_streams`).")},
					"stderr": schema.StringAttribute{Computed: true,
						MarkdownDescription: outputDoc("Standard error", "Null when `sensitive_output` is set (see `sensitive_streams`).")},
					"output_truncated": schema.BoolAttribute{Computed: true,
						MarkdownDescription: "Whether anything of stdout or stderr was left out (see `step_output`)."},
				}},
			},
		}},
	}
	// One sensitive attribute for the whole fleet, not one per step: see
	// sensitiveStreamsAttribute and NewProtocol6Server.
	attrs["sensitive_streams"] = schema.MapAttribute{
		Computed: true, Sensitive: true, ElementType: fleetStreamsType(),
		MarkdownDescription: "The output when `sensitive_output` is set: member key → one object per step with " +
			"`stdout` and `stderr` (cut as `step_output` says), hidden in plans and CLI output (read it with " +
			"`nonsensitive()` or `terraform output`). Null otherwise.",
	}
	attrs["on_member_failure"] = schema.StringAttribute{
		Optional: true, Computed: true, Default: stringdefault.StaticString(onFailureFail),
		MarkdownDescription: "What a failed member does: a crash (a step's exit code not allowed), a timeout, a lost " +
			"sandbox, a background job lost or killed. `\"fail\"` (default): the apply fails with one error " +
			"naming every failed member; on create nothing is stored, on an update the others' results are stored " +
			"and the failures recorded. `\"record\"`: the failure is recorded as the member's result (`failed = " +
			"true`, `error`, `exit_code` when there is one), the other members' results are stored, and the apply " +
			"goes on with one warning naming the failed members, so the data sources and artifacts that read " +
			"the members that succeeded (`{ for k, r in results : k => r.sandbox_id if !r.failed }`) proceed in the same " +
			"apply. Either way the next apply runs the failed members " +
			"again, and only them. Changing it updates in place; nothing runs again.",
		Validators: []validator.String{stringvalidator.OneOf(onFailureFail, onFailureRecord)},
	}
	attrs["step_output"] = schema.StringAttribute{
		Optional: true, Computed: true, Default: stringdefault.StaticString(stepOutputLastLine),
		MarkdownDescription: fmt.Sprintf("How much of each step's stdout and stderr `results` keeps. `\"last_line\"` "+
			"(default): the last line that is not blank, without its newline, at most %d bytes (its end). "+
			"`\"tail\"`: the last %d KiB. `\"none\"`: nothing (null). A plan that runs members again shows every "+
			"such member's recorded output as removed, so with `\"tail\"` a re-run of N members prints N output "+
			"tails; the default keeps it to a line per stream. `output_dir` (with `background`) keeps the whole "+
			"output on local disk whatever this says. Changing it updates in place and cuts the recorded output "+
			"(nothing runs again; an output already cut does not grow back).", lastLineBytes, FleetStepOutput>>10),
		Validators: []validator.String{stringvalidator.OneOf(stepOutputLastLine, stepOutputTail, stepOutputNone)},
	}
	attrs["running_jobs"] = schema.MapNestedAttribute{
		Computed: true,
		MarkdownDescription: "With `background`: member key → the job an interrupted apply (Ctrl-C) left running, or " +
			"whose outcome could not be read, with `sandbox_id`, `step` (1-based) and `job_id`. The next apply attaches " +
			"to these jobs and collects their results without running anything again; destroying the resource stops " +
			"them. Null when there are none.",
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"sandbox_id": schema.StringAttribute{Computed: true, MarkdownDescription: "Sandbox the job runs in."},
			"step":       schema.Int64Attribute{Computed: true, MarkdownDescription: "The step the job runs (1-based)."},
			"job_id":     schema.StringAttribute{Computed: true, MarkdownDescription: "The job's ID (8 hex characters)."},
		}},
	}
	return attrs
}

func (r *fleetCommandResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Runs the same steps on every member of a fleet — setup, or the agent — as one node in " +
			"the dependency graph. Each step on each member runs exactly as `prime_sandbox_command` runs a command " +
			"(same arguments, same transport, never retried once it may have reached the sandbox). Members run at " +
			"once, up to `max_concurrency`; steps run in order on each member, and a member stops at its first " +
			"step with a disallowed exit code.\n\n" +
			"A failed member (a disallowed exit code, a timeout, a lost sandbox or job) is named, with its key, " +
			"sandbox, step, exit code and the end of the output (not shown with `sensitive_output`), in one " +
			"diagnostic for every failed member. With `on_member_failure = \"fail\"` (default) it is an error: on " +
			"create nothing is stored, so the next apply runs every member again; on an update the others' results " +
			"are stored and each failure is recorded in `results` (`failed = true`, `error`). With `\"record\"` " +
			"it is a warning: the results and failures are stored and the apply goes on, so what reads the members " +
			"that succeeded (`{ for k, r in results : k => r.sandbox_id if !r.failed }`) proceeds. Either way the " +
			"next plan shows exactly the failed members as planned to run again, and the next apply runs only them. " +
			"An update also runs members that are new or whose sandbox ID changed (and members whose recorded exit " +
			"codes `allowed_exit_codes` no longer accepts).\n\n" +
			"`result_paths` removes a run's result paths right before it, so a data source or artifact never reads " +
			"an earlier run's result. `results` keeps each step's last output line (`step_output`), so a plan that " +
			"runs many members again stays short; `output_dir` keeps the whole output, and a `progress.json`.\n\n" +
			"Results are history: refresh and destroy make no API call, and import is not supported. Arguments that " +
			"only judge or record the results (`allowed_exit_codes`, `timeout_seconds`, `require_open_egress`, " +
			"`sensitive_output`, `max_concurrency`, `on_member_failure`, `step_output`, `result_paths`) update in place.\n\n" + secretChannelsDoc,
		Attributes: r.attributes(),
	}
}

func (r *fleetCommandResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m fleetCommandModel
	resp.Diagnostics.Append(tfkit.GetConfig(ctx, req.Config, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	validateCommandEnv(ctx, m.Env, m.EnvWO, m.EnvWOVersion, &resp.Diagnostics)
	validateMemberEnv(ctx, m, &resp.Diagnostics)
}

// memberKeyEnv is the variable that carries a member's key into its
// steps.
const memberKeyEnv = "PRIME_MEMBER_KEY"

// validateMemberEnv checks member_env's names, that no variable names the
// member key's variable, that env_wo does not name a member variable, and
// that every entry is a member.
func validateMemberEnv(ctx context.Context, m fleetCommandModel, diags *diag.Diagnostics) {
	env, _ := tfkit.StringMap(ctx, m.Env)
	if _, set := env[memberKeyEnv]; set {
		diags.AddAttributeError(path.Root("env"), "Invalid command configuration",
			fmt.Sprintf("env: %s is set by the provider to each member's key", memberKeyEnv))
	}
	secret, _ := tfkit.StringMap(ctx, m.EnvWO)
	if _, set := secret[memberKeyEnv]; set {
		diags.AddAttributeError(path.Root("env_wo"), "Invalid command configuration",
			fmt.Sprintf("env_wo: %s is set by the provider to each member's key", memberKeyEnv))
	}
	if m.MemberEnv.IsNull() || m.MemberEnv.IsUnknown() {
		return
	}
	for _, key := range tfkit.SortedKeys(m.MemberEnv.Elements()) {
		vars, ok := m.MemberEnv.Elements()[key].(types.Map)
		if !ok || vars.IsUnknown() {
			continue
		}
		at := path.Root("member_env").AtMapKey(key)
		for _, name := range tfkit.SortedKeys(vars.Elements()) {
			switch {
			case !prime.ValidEnvName(name):
				diags.AddAttributeError(at, "Invalid command configuration",
					fmt.Sprintf("member_env[%q]: %q is not a valid variable name (letters, digits and _, not starting with a digit)", key, name))
			case name == memberKeyEnv:
				diags.AddAttributeError(at, "Invalid command configuration",
					fmt.Sprintf("member_env[%q]: %s is set by the provider to the member's key", key, memberKeyEnv))
			default:
				if _, dup := secret[name]; dup {
					diags.AddAttributeError(at, "Invalid command configuration",
						fmt.Sprintf("member_env[%q]: %q is also set in env_wo; set each variable in one of them", key, name))
				}
			}
		}
	}
	if strays := fleet.StrayKeys(m.MemberEnv, m.SandboxIDs); len(strays) > 0 {
		diags.AddAttributeError(path.Root("member_env"), "Invalid command configuration",
			fmt.Sprintf("member_env: %s %s not a key of sandbox_ids", tfkit.QuoteKeys(strays), tfkit.PluralVerb(len(strays), "is", "are")))
	}
}

// memberEnvOf is member key's entry of member_env: null when it has none,
// unknown when it is not known yet.
func memberEnvOf(m fleetCommandModel, key string) types.Map {
	if m.MemberEnv.IsUnknown() {
		return types.MapUnknown(types.StringType)
	}
	if m.MemberEnv.IsNull() {
		return types.MapNull(types.StringType)
	}
	if v, ok := m.MemberEnv.Elements()[key].(types.Map); ok {
		return v
	}
	return types.MapNull(types.StringType)
}

// sameMemberInputs: a member's per-member inputs (member_env and
// member_triggers entries) are unchanged, so its recorded result stands.
func sameMemberInputs(plan, state fleetCommandModel, key string) bool {
	pt := fleet.TriggerOf(plan.MemberTriggers, key)
	return sameMemberEnv(memberEnvOf(plan, key), memberEnvOf(state, key)) && !pt.IsUnknown() && pt.Equal(fleet.TriggerOf(state.MemberTriggers, key))
}

// sameMemberEnv: a member's variables are unchanged (an empty entry and
// none are the same).
func sameMemberEnv(a, b types.Map) bool {
	if a.IsUnknown() || b.IsUnknown() {
		return false
	}
	return len(a.Elements()) == 0 && len(b.Elements()) == 0 || a.Equal(b)
}

// ModifyPlan plans results: every member's entry is unknown when it will
// run, else its recorded result with the output where sensitive_output
// wants it.
func (r *fleetCommandResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	var held fleetCommandModel
	if !req.State.Raw.IsNull() && !tfkit.GetState(ctx, req.State, &held).HasError() && held.Background.ValueBool() {
		// Terraform holds these members' results: their journal entries go.
		r.jobs.Forget(recordedStepHashes(ctx, held)...)
	}
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan fleetCommandModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var prior map[string]commandMemberRecord
	priorSensitive := false
	var state fleetCommandModel
	if !req.State.Raw.IsNull() {
		resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
		prior = commandMemberRecordsOf(state, &resp.Diagnostics)
		priorSensitive = state.SensitiveOutput.ValueBool()
	}
	if resp.Diagnostics.HasError() {
		return
	}
	plan.Results = types.MapUnknown(fleetCommandResultType())
	plan.SensitiveStreams = types.MapUnknown(fleetStreamsType())
	if !plan.SensitiveOutput.IsUnknown() && !plan.SensitiveOutput.ValueBool() {
		plan.SensitiveStreams = types.MapNull(fleetStreamsType())
	}
	// Jobs may be left running by a run in the background (or by members an
	// interrupted apply left mid-way, which run in the background again).
	mayLeaveJobs := plan.Background.IsUnknown() || plan.Background.ValueBool() || len(state.RunningJobs.Elements()) > 0
	plan.RunningJobs = types.MapNull(fleetCommandJobType())
	if mayLeaveJobs {
		plan.RunningJobs = types.MapUnknown(fleetCommandJobType())
	}
	// A background create may be interrupted with some members still
	// running: they are then absent from results, so its keys are not
	// promised (an update says why it is interrupted instead).
	backgroundCreate := req.State.Raw.IsNull() && (plan.Background.IsUnknown() || plan.Background.ValueBool())
	if !plan.SandboxIDs.IsUnknown() && !backgroundCreate {
		// Unknown judging arguments: every entry may change at apply.
		undecided := plan.AllowedExitCodes.IsUnknown() || plan.SensitiveOutput.IsUnknown()
		var allowed []int64
		if !undecided {
			resp.Diagnostics.Append(plan.AllowedExitCodes.ElementsAs(ctx, &allowed, false)...)
		}
		planned := map[string]*commandMemberRecord{}
		runs := map[string]string{} // members that will run, with known sandbox IDs
		for key, v := range plan.SandboxIDs.Elements() {
			id, _ := v.(types.String)
			p, had := prior[key]
			if undecided || id.IsUnknown() || !had || !keepFleetResult(p.Result, id.ValueString(), allowed) ||
				!sameMemberInputs(plan, state, key) {
				planned[key] = nil
				if !id.IsUnknown() && !id.IsNull() {
					runs[key] = id.ValueString()
				}
				continue
			}
			moved := movedRecord(p, priorSensitive, plan.SensitiveOutput.ValueBool(), stepOutputOf(plan))
			planned[key] = &moved
		}
		r.setRecords(ctx, &plan, planned, &resp.Diagnostics)
		if len(runs) == 0 && !slices.Contains(slices.Collect(maps.Values(planned)), nil) {
			plan.RunningJobs = types.MapNull(fleetCommandJobType()) // nothing runs
		}
		if !plan.TimeoutSeconds.IsUnknown() {
			warnCommandsOutliveSandboxes(ctx, r.client, runs, time.Duration(plan.TimeoutSeconds.ValueInt64())*time.Second,
				&resp.Diagnostics)
		}
	}
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(tfkit.SetPlan(ctx, &resp.Plan, &plan)...)
}

// fleetRun is what Create and Update run: the arguments every member shares.
type fleetRun struct {
	base      commandSpec // without SandboxID and Command
	commands  []string
	limit     int
	memberEnv map[string]map[string]string
	// progress, when set, hears of every member's output and finished
	// steps (prime_fleet_exec shows them; see fleetRunProgress).
	progress *fleetRunProgress
	// reporter counts the members by state (INFO log lines, and the
	// progress file in output_dir); runMembers sets it.
	reporter *progressReporter
}

// progressFileOf is where a fleet command keeps its progress file:
// output_dir/progress.json ("" without output_dir).
func progressFileOf(outputDir types.String) string {
	if outputDir.IsNull() || outputDir.IsUnknown() || outputDir.ValueString() == "" {
		return ""
	}
	return filepath.Join(outputDir.ValueString(), ProgressFileName)
}

// memberSpec is the base spec with member key's environment: env, then
// its member_env entry, then its key.
func (run fleetRun) memberSpec(key string) commandSpec {
	spec := run.base
	spec.Env = make(map[string]string, len(run.base.Env)+len(run.memberEnv[key])+1)
	maps.Copy(spec.Env, run.base.Env)
	maps.Copy(spec.Env, run.memberEnv[key])
	spec.Env[memberKeyEnv] = key
	spec.OnOutput = run.memberOutput(key)
	spec.learned = &learnedSecrets{} // the sandbox's secrets are read once for all steps
	return spec
}

// fleetRunOf reads the plan (and env_wo from the configuration) into the
// specs runCommand takes, through prime_sandbox_command's reader.
func fleetRunOf(ctx context.Context, plan fleetCommandModel, envWO types.Map, diags *diag.Diagnostics) fleetRun {
	base, d := specOf(ctx, plan.runArguments, envWO) // no AfterFailure: the fleet's one error says what was stored
	diags.Append(d...)
	base.Background = plan.Background.ValueBool()
	base.ResultPaths = resultPathsOf(ctx, plan.ResultPaths, diags)
	commands, d := tfkit.StringList(ctx, plan.Commands)
	diags.Append(d...)
	run := fleetRun{base: base, commands: commands, limit: int(plan.MaxConcurrency.ValueInt64()), memberEnv: map[string]map[string]string{}}
	if !plan.MemberEnv.IsNull() && !plan.MemberEnv.IsUnknown() {
		for key, v := range plan.MemberEnv.Elements() {
			vars, ok := v.(types.Map)
			if !ok {
				continue
			}
			m, d := tfkit.StringMap(ctx, vars)
			diags.Append(d...)
			run.memberEnv[key] = m
		}
	}
	return run
}

// runMembers runs the steps on the members in ids (key → sandbox ID),
// members concurrently (at most run.limit), each member's steps in order —
// through runCommand, or as background jobs resuming from progress —
// stopping a member at its first failed step. Members that succeeded are in
// the result's done, failed members in its failed (and in problems, with
// the whole story); members left mid-way are in its pending (and in
// problems when their outcome is unknown rather than interrupted).
func (r *fleetCommandResource) runMembers(ctx context.Context, plan fleetCommandModel, run fleetRun, ids map[string]string,
	progress map[string]memberProgress, problems *fleet.Problems) *fleetRunResult {
	var mu sync.Mutex
	lock := func() func() { mu.Lock(); return mu.Unlock }
	fr := &fleetRunResult{done: map[string]*commandMemberRecord{}, failed: map[string]*commandMemberRecord{},
		pending: map[string]memberProgress{}, entries: map[string][]*journal.JobEntry{}}
	tflog.Info(ctx, "running fleet command", map[string]any{
		"members": len(ids), "steps": len(run.commands), "max_concurrency": run.limit, "timeout": run.base.Timeout.String(),
		"background": run.base.Background,
	})
	// In the background every member's job runs at once; max_concurrency
	// bounds the members talking to the gateway (starting, collecting).
	limit, slots := run.limit, chan struct{}(nil)
	if run.base.Background {
		limit, slots = 0, make(chan struct{}, max(run.limit, 1))
	}
	mode := stepOutputOf(plan)
	run.reporter = newProgressReporter(ctx, progressOptions{What: "prime_fleet_command", Keys: tfkit.SortedKeys(ids),
		States: commandProgressStates, File: progressFileOf(plan.OutputDir)})
	defer func() {
		if err := run.reporter.stop(); err != nil {
			fr.warnings = append(fr.warnings, err.Error())
		}
	}()
	fleet.ForEachMember(ctx, tfkit.SortedKeys(ids), limit, func(ctx context.Context, key string) {
		id := ids[key]
		run.reporter.update(key, func(m *memberProgressState) {
			m.State, m.SandboxID, m.Steps = ProgressRunning, id, len(run.commands)
		})
		var out memberOutcome
		if run.base.Background {
			var prog *memberProgress
			if p, ok := progress[key]; ok {
				prog = &p
			}
			out = r.runMemberInBackground(ctx, plan, run, key, id, prog, slots, fr, lock)
		} else {
			out = r.runMemberInForeground(ctx, run, key, id)
		}
		if out.err != nil {
			problems.Add(key, "sandbox %s, step %d of %d: %s. %s", id, out.step+1, len(run.commands), commandErrorSummary(out.err), out.err)
		}
		if out.pending {
			run.reporter.set(key, ProgressLeft)
			return
		}
		rec := memberRecord(id, out, len(run.commands), run.base.SensitiveOutput, mode)
		run.reporter.update(key, func(m *memberProgressState) {
			m.State, m.Error = ProgressSucceeded, rec.Result.Error.ValueString()
			if out.err != nil {
				m.State = ProgressFailed
			}
		})
		defer lock()()
		if out.err != nil {
			fr.failed[key] = rec
		} else {
			fr.done[key] = rec
		}
	})
	return fr
}

// runMemberInForeground runs one member's steps through runCommand,
// stopping at the first that fails.
func (r *fleetCommandResource) runMemberInForeground(ctx context.Context, run fleetRun, key, id string) memberOutcome {
	var out memberOutcome
	memberSpec := run.memberSpec(key)
	for i, command := range run.commands {
		spec := memberSpec
		spec.SandboxID, spec.Command = id, command
		spec.RequireOpenEgress = run.base.RequireOpenEgress && i == 0
		if i > 0 {
			spec.ResultPaths = nil // removed before the member's first step only
		}
		run.reporter.update(key, func(m *memberProgressState) { m.Step = i + 1 })
		res, err := runCommand(ctx, r.client, spec)
		run.stepDone(key, id, i, res, err)
		if res != nil {
			out.results = append(out.results, res)
		}
		if err != nil {
			out.err, out.step = err, i
			return out
		}
	}
	return out
}

func (r *fleetCommandResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var plan fleetCommandModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	var envWO types.Map
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("env_wo"), &envWO)...)
	if resp.Diagnostics.HasError() {
		return
	}
	run := fleetRunOf(ctx, plan, envWO, &resp.Diagnostics)
	ids := tfkit.StringMapOf(ctx, plan.SandboxIDs, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	var problems fleet.Problems
	fr := r.runMembers(ctx, plan, run, ids, nil, &problems)
	addWarnings(&resp.Diagnostics, "Background job", fr.warnings)
	failure := fleetCommandFailure{problems: &problems, tried: len(ids), recorded: len(fr.failed), succeeded: len(fr.done),
		pending: fr.unknownOutcomes(&problems), journaled: run.base.Background}
	if problems.Len() > 0 && onFailureOf(plan) != onFailureRecord {
		// Nothing is stored: the next apply runs every member again —
		// except, on this machine, background steps that finished, whose
		// outcomes the job journal keeps.
		fr.settle(false)
		failure.add(&resp.Diagnostics, false)
		return
	}
	plan.ID = types.StringValue(prime.NewIdempotencyKey()[:16])
	plan.EnvWO = types.MapNull(types.StringType)
	records := maps.Clone(fr.done)
	maps.Copy(records, fr.failed)
	r.setRecords(ctx, &plan, records, &resp.Diagnostics)
	r.recordPending(ctx, &plan, fr, resp.Private, &resp.Diagnostics)
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &plan)...)
	fr.settle(!resp.Diagnostics.HasError())
	if problems.Len() > 0 {
		// on_member_failure = "record": a background create promised no
		// results keys, so members whose outcome is unknown may be absent.
		failure.stored = true
		failure.add(&resp.Diagnostics, true)
	}
}

func addWarnings(diags *diag.Diagnostics, summary string, ws []string) {
	if len(ws) > 0 {
		diags.AddWarning(summary, strings.Join(ws, "\n\n"))
	}
}

// recordPending keeps the members left mid-way (an interrupted apply, a job
// whose outcome could not be read) in private state, with their steps'
// results, and in running_jobs, and says so when an interrupt left them.
func (r *fleetCommandResource) recordPending(ctx context.Context, m *fleetCommandModel, fr *fleetRunResult, priv tfkit.PrivateSetter, diags *diag.Diagnostics) {
	diags.Append(priv.SetKey(ctx, pendingMembersKey, encodeProgress(fr.pending))...)
	m.RunningJobs = fleetCommandJobsValue(fr.pending)
	if len(fr.pending) == 0 || !fr.interrupted {
		return
	}
	var b strings.Builder
	for _, k := range tfkit.SortedKeys(fr.pending) {
		p := fr.pending[k]
		fmt.Fprintf(&b, "\n  %q: step %d, job %s in sandbox %s", k, p.Step+1, p.Job.JobID, p.SandboxID)
	}
	diags.AddWarning("Background jobs left running",
		"The apply was interrupted while these members' jobs ran. The jobs go on; they are recorded in running_jobs, and "+
			"the next apply attaches to them and collects their results without running anything again:"+b.String())
}

// Read touches no API: the results are history.
func (r *fleetCommandResource) Read(_ context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	resp.State.Raw = req.State.Raw
}

// Update runs the members ModifyPlan planned to run (new, moved to another
// sandbox, failed before, or with recorded exit codes no longer allowed)
// and keeps the others' results. Failed members are recorded as failed.
func (r *fleetCommandResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state fleetCommandModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	var envWO types.Map
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("env_wo"), &envWO)...)
	if resp.Diagnostics.HasError() {
		return
	}
	run := fleetRunOf(ctx, plan, envWO, &resp.Diagnostics)
	ids := tfkit.StringMapOf(ctx, plan.SandboxIDs, &resp.Diagnostics)
	prior := commandMemberRecordsOf(state, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	records := map[string]*commandMemberRecord{}
	toRun := map[string]string{}
	for key, id := range ids {
		if p, had := prior[key]; had && keepFleetResult(p.Result, id, run.base.Allowed) &&
			sameMemberInputs(plan, state, key) {
			moved := movedRecord(p, state.SensitiveOutput.ValueBool(), run.base.SensitiveOutput, stepOutputOf(plan))
			records[key] = &moved
		} else {
			toRun[key] = id
		}
	}
	var problems fleet.Problems
	fr := &fleetRunResult{}
	if len(toRun) > 0 {
		if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
			return
		}
		if progress := progressOf(ctx, req.Private); len(progress) > 0 {
			run.base.Background = true // members left mid-way run in the background, whatever the argument says now
			fr = r.runMembers(ctx, plan, run, toRun, progress, &problems)
		} else {
			fr = r.runMembers(ctx, plan, run, toRun, nil, &problems)
		}
		maps.Copy(records, fr.done)
		maps.Copy(records, fr.failed)
		addWarnings(&resp.Diagnostics, "Background job", fr.warnings)
	}
	plan.EnvWO = types.MapNull(types.StringType)
	r.setRecords(ctx, &plan, records, &resp.Diagnostics)
	r.recordPending(ctx, &plan, fr, resp.Private, &resp.Diagnostics)
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &plan)...)
	fr.settle(!resp.Diagnostics.HasError())
	if fr.interrupted {
		resp.Diagnostics.AddError("Apply interrupted", "The apply was interrupted while background jobs ran (see the warning "+
			"above). They are recorded in running_jobs; the next apply collects them.")
	}
	if problems.Len() > 0 {
		succeeded := 0
		for _, rec := range records {
			if !rec.Result.Failed.ValueBool() {
				succeeded++
			}
		}
		unknown := fr.unknownOutcomes(&problems)
		// A member whose outcome is unknown is absent from results, whose
		// keys the plan promised: that is an error even with "record".
		fleetCommandFailure{problems: &problems, tried: len(toRun), stored: true, recorded: len(fr.failed),
			succeeded: succeeded, pending: unknown}.add(&resp.Diagnostics, onFailureOf(plan) == onFailureRecord && unknown == 0)
	}
}

// Delete touches no API, except for members an interrupted apply left
// running: their jobs are stopped (SIGTERM, then SIGKILL), so they cannot
// go on after their egress lock is lifted.
func (r *fleetCommandResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	progress := progressOf(ctx, req.Private)
	if len(progress) == 0 {
		return
	}
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	stopPendingMembers(ctx, r.client, r.jobs, progress, &resp.Diagnostics)
}
