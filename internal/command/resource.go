package command

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/setdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/setplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/primeintellect/terraform-provider-prime/internal/files"
	"github.com/primeintellect/terraform-provider-prime/internal/fleet"
	"github.com/primeintellect/terraform-provider-prime/internal/journal"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

var (
	_ resource.ResourceWithConfigure      = (*sandboxCommandResource)(nil)
	_ resource.ResourceWithValidateConfig = (*sandboxCommandResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*sandboxCommandResource)(nil)
)

// NewResource is the prime_sandbox_command constructor.
func NewResource() resource.Resource { return &sandboxCommandResource{} }

type sandboxCommandResource struct {
	client *prime.Client
	jobs   *journal.Jobs
}

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

func (r *sandboxCommandResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_sandbox_command"
}

func (r *sandboxCommandResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = tfkit.ClientFrom(req.ProviderData, &resp.Diagnostics)
	r.jobs = journal.JobsFrom(req.ProviderData)
}

// Description endings: what a change does.
const (
	rerun       = " Changing it runs the command again (the resource is replaced)."
	resultsOnly = " Changing it updates the recorded result in place; the command does not run again."
)

// Secret channels, explained once for both command resources.
const secretChannelsDoc = "Secret channels: `env_wo` reaches only this command's process and is never stored; the " +
	"sandbox's own `secrets`/`secrets_wo` are in the environment of every command, the agent's included. Put " +
	"setup-only credentials in `env_wo` (but note that whatever the setup writes to disk stays readable by " +
	"later commands). A value of either that a command prints is replaced by `***` in everything the provider " +
	"records or shows — state (and so plans), `output_dir`, errors, progress and logs, foreground and background " +
	"(values of 4 bytes or more). The sandbox's secret values are never sent to the provider by the platform: when " +
	"the sandbox has secrets, the provider reads their values inside it with one command (`printenv`) before each " +
	"run, and keeps them only in memory, to mask them."

// maxCommandTimeout is the longest timeout_seconds: a week, for agents
// that run in the background for hours.
const maxCommandTimeout = 7 * 24 * 3600

