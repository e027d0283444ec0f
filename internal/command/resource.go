package command

import (
	"context"
	"fmt"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
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
				"interrupt, and in a local journal beside the create journal after a kill). On any machine, a new CI " +
				"runner after a lost one included, the command that starts a job first claims its run in the sandbox " +
				"(`/tmp/prime-runs/<run hash>/<job id>.<start>`) and refuses to start when another job claimed it: the " +
				"apply attaches to that job instead. A run that failed, timed out or was proven gone retires its claim, " +
				"and so does destroying the resource (one command in the sandbox), so that a replacement runs the " +
				"command again; a second command with the same command, environment and triggers on the same sandbox " +
				"is taken as the same run. The command runs again only " +
				"when the job is proven gone (its sandbox replaced, or its files missing). A job past `timeout_seconds`, " +
				"and a running job whose resource is destroyed, is stopped (SIGTERM to its process group, then SIGKILL): " +
				"for that the provider's wrapper adds, beyond the SDK's, `setsid` and a `/tmp/job_<id>.pgid` file. The " +
				"result, `allowed_exit_codes`, output tails and failure messages are those of a foreground command. " +
				"Default `false`." + resultsOnly,
		},
		"output_dir": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "A local directory that receives each run's record, `" + RunRecordName + "` (for a " +
				"fleet, `<key>/" + RunRecordName + "` per member), written (atomically) when the run ends: its `run_id`, " +
				"`member`, `sandbox_id`, `started_at`, `ended_at`, `exit_code`, `failed`, `error`, the steps' digest " +
				"(`commands_sha256`, `command_sha256` for `prime_sandbox_command`), the egress it started under " +
				"(`egress_generation`, `egress_sha256`), and the `triggers` (and the member's `member_trigger`) it ran " +
				"for — put there what only the configuration knows, such as the image or checkpoint and the digests of " +
				"the task and the setup, and a change of them runs it again. With `background` it also receives the " +
				"whole stdout and stderr of every run, as `<job_id>.stdout.log` and `<job_id>.stderr.log` (for a fleet, " +
				"in the member's directory), downloaded when the job ends, with `env_wo` values and the sandbox's " +
				"secrets replaced by `***`; state keeps the tails and the files' hashes (`output_files`). The " +
				"directory also holds `progress.json`, rewritten (atomically) while the command runs: each member's " +
				"state (`waiting`, `running`, `succeeded`, `failed`, `left` running by an interrupt), step, sandbox and " +
				"job ID, and the counts. Unset, nothing is written locally." + resultsOnly,
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
	attrs["run_id"] = computedString("ID of this run (16 hex characters), the second half of `id`. With `result_paths` "+
		"the run leaves a stamp of this name in the sandbox as it starts, so the `prime_sandbox_file` data source and "+
		"`prime_sandbox_artifact` given it in `run_id` return only what this run wrote.", false)
	attrs["started_at"] = computedString("When the run started (RFC 3339): once the sandbox's egress was read, "+
		"before the command. Null for a run recorded before runs were, or begun by an apply whose record was lost.", false)
	attrs["egress_generation"] = schema.Int64Attribute{
		Computed: true, PlanModifiers: []planmodifier.Int64{int64planmodifier.UseStateForUnknown()},
		MarkdownDescription: "The generation of the egress policy the sandbox enforced when the run started, read " +
			"from the platform (`0` for a VM's untouched open policy). Null when it could not be read.",
	}
	attrs["egress_sha256"] = computedString("The digest of the lists that policy let through, as `lists_sha256` of "+
		"the egress block or policy that wrote them names them: compare it with theirs to prove which lists the "+
		"result was produced under. Null when the data plane still enforced an older generation than the newest "+
		"written, or when the policy could not be read.", false)
	attrs["command_sha256"] = schema.StringAttribute{
		Computed: true,
		MarkdownDescription: "The SHA-256 (hex) of `command` — what `sha256(command)` gives — naming what the run ran, " +
			"for its provenance. Known at plan time.",
	}
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
