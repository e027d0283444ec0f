package provider

import (
	"context"
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

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

var (
	_ resource.ResourceWithConfigure      = (*sandboxCommandResource)(nil)
	_ resource.ResourceWithValidateConfig = (*sandboxCommandResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*sandboxCommandResource)(nil)
)

// NewSandboxCommandResource is the prime_sandbox_command constructor.
func NewSandboxCommandResource() resource.Resource { return &sandboxCommandResource{} }

type sandboxCommandResource struct {
	client *prime.Client
}

type sandboxCommandModel struct {
	ID                types.String `tfsdk:"id"`
	SandboxID         types.String `tfsdk:"sandbox_id"`
	Command           types.String `tfsdk:"command"`
	WorkingDir        types.String `tfsdk:"working_dir"`
	Env               types.Map    `tfsdk:"env"`
	EnvWO             types.Map    `tfsdk:"env_wo"`
	EnvWOVersion      types.Int64  `tfsdk:"env_wo_version"`
	TimeoutSeconds    types.Int64  `tfsdk:"timeout_seconds"`
	Triggers          types.Map    `tfsdk:"triggers"`
	AllowedExitCodes  types.Set    `tfsdk:"allowed_exit_codes"`
	RequireOpenEgress types.Bool   `tfsdk:"require_open_egress"`
	SensitiveOutput   types.Bool   `tfsdk:"sensitive_output"`
	ExitCode          types.Int64  `tfsdk:"exit_code"`
	Stdout            types.String `tfsdk:"stdout"`
	Stderr            types.String `tfsdk:"stderr"`
	SensitiveStreams  types.Object `tfsdk:"sensitive_streams"`
	OutputTruncated   types.Bool   `tfsdk:"output_truncated"`
	ExecutedAt        types.String `tfsdk:"executed_at"`
}

func (r *sandboxCommandResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_sandbox_command"
}

func (r *sandboxCommandResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = clientFrom(req.ProviderData, &resp.Diagnostics)
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
	"later commands)."

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
				"replaced by `***` in the recorded output and in errors (values of 4 bytes or more). Terraform cannot see a change of " +
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
				"an interrupted apply) the command is stopped on a VM (SIGTERM, then SIGKILL), so a timed-out setup "+
				"step is not left running while egress gets locked. On a container the platform's edge proxy ends a "+
				"call after about %d s (the plan warns): run longer container work in the background.",
				defaultCommandTimeout, int(prime.EdgeProxyTimeout.Seconds())) + resultsOnly,
			Validators: []validator.Int64{int64validator.Between(1, 24*3600)},
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
				"sandbox. Set it on setup steps, so a changed step can never run silently under the agent's lock; " +
				"pair it with `after` on the `prime_egress_policy`. Default `false`." + resultsOnly,
		},
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
	return attrs
}