// commandArgumentAttributes are the arguments prime_sandbox_command and
// prime_fleet_command share, with the same meaning and plan behaviour.
func commandArgumentAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"working_dir": schema.StringAttribute{
			Optional: true, PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			MarkdownDescription: "Directory to run in. Unset, the sandbox's default." + rerun,
		},
		"env": schema.MapAttribute{
			Optional: true, ElementType: types.StringType,
			PlanModifiers: []planmodifier.Map{mapplanmodifier.RequiresReplace()},
			MarkdownDescription: "Extra environment variables for the command. Stored in state and shown in plans: " +
				"not for secrets, use `env_wo`." + rerun,
		},
		"env_wo": schema.MapAttribute{
			Optional: true, WriteOnly: true, ElementType: types.StringType,
			MarkdownDescription: "Secret environment variables for the command, write-only: passed to the command, " +
				"never stored in state or plan and never logged (Terraform 1.11+); a value the command prints is " +
				"replaced by `***` in the recorded output, `output_dir` and errors (values of 4 bytes or more), as the " +
				"sandbox's own secrets are. Terraform cannot see a change of " +
				"a write-only value: bump `env_wo_version` to run the command again with new values. " + secretChannelsDoc,
		},
		"env_wo_version": schema.Int64Attribute{
			Optional:      true,
			PlanModifiers: []planmodifier.Int64{int64planmodifier.RequiresReplace()},
			MarkdownDescription: "Any number you change whenever `env_wo` changes, so that the command runs again " +
				"with the new values." + rerun,
		},
		"timeout_seconds": schema.Int64Attribute{
			Optional: true, Computed: true, Default: int64default.StaticInt64(defaultCommandTimeout),
			MarkdownDescription: fmt.Sprintf("How long the command may run, in seconds. Default `%d`. On a timeout (or "+
				"an interrupted apply) the command is stopped (SIGTERM, then SIGKILL), so a timed-out setup step is "+
				"not left running while egress gets locked. The plan warns when it exceeds the sandbox's lifetime "+
				"(`timeout_minutes`).", defaultCommandTimeout) + resultsOnly,
			Validators: []validator.Int64{int64validator.Between(1, maxCommandTimeout)},
		},
		"triggers": schema.MapAttribute{
			Optional: true, ElementType: types.StringType,
			PlanModifiers: []planmodifier.Map{mapplanmodifier.RequiresReplace()},
			MarkdownDescription: "Arbitrary values; changing any of them runs the command again — the re-run switch " +
				"(for example a hash of a setup script, or `prime_egress_policy.lock.id` so an agent runs again after " +
				"every re-lock)." + rerun,
		},
		"allowed_exit_codes": schema.SetAttribute{
			Optional: true, Computed: true, ElementType: types.Int64Type,
			Default: setdefault.StaticValue(types.SetValueMust(types.Int64Type, []attr.Value{types.Int64Value(0)})),
			PlanModifiers: []planmodifier.Set{setplanmodifier.RequiresReplaceIf(recordedExitCodeDisallowed,
				"Replaced when the recorded exit code is no longer allowed.", "Replaced when the recorded exit code is no longer allowed.")},
			MarkdownDescription: "Exit codes that count as success. Default `[0]`. An agent probe that may " +
				"legitimately fail can allow, say, `[0, 7]` and read `exit_code`. Changing it updates the recorded " +
				"result in place, unless the recorded exit code is no longer allowed: then the command runs again.",
			Validators: []validator.Set{setvalidator.SizeAtLeast(1), setvalidator.ValueInt64sAre(int64validator.Between(0, 255))},
		},
		"require_open_egress": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			MarkdownDescription: "Refuse to run unless the sandbox's egress is open: right before running, the " +
				"provider reads the platform's policy, and if it is restricted (or a restriction is accepted but not " +
				"yet enforced) the apply fails naming the policy generation, and the command never reaches the " +
				"sandbox. A restore of open egress that a policy's destroy wrote earlier in the same apply is waited " +
				"for first, until that policy's `timeouts.delete` (from the write). Set it on setup steps, so a changed " +
				"step can never run silently under the agent's lock; " +
				"pair it with `after` on the `prime_egress_policy`. Default `false`." + resultsOnly,
		},
		"background": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			MarkdownDescription: "Run the command as a background job in the sandbox instead of over one held gateway " +
				"call: the Prime SDK's `start_background_job` (the `nohup sh -c` wrapper, 8-hex job IDs and the canonical " +
				"`/tmp/job_<id>.{stdout.log,stderr.log,exit}` files, so the platform and the SDK see the job too), polled " +
				"through the platform's batched job-status endpoint until it exits or `timeout_seconds` runs out. Use it for " +
				"agents and anything longer than a few minutes. A job lives in the sandbox, not in the connection: a broken poll, a gateway error, an " +
				"expired token never start it again, and an apply that was interrupted (Ctrl-C) or killed leaves it " +
				"running; the next apply attaches to it and collects its result (the job ID is in state after an " +
				"interrupt, and in a local journal beside the create journal after a kill). The command runs again only " +
				"when the job is proven gone (its sandbox replaced, or its files missing). A job past `timeout_seconds`, " +
				"and a running job whose resource is destroyed, is stopped (SIGTERM to its process group, then SIGKILL): " +
				"for that the provider's wrapper adds, beyond the SDK's, `setsid` and a `/tmp/job_<id>.pgid` file. The " +
				"result, `allowed_exit_codes`, output tails and failure messages are those of a foreground command. " +
				"Default `false`." + resultsOnly,
		},
		"output_dir": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "With `background`: a local directory that receives the whole stdout and stderr of every " +
				"run, as `<job_id>.stdout.log` and `<job_id>.stderr.log` (for a fleet, under a directory per member key), " +
				"downloaded when the job ends, with `env_wo` values and the sandbox's secrets replaced by `***`; state " +
				"keeps the tails and the files' hashes (`output_files`). The directory also holds `progress.json`, " +
				"rewritten (atomically) while the command runs: each member's state (`waiting`, `running`, " +
				"`succeeded`, `failed`, `left` running by an interrupt), step, sandbox and job ID, and the counts. Unset, " +
				"only the tails are kept." + resultsOnly,
		},
		"result_paths": resultPathsAttribute(),
		"sensitive_output": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			MarkdownDescription: "Treat the output as secret: it is recorded in `sensitive_streams` (hidden in " +
				"plans and CLI output, but stored in state) instead of `stdout` and `stderr`, never logged, and left " +
				"out of failure messages. Default `false`." + resultsOnly,
		},
	}
}

