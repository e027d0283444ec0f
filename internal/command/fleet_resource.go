package command

// prime_fleet_command: prime_sandbox_command's steps on every member of a
// fleet. Each step of each member goes through runCommand, with the same
// arguments, rules and error texts as the single-sandbox resource.

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/journal"
	"github.com/primeintellect/terraform-provider-prime/internal/memberkit"
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
	attrs["sandbox_ids"] = memberkit.SandboxIDsAttribute("Member key → ID of a `RUNNING` sandbox, usually " +
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
	attrs["commands_sha256"] = schema.StringAttribute{
		Computed: true,
		MarkdownDescription: "The SHA-256 (hex) of `commands` as a JSON array — what `sha256(jsonencode(commands))` " +
			"gives — naming the steps every member's run ran, for its provenance. Known at plan time.",
	}
	attrs["max_concurrency"] = schema.Int64Attribute{
		Optional: true, Computed: true, Default: int64default.StaticInt64(memberkit.DefaultConcurrency),
		MarkdownDescription: fmt.Sprintf("How many members run at once. Default `%d`. Each running member holds a "+
			"gateway command stream, which the provider's request pacing does not limit. With `background`, every "+
			"member's job runs at the same time, and this bounds only the members starting or collecting a job at "+
			"once (a waiting job holds nothing but its place in the shared poll). Changing it updates in place; "+
			"nothing runs again.", memberkit.DefaultConcurrency),
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
				MarkdownDescription: "Unique ID of the member's run (16 hex characters): a new one every time the member " +
					"runs again. With `result_paths` the run leaves a stamp of this name in the sandbox as it starts, so the " +
					"`prime_fleet_file` data source and `prime_fleet_artifact` given it in `run_ids` return only what this " +
					"run wrote; `run_ids` also downloads a member again exactly when it ran again."},
			"started_at": schema.StringAttribute{Computed: true,
				MarkdownDescription: "When the member's run started (RFC 3339): once its egress was read, before its " +
					"first step. Null for a run recorded before runs were, or begun by an apply whose record was lost."},
			"egress_generation": schema.Int64Attribute{Computed: true,
				MarkdownDescription: "The generation of the egress policy the member's sandbox enforced when its run " +
					"started, read from the platform (`0` for a VM's untouched open policy). Null when it could not be " +
					"read."},
			"egress_sha256": schema.StringAttribute{Computed: true,
				MarkdownDescription: "The digest of the lists that policy let through, as `lists_sha256` of the egress " +
					"block or policy that wrote them names them (the digest of `open` for unrestricted egress): compare " +
					"it with theirs to prove which lists a result was produced under. Null when the data plane still " +
					"enforced an older generation than the newest written (whose lists the platform no longer shows), " +
					"or when the policy could not be read."},
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
			"Background runs survive a lost runner: each job's start claims its run inside the member's sandbox, " +
			"and an apply on any machine that finds the claim attaches to that job instead of starting the step " +
			"again (see `background` on `prime_sandbox_command`).\n\n" +
			"Results are history: refresh makes no API call, destroy none for foreground results (for background " +
			"ones, one command per member retires their run claims, so a replacement runs the members again), and " +
			"import is not supported. Arguments that " +
			"only judge or record the results (`allowed_exit_codes`, `timeout_seconds`, `require_open_egress`, " +
			"`sensitive_output`, `max_concurrency`, `on_member_failure`, `step_output`, `result_paths`) update in place.\n\n" + secretChannelsDoc,
		Attributes: r.attributes(),
	}
}