func (r *sandboxCommandResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Runs a command in a sandbox once, at create — trusted setup, or the agent — as a node " +
			"in the dependency graph. On a VM it runs over the gateway's command-session protocol (Connect RPC), on " +
			"a container over the gateway's REST exec call, as the Prime SDK does; the kind comes from the sandbox. " +
			"The whole evaluation protocol then reads as HCL: sandbox → setup commands (network open, " +
			"`require_open_egress = true`) → `prime_egress_policy` (`after` the setup) → agent command; destroy walks " +
			"it backwards.\n\n" +
			"An exit code outside `allowed_exit_codes` fails the apply with the code and the end of the output, and " +
			"nothing is stored, so the next apply runs the command again. A command is never retried after it may " +
			"have reached the sandbox.\n\n" +
			"The result is history: refresh and destroy make no API call, and import is not supported (there is " +
			"nothing on the platform to import). To run a command again, change `triggers` (or any argument marked " +
			"so), or use `terraform apply -replace`. Arguments that only judge or record the result " +
			"(`allowed_exit_codes`, `timeout_seconds`, `require_open_egress`, `sensitive_output`) update in place.\n\n" +
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
	vars, d := stringMap(ctx, env)
	diags.Append(d...)
	secret, d := stringMap(ctx, envWO)
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
	resp.Diagnostics.Append(getConfig(ctx, req.Config, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	validateCommandEnv(ctx, m.Env, m.EnvWO, m.EnvWOVersion, &resp.Diagnostics)
}

// ModifyPlan plans the output attributes of an in-place update (a change of
// sensitive_output moves the recorded output) and warns when a container
// command may outlive the edge proxy.
func (r *sandboxCommandResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan sandboxCommandModel
	resp.Diagnostics.Append(getPlan(ctx, req.Plan, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !req.State.Raw.IsNull() && !plan.ID.IsUnknown() {
		var state sandboxCommandModel
		resp.Diagnostics.Append(getState(ctx, req.State, &state)...)
		moveOutput(&plan, state)
		resp.Diagnostics.Append(setPlan(ctx, &resp.Plan, &plan)...)
	}
	r.warnLongContainerCommand(ctx, plan, &resp.Diagnostics)
}

// moveOutput places the recorded output where sensitive_output wants it.
func moveOutput(plan *sandboxCommandModel, state sandboxCommandModel) {
	stdout, stderr := state.Stdout, state.Stderr
	if state.SensitiveOutput.ValueBool() {
		stdout, stderr = streamsOf(state.SensitiveStreams)
	}
	placeOutput(plan, stdout, stderr)
}

// placeOutput records output in stdout/stderr, or in sensitive_streams when
// sensitive_output is set.
func placeOutput(m *sandboxCommandModel, stdout, stderr types.String) {
	if m.SensitiveOutput.ValueBool() {
		m.SensitiveStreams = streamsValue(stdout, stderr)
		m.Stdout, m.Stderr = types.StringNull(), types.StringNull()
		return
	}
	m.Stdout, m.Stderr = stdout, stderr
	m.SensitiveStreams = types.ObjectNull(streamsType().AttrTypes)
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

// warnLongContainerCommand warns at plan time when a command on a container
// may run longer than the edge proxy in front of the gateway allows. The
// sandbox's kind is only known once it exists.
func (r *sandboxCommandResource) warnLongContainerCommand(ctx context.Context, plan sandboxCommandModel, diags *diag.Diagnostics) {
	if plan.SandboxID.IsUnknown() || plan.TimeoutSeconds.IsUnknown() {
		return
	}
	warnLongContainerCommands(ctx, r.client, map[string]string{"": plan.SandboxID.ValueString()},
		time.Duration(plan.TimeoutSeconds.ValueInt64())*time.Second, diags)
}

// warnLongContainerCommands is the edge-proxy warning for the commands that
// will run: runs maps a member key ("" for prime_sandbox_command) to a
// sandbox ID. A sandbox's kind comes from what the client already knows, or
// one GET; a sandbox that cannot be read is left to the apply to report.
func warnLongContainerCommands(ctx context.Context, c *prime.Client, runs map[string]string, timeout time.Duration, diags *diag.Diagnostics) {
	if c == nil || timeout <= prime.EdgeProxyTimeout || len(runs) == 0 {
		return
	}
	var mu sync.Mutex
	var warnings []string
	forEachMember(ctx, sortedKeys(runs), 0, func(ctx context.Context, key string) {
		id := runs[key]
		known, ok := c.Known(id)
		vm := known.VM
		if !ok {
			sb, err := c.GetSandbox(ctx, id)
			if err != nil {
				return
			}
			vm = sb.VM
		}
		if vm {
			return // a VM streams its commands
		}
		text := longContainerCommandWarning(id, timeout)
		if key != "" {
			text = fmt.Sprintf("Member %q: %s", key, text)
		}
		mu.Lock()
		warnings = append(warnings, text)
		mu.Unlock()
	})
	if len(warnings) > 0 {
		sort.Strings(warnings)
		diags.AddAttributeWarning(path.Root("timeout_seconds"), "Container command may outlive the edge proxy",
			strings.Join(warnings, "\n\n"))
	}
}

func longContainerCommandWarning(sandboxID string, timeout time.Duration) string {
	return fmt.Sprintf("Sandbox %s is a container: its commands run over one REST call, which the platform's edge "+
		"proxy ends after about %s (HTTP 524), while timeout_seconds allows %s. A longer command fails the apply "+
		"and may keep running in the sandbox. Run long work on a VM sandbox (commands stream there), or split it.",
		sandboxID, prime.EdgeProxyTimeout, timeout)
}

// specFromCommandModel is the command a plan asks for.
func specFromCommandModel(ctx context.Context, m sandboxCommandModel, envWO types.Map) (commandSpec, diag.Diagnostics) {
	var diags diag.Diagnostics
	env, d := stringMap(ctx, m.Env)
	diags.Append(d...)
	secret, d := stringMap(ctx, envWO)
	diags.Append(d...)
	var allowed []int64
	diags.Append(m.AllowedExitCodes.ElementsAs(ctx, &allowed, false)...)
	return commandSpec{
		SandboxID: m.SandboxID.ValueString(), Command: m.Command.ValueString(), WorkingDir: m.WorkingDir.ValueString(),
		Env: env, EnvWO: secret, Timeout: time.Duration(m.TimeoutSeconds.ValueInt64()) * time.Second,
		Allowed: allowed, RequireOpenEgress: m.RequireOpenEgress.ValueBool(), SensitiveOutput: m.SensitiveOutput.ValueBool(),
	}, diags
}

// recordResult stores a run's result in m, the output where
// sensitive_output wants it.
func recordResult(m *sandboxCommandModel, res *commandResult) {
	m.ExitCode = types.Int64Value(int64(res.ExitCode))
	placeOutput(m, types.StringValue(res.Stdout), types.StringValue(res.Stderr))
	m.OutputTruncated = types.BoolValue(res.Truncated)
	m.ExecutedAt = types.StringValue(res.ExecutedAt.Format(time.RFC3339))
}

func (r *sandboxCommandResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	if !requireClient(r.client, &resp.Diagnostics) {
		return
	}
	var plan sandboxCommandModel
	resp.Diagnostics.Append(getPlan(ctx, req.Plan, &plan)...)
	var envWO types.Map
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("env_wo"), &envWO)...)
	if resp.Diagnostics.HasError() {
		return
	}
	spec, d := specFromCommandModel(ctx, plan, envWO)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	tflog.Info(ctx, "running command", map[string]any{"sandbox_id": spec.SandboxID, "timeout": spec.Timeout.String()})
	res, err := runCommand(ctx, r.client, spec)
	if err != nil {
		resp.Diagnostics.AddError(commandErrorSummary(err), err.Error())
		return
	}
	plan.ID = types.StringValue(spec.SandboxID + "/" + prime.NewIdempotencyKey()[:16])
	plan.EnvWO = types.MapNull(types.StringType)
	recordResult(&plan, res)
	resp.Diagnostics.Append(setState(ctx, &resp.State, &plan)...)
}

// Read touches no API: a command's result is history.
func (r *sandboxCommandResource) Read(_ context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	resp.State.Raw = req.State.Raw
}

// Update records arguments that only judge or record the result; nothing
// runs. The plan (see ModifyPlan) already holds the moved output.
func (r *sandboxCommandResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan sandboxCommandModel
	resp.Diagnostics.Append(getPlan(ctx, req.Plan, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.EnvWO = types.MapNull(types.StringType)
	resp.Diagnostics.Append(setState(ctx, &resp.State, &plan)...)
}

// Delete touches no API: there is nothing to undo on the platform.
func (r *sandboxCommandResource) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {
}