// commandSchemaAttributes adds prime_sandbox_command's own attributes.
func (r *sandboxCommandResource) attributes() map[string]schema.Attribute {
	computedString := func(d string, sensitive bool) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, Sensitive: sensitive, MarkdownDescription: d,
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}}
	}
	attrs := commandArgumentAttributes()
	attrs["id"] = computedString("Unique ID of this execution: a new one every time the command runs.", false)
	attrs["sandbox_id"] = schema.StringAttribute{
		Required: true, PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
		MarkdownDescription: "Sandbox to run in; it must be `RUNNING`." + rerun,
	}
	attrs["command"] = schema.StringAttribute{
		Required: true, PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
		MarkdownDescription: "Command line, run with `/bin/bash -c`." + rerun,
		Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
	}
	attrs["exit_code"] = schema.Int64Attribute{
		Computed: true, MarkdownDescription: "Exit code of the command.",
		PlanModifiers: []planmodifier.Int64{int64planmodifier.UseStateForUnknown()},
	}
	attrs["stdout"] = computedString("Standard output: the last 64 KiB. Null when `sensitive_output` is set.", false)
	attrs["stderr"] = computedString("Standard error: the last 64 KiB. Null when `sensitive_output` is set.", false)
	attrs["sensitive_streams"] = sensitiveStreamsAttribute()
	attrs["output_truncated"] = schema.BoolAttribute{
		Computed: true, MarkdownDescription: "Whether stdout or stderr was cut to its last 64 KiB.",
		PlanModifiers: []planmodifier.Bool{boolplanmodifier.UseStateForUnknown()},
	}
	attrs["executed_at"] = computedString("When the command finished (RFC 3339).", false)
	attrs["job_id"] = computedString("With `background`: the ID of the job that ran (8 hex characters, the SDK's format). Null otherwise.", false)
	attrs["job_status"] = schema.StringAttribute{
		Computed: true,
		MarkdownDescription: "With `background`: `completed` once the result is recorded; `running` when an interrupted " +
			"apply left the job running (the next plan shows an update that collects its result, and nothing runs " +
			"again); `failed` when a later apply collected it and its exit code was not allowed (the next apply runs the " +
			"command again). Null for a foreground command.",
	}
	attrs["output_files"] = schema.ListNestedAttribute{
		Computed:            true,
		MarkdownDescription: "With `output_dir`: the files the full output was saved to, with `path`, `size` and `sha256`.",
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"path":   schema.StringAttribute{Computed: true, MarkdownDescription: "Local path of the file."},
			"size":   schema.Int64Attribute{Computed: true, MarkdownDescription: "Size in bytes."},
			"sha256": schema.StringAttribute{Computed: true, MarkdownDescription: "SHA-256 of the bytes (hex)."},
		}},
	}
	return attrs
}

func (r *sandboxCommandResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Runs a command in a sandbox once, at create — trusted setup, or the agent — as a node " +
			"in the dependency graph, over the sandbox gateway's command-session protocol (Connect RPC), as the Prime " +
			"SDK does. " +
			"The whole evaluation protocol then reads as HCL: sandbox → setup commands (network open, " +
			"`require_open_egress = true`) → `prime_egress_policy` (`after` the setup) → agent command; destroy walks " +
			"it backwards.\n\n" +
			"An exit code outside `allowed_exit_codes` fails the apply with the code and the end of the output, and " +
			"nothing is stored, so the next apply runs the command again. A command is never retried after it may " +
			"have reached the sandbox.\n\n" +
			"The result is history: refresh and destroy make no API call, and import is not supported (there is " +
			"nothing on the platform to import). To run a command again, change `triggers` (or any argument marked " +
			"so), or use `terraform apply -replace`. Arguments that only judge or record the result " +
			"(`allowed_exit_codes`, `timeout_seconds`, `require_open_egress`, `sensitive_output`, `result_paths`) " +
			"update in place.\n\n" +
			secretChannelsDoc,
		Attributes: r.attributes(),
	}
}

// recordedExitCodeDisallowed replaces a command whose recorded exit code a
// new allowed_exit_codes no longer accepts: its stored result would be a
// failure, so it runs again.
func recordedExitCodeDisallowed(ctx context.Context, req planmodifier.SetRequest, resp *setplanmodifier.RequiresReplaceIfFuncResponse) {
	var exit types.Int64
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("exit_code"), &exit)...)
	if exit.IsNull() || exit.IsUnknown() || req.PlanValue.IsUnknown() {
		return
	}
	var allowed []int64
	resp.Diagnostics.Append(req.PlanValue.ElementsAs(ctx, &allowed, false)...)
	resp.RequiresReplace = !slices.Contains(allowed, exit.ValueInt64())
}

// validateCommandEnv checks env and env_wo names, that they do not name
// the same variable twice, and warns about env_wo_version without env_wo.
func validateCommandEnv(ctx context.Context, env, envWO types.Map, envWOVersion types.Int64, diags *diag.Diagnostics) {
	if !envWOVersion.IsNull() && envWO.IsNull() {
		diags.AddAttributeWarning(path.Root("env_wo_version"), "env_wo_version without env_wo",
			"env_wo_version only matters together with env_wo.")
	}
	vars, d := tfkit.StringMap(ctx, env)
	diags.Append(d...)
	secret, d := tfkit.StringMap(ctx, envWO)
	diags.Append(d...)
	for _, m := range []struct {
		attr string
		vars map[string]string
	}{{"env", vars}, {"env_wo", secret}} {
		for name := range m.vars {
			if !prime.ValidEnvName(name) {
				diags.AddAttributeError(path.Root(m.attr), "Invalid command configuration",
					fmt.Sprintf("%s: %q is not a valid variable name (letters, digits and _, not starting with a digit)", m.attr, name))
			}
		}
	}
	for name := range secret {
		if _, dup := vars[name]; dup {
			diags.AddAttributeError(path.Root("env_wo"), "Invalid command configuration",
				fmt.Sprintf("env_wo: %q is also set in env; set each variable in one of them", name))
		}
	}
}

func (r *sandboxCommandResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m sandboxCommandModel
	resp.Diagnostics.Append(tfkit.GetConfig(ctx, req.Config, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	validateCommandEnv(ctx, m.Env, m.EnvWO, m.EnvWOVersion, &resp.Diagnostics)
}

// ModifyPlan plans the output attributes of an in-place update (a change of
// sensitive_output moves the recorded output) and warns when a command may
// outlive its sandbox.
func (r *sandboxCommandResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	var prior sandboxCommandModel
	if !req.State.Raw.IsNull() && !tfkit.GetState(ctx, req.State, &prior).HasError() && prior.JobStatus.ValueString() == jobCompleted {
		// Terraform holds this job's result: its journal entry goes.
		r.jobs.Forget(runHashOf(prior))
	}
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan sandboxCommandModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !req.State.Raw.IsNull() && !plan.ID.IsUnknown() {
		var state sandboxCommandModel
		resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
		plan.recordedOutput = state.moved(state.SensitiveOutput.ValueBool(), plan.SensitiveOutput.ValueBool())
		plan.JobID, plan.JobStatus, plan.OutputFiles = state.JobID, state.JobStatus, state.OutputFiles
		switch state.JobStatus.ValueString() {
		case jobRunning:
			// An interrupted apply left the job running: this update
			// attaches to it and records its result.
			planPendingResult(&plan)
		case jobFailed:
			plan.JobStatus = types.StringUnknown()
			resp.RequiresReplace = append(resp.RequiresReplace, path.Root("job_status"))
		}
		resp.Diagnostics.Append(tfkit.SetPlan(ctx, &resp.Plan, &plan)...)
	} else if !plan.Background.IsUnknown() && !plan.Background.ValueBool() {
		plan.JobID, plan.JobStatus = types.StringNull(), types.StringNull()
		plan.OutputFiles = types.ListNull(files.ArtifactFileType())
		resp.Diagnostics.Append(tfkit.SetPlan(ctx, &resp.Plan, &plan)...)
	}
	r.warnCommandOutlivesSandbox(ctx, plan, &resp.Diagnostics)
}

// planPendingResult plans the result of a job that is still running: known
// only once the update collects it.
func planPendingResult(m *sandboxCommandModel) {
	m.ExitCode, m.ExecutedAt, m.JobStatus = types.Int64Unknown(), types.StringUnknown(), types.StringUnknown()
	m.Stdout, m.Stderr, m.OutputTruncated = types.StringUnknown(), types.StringUnknown(), types.BoolUnknown()
	m.SensitiveStreams = types.ObjectUnknown(streamsType().AttrTypes)
	m.OutputFiles, m.JobID = types.ListUnknown(files.ArtifactFileType()), types.StringUnknown()
	if !m.SensitiveOutput.IsUnknown() {
		if m.SensitiveOutput.ValueBool() {
			m.Stdout, m.Stderr = types.StringNull(), types.StringNull()
		} else {
			m.SensitiveStreams = types.ObjectNull(streamsType().AttrTypes)
		}
	}
}

// recordPending records a job an interrupted apply left running: no
// result yet.
func recordPending(m *sandboxCommandModel, p *pendingJob) {
	m.ExitCode, m.ExecutedAt = types.Int64Null(), types.StringNull()
	m.Stdout, m.Stderr, m.OutputTruncated = types.StringNull(), types.StringNull(), types.BoolNull()
	m.SensitiveStreams = types.ObjectNull(streamsType().AttrTypes)
	m.OutputFiles = types.ListNull(files.ArtifactFileType())
	m.JobID, m.JobStatus = types.StringValue(p.JobID), types.StringValue(jobRunning)
}

// pendingJobKey is the private-state key of a running job (its start time
// counts towards timeout_seconds).
const pendingJobKey = "pending_job"

func encodePending(p *pendingJob) []byte {
	b, _ := json.Marshal(p)
	return b
}

// pendingOf reads the running job of a state: from private state, else
// from job_id (its start time then unknown: the timeout counts from now).
func pendingOf(ctx context.Context, priv tfkit.PrivateGetter, m sandboxCommandModel) *pendingJob {
	if priv != nil {
		if b, _ := priv.GetKey(ctx, pendingJobKey); len(b) > 0 {
			var p pendingJob
			if json.Unmarshal(b, &p) == nil && p.JobID != "" {
				return &p
			}
		}
	}
	if m.JobID.IsNull() || m.JobID.IsUnknown() {
		return nil
	}
	return &pendingJob{SandboxID: m.SandboxID.ValueString(), JobID: m.JobID.ValueString(), Started: time.Now().UTC(), Confirmed: true}
}

// sensitive_streams is one sensitive object rather than two sensitive
// strings: Terraform before 1.15 compares the order of a resource's
// sensitive paths when it decides whether a refresh-only plan has changes,
// and that order follows Go map iteration (see NewProtocol6Server).
func sensitiveStreamsAttribute() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		Computed: true, Sensitive: true,
		MarkdownDescription: "The output when `sensitive_output` is set — `stdout` and `stderr`, the last 64 KiB " +
			"of each — hidden in plans and CLI output (read it with `nonsensitive()` or `terraform output`). Null " +
			"otherwise.",
		Attributes: map[string]schema.Attribute{
			"stdout": schema.StringAttribute{Computed: true, MarkdownDescription: "Standard output."},
			"stderr": schema.StringAttribute{Computed: true, MarkdownDescription: "Standard error."},
		},
		PlanModifiers: []planmodifier.Object{objectplanmodifier.UseStateForUnknown()},
	}
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

// warnCommandOutlivesSandbox warns at plan time when a command may run
// longer than its sandbox lives. The sandbox is only known once it exists.
func (r *sandboxCommandResource) warnCommandOutlivesSandbox(ctx context.Context, plan sandboxCommandModel, diags *diag.Diagnostics) {
	if plan.SandboxID.IsUnknown() || plan.TimeoutSeconds.IsUnknown() {
		return
	}
	warnCommandsOutliveSandboxes(ctx, r.client, map[string]string{"": plan.SandboxID.ValueString()},
		time.Duration(plan.TimeoutSeconds.ValueInt64())*time.Second, diags)
}

// warnCommandsOutliveSandboxes gives the plan-time warning about a command's
// timeout for the commands that will run: runs maps a member key ("" for
// prime_sandbox_command) to a sandbox ID. A command (a background job too)
// cannot outlive its sandbox. A sandbox's lifetime comes from what the
// client already knows, or one GET; a sandbox that cannot be read is left
// to the apply to report.
func warnCommandsOutliveSandboxes(ctx context.Context, c *prime.Client, runs map[string]string, timeout time.Duration, diags *diag.Diagnostics) {
	if c == nil || len(runs) == 0 {
		return
	}
	var mu sync.Mutex
	var lifetime []string
	fleet.ForEachMember(ctx, tfkit.SortedKeys(runs), 0, func(ctx context.Context, key string) {
		id := runs[key]
		known, ok := c.Known(id)
		if !ok {
			if timeout <= time.Minute {
				return // shorter than any lifetime: no read needed
			}
			sb, err := c.GetSandbox(ctx, id)
			if err != nil {
				return
			}
			known = prime.KnownSandbox{TimeoutMinutes: sb.TimeoutMinutes}
		}
		prefix := ""
		if key != "" {
			prefix = fmt.Sprintf("Member %q: ", key)
		}
		mu.Lock()
		defer mu.Unlock()
		if life := time.Duration(known.TimeoutMinutes) * time.Minute; known.TimeoutMinutes > 0 && timeout > life {
			lifetime = append(lifetime, fmt.Sprintf("%sSandbox %s declares a lifetime of %s (timeout_minutes = %d), while "+
				"timeout_seconds allows %s: the platform ends the sandbox, and the command with it, first. Raise the "+
				"sandbox's timeout_minutes (-1: no limit), or lower timeout_seconds.", prefix, id, life, known.TimeoutMinutes, timeout))
		}
	})
	if len(lifetime) > 0 {
		sort.Strings(lifetime)
		diags.AddAttributeWarning(path.Root("timeout_seconds"), "Command may outlive its sandbox", strings.Join(lifetime, "\n\n"))
	}
}

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

func (r *sandboxCommandResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var plan sandboxCommandModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	var envWO types.Map
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("env_wo"), &envWO)...)
	if resp.Diagnostics.HasError() {
		return
	}
	spec, d := plan.spec(ctx, envWO)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.EnvWO = types.MapNull(types.StringType)
	if spec.Background {
		plan.ID = types.StringValue(spec.SandboxID + "/" + prime.NewIdempotencyKey()[:16])
		r.runInBackground(ctx, &plan, spec, nil, resp.Private, &resp.State, &resp.Diagnostics)
		return
	}
	tflog.Info(ctx, "running command", map[string]any{"sandbox_id": spec.SandboxID, "timeout": spec.Timeout.String()})
	res, err := runCommand(ctx, r.client, spec)
	if err != nil {
		resp.Diagnostics.AddError(commandErrorSummary(err), err.Error())
		return
	}
	plan.ID = types.StringValue(spec.SandboxID + "/" + prime.NewIdempotencyKey()[:16])
	recordResult(&plan, res)
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &plan)...)
}

// runHashOf identifies a prime_sandbox_command run in the job journal: the
// arguments that make it a new run (a change of any of them replaces the
// resource).
func runHashOf(m sandboxCommandModel) string {
	return journal.RunHash("prime_sandbox_command", m.SandboxID.ValueString(), m.Command.ValueString(), m.WorkingDir.ValueString(),
		m.Env.String(), m.EnvWOVersion.String(), m.Triggers.String())
}

// runInBackground runs (or, with attach, collects) the command as a job
// and records the outcome in m and state: the result; or, when the apply
// was interrupted, the running job, which the next apply collects.
func (r *sandboxCommandResource) runInBackground(ctx context.Context, m *sandboxCommandModel, spec commandSpec, attach *pendingJob,
	priv tfkit.PrivateSetter, state interface {
		Set(context.Context, any) diag.Diagnostics
	}, diags *diag.Diagnostics) {
	const key = "command"
	reporter := newProgressReporter(ctx, progressOptions{What: "prime_sandbox_command", Keys: []string{key},
		States: commandProgressStates, File: progressFileOf(m.OutputDir)})
	reporter.update(key, func(p *memberProgressState) {
		p.State, p.SandboxID, p.Steps, p.Step = ProgressRunning, spec.SandboxID, 1, 1
	})
	br, err := runBackground(ctx, r.client, backgroundRun{
		spec: spec, hash: runHashOf(*m), journal: r.jobs, attach: attach, outputDir: m.OutputDir.ValueString(), keep: true,
		onJob: func(job prime.Job) { reporter.update(key, func(p *memberProgressState) { p.JobID = job.ID }) },
	})
	reporter.update(key, func(p *memberProgressState) {
		switch {
		case br.Pending != nil:
			p.State = ProgressLeft
		case err != nil:
			p.State, p.Error = ProgressFailed, memberErrorLine(0, 1, err)
		default:
			p.State = ProgressSucceeded
		}
	})
	if ferr := reporter.stop(); ferr != nil {
		diags.AddWarning("Progress file not written", ferr.Error())
	}
	stored := false
	defer func() {
		// After the state below: a stored result is handed over (Terraform
		// may be killed before it persists it); a failure runs again.
		if stored {
			br.Entry.HandOver()
		} else {
			br.Entry.Finish()
		}
	}()
	for _, w := range br.Warnings {
		diags.AddWarning("Background job", w)
	}
	switch {
	case errors.Is(err, errJobInterrupted):
		recordPending(m, br.Pending)
		diags.Append(priv.SetKey(ctx, pendingJobKey, encodePending(br.Pending))...)
		diags.AddWarning("Background job left running",
			fmt.Sprintf("The apply was interrupted while job %s ran in sandbox %s. The job goes on; it is recorded in state "+
				"(job_status = \"running\"), and the next apply attaches to it and collects its result without running the "+
				"command again.", br.Pending.JobID, spec.SandboxID))
		diags.Append(tfkit.SetStateAny(ctx, state, m)...)
		return
	case err != nil && br.Pending != nil && attach != nil:
		// Its outcome is unknown (say, its output could not be read): it
		// stays recorded as running, and the next apply tries again.
		recordPending(m, br.Pending)
		diags.Append(priv.SetKey(ctx, pendingJobKey, encodePending(br.Pending))...)
		diags.Append(tfkit.SetStateAny(ctx, state, m)...)
		diags.AddError(commandErrorSummary(err), err.Error())
		return
	case err != nil && attach != nil:
		// A collected job that failed: recorded, so the next apply runs
		// the command again (a replacement) instead of collecting it again.
		recordPending(m, &pendingJob{JobID: br.Job.ID})
		m.JobStatus = types.StringValue(jobFailed)
		if br.Result != nil {
			recordResult(m, br.Result)
			m.JobID, m.JobStatus = types.StringValue(br.Job.ID), types.StringValue(jobFailed)
		}
		diags.Append(priv.SetKey(ctx, pendingJobKey, nil)...)
		diags.Append(tfkit.SetStateAny(ctx, state, m)...)
		diags.AddError(commandErrorSummary(err), err.Error())
		return
	case err != nil:
		diags.AddError(commandErrorSummary(err), err.Error())
		return
	}
	recordResult(m, br.Result)
	m.JobID, m.JobStatus = types.StringValue(br.Job.ID), types.StringValue(jobCompleted)
	m.OutputFiles = types.ListNull(files.ArtifactFileType())
	if m.OutputDir.ValueString() != "" {
		m.OutputFiles = files.ArtifactFilesValue(br.OutputFiles)
	}
	diags.Append(priv.SetKey(ctx, pendingJobKey, nil)...)
	diags.Append(tfkit.SetStateAny(ctx, state, m)...)
	stored = !diags.HasError()
}

// Read touches no API: a command's result is history.
func (r *sandboxCommandResource) Read(_ context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	resp.State.Raw = req.State.Raw
}

// Update records arguments that only judge or record the result; nothing
// runs. The plan (see ModifyPlan) already holds the moved output. A job an
// interrupted apply left running is collected here.
func (r *sandboxCommandResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state sandboxCommandModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.EnvWO = types.MapNull(types.StringType)
	if state.JobStatus.ValueString() == jobRunning {
		if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
			return
		}
		var envWO types.Map
		resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("env_wo"), &envWO)...)
		spec, d := plan.spec(ctx, envWO)
		resp.Diagnostics.Append(d...)
		if resp.Diagnostics.HasError() {
			return
		}
		spec.Background = true // the job runs in the background, whatever the argument says now
		spec.AfterFailure = jobFailureRecorded
		r.runInBackground(ctx, &plan, spec, pendingOf(ctx, req.Private, state), resp.Private, &resp.State, &resp.Diagnostics)
		return
	}
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &plan)...)
}

// Delete touches no API, except for a job an interrupted apply left
// running: it is stopped (SIGTERM, then SIGKILL), so it cannot go on after
// its egress lock is lifted.
func (r *sandboxCommandResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state sandboxCommandModel
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	if resp.Diagnostics.HasError() || state.JobStatus.ValueString() != jobRunning {
		return
	}
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	p := pendingOf(ctx, req.Private, state)
	if p == nil {
		return
	}
	if err := stopRunningJob(ctx, r.client, r.jobs, *p); err != nil {
		resp.Diagnostics.AddError("Background job not stopped", err.Error())
	}
}

// stopRunningJob stops a job whose resource goes away. A sandbox that is
// gone took the job with it. A job that cannot be stopped fails the
// destroy: the agent must not go on running once its lock is lifted.
func stopRunningJob(ctx context.Context, c *prime.Client, jobs *journal.Jobs, p pendingJob) error {
	if gone, err := c.SandboxGone(ctx, p.SandboxID); err == nil && gone {
		jobs.Drop(p.JobID)
		return nil
	}
	if _, err := c.StopJob(ctx, p.job(), c.CommandStopGrace()); err != nil && !prime.GoneWithSandbox(err) {
		return fmt.Errorf("sandbox %s: background job %s is still running and could not be stopped: %w; run destroy again", p.SandboxID, p.JobID, err)
	}
	jobs.Drop(p.JobID)
	return nil
}
