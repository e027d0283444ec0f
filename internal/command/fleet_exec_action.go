package command

// prime_fleet_exec (Terraform 1.14+ action): prime_fleet_command's steps on
// every member, ad hoc, through the same runMembers (and so runCommand),
// keeping nothing in state.

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/action"
	actionschema "github.com/hashicorp/terraform-plugin-framework/action/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/memberkit"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

var (
	_ action.ActionWithConfigure      = (*fleetExecAction)(nil)
	_ action.ActionWithValidateConfig = (*fleetExecAction)(nil)
	_ action.ActionWithModifyPlan     = (*fleetExecAction)(nil)
)

// NewFleetExecAction is the prime_fleet_exec constructor.
func NewFleetExecAction() action.Action { return &fleetExecAction{} }

type fleetExecAction struct{ client *prime.Client }

type fleetExecModel struct {
	SandboxIDs     types.Map   `tfsdk:"sandbox_ids"`
	Commands       types.List  `tfsdk:"commands"`
	MaxConcurrency types.Int64 `tfsdk:"max_concurrency"`
	runArguments
}

func (a *fleetExecAction) Metadata(_ context.Context, req action.MetadataRequest, resp *action.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_fleet_exec"
}

func (a *fleetExecAction) Configure(_ context.Context, req action.ConfigureRequest, resp *action.ConfigureResponse) {
	a.client = tfkit.ClientFrom(req.ProviderData, &resp.Diagnostics)
}

func (a *fleetExecAction) Schema(_ context.Context, _ action.SchemaRequest, resp *action.SchemaResponse) {
	shared := (&fleetCommandResource{}).attributes()
	attrs := execArgumentAttributes()
	attrs["timeout_seconds"] = actionAttribute(shared["timeout_seconds"], execArgumentDocs["timeout_seconds"]+
		" The limit applies to each step on each member.")
	attrs["allowed_exit_codes"] = actionAttribute(shared["allowed_exit_codes"], "Exit codes that count as success, "+
		"for every step. Default `[0]`. A member stops at its first step whose exit code is not allowed, and the "+
		"action fails naming every such member.")
	attrs["require_open_egress"] = actionAttribute(shared["require_open_egress"], execArgumentDocs["require_open_egress"]+
		" Checked per member, right before its first step.")
	attrs["sandbox_ids"] = actionAttribute(shared["sandbox_ids"], "Member key → ID of a `RUNNING` sandbox, usually "+
		"`prime_sandbox_fleet.<name>.sandbox_ids`.")
	attrs["commands"] = actionAttribute(shared["commands"], "Steps run in order on each member, each with "+
		"`/bin/bash -c`. A member stops at its first step whose exit code is not in `allowed_exit_codes`; the "+
		"other members go on.")
	attrs["max_concurrency"] = actionschema.Int64Attribute{Optional: true,
		MarkdownDescription: fmt.Sprintf("How many members run at once. Default `%d`, as on `prime_fleet_command`.",
			memberkit.DefaultConcurrency),
		Validators: []validator.Int64{int64validator.AtLeast(1)}}
	resp.Schema = actionschema.Schema{
		MarkdownDescription: "Runs steps on every member of a fleet ad hoc (Terraform 1.14+) — a probe, a log " +
			"grab — with `terraform apply -invoke=action.prime_fleet_exec.<name>` or from a resource's " +
			"`lifecycle { action_trigger { ... } }`. Each step on each member runs exactly as `prime_fleet_command` " +
			"runs it (the same code: arguments, transport, timeout and stop-on-timeout, `require_open_egress`, " +
			"`env_wo`, `max_concurrency`, error texts). Every member's output is shown as the action's progress, " +
			"each line prefixed with the member's key (not with `sensitive_output`), followed by a line per finished " +
			"step. Any member whose step exits with a disallowed code fails the action, with one error naming every " +
			"failed member.\n\n" + tfkit.ActionsKeepNothing,
		Attributes: attrs,
	}
}

// commandModel is the fleet command an action asks for, with
// prime_fleet_command's defaults for what it leaves unset.
func (m fleetExecModel) commandModel() fleetCommandModel {
	out := fleetCommandModel{SandboxIDs: m.SandboxIDs, Commands: m.Commands, runArguments: m.withDefaults(),
		MaxConcurrency: m.MaxConcurrency}
	if out.MaxConcurrency.IsNull() {
		out.MaxConcurrency = types.Int64Value(memberkit.DefaultConcurrency)
	}
	return out
}

func (a *fleetExecAction) ValidateConfig(ctx context.Context, req action.ValidateConfigRequest, resp *action.ValidateConfigResponse) {
	var m fleetExecModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	validateCommandEnv(ctx, m.Env, m.EnvWO, types.Int64Null(), &resp.Diagnostics)
}

// ModifyPlan warns about commands that may outlive their members, as
// prime_fleet_command does.
func (a *fleetExecAction) ModifyPlan(ctx context.Context, req action.ModifyPlanRequest, resp *action.ModifyPlanResponse) {
	var m fleetExecModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	cm := m.commandModel()
	if resp.Diagnostics.HasError() || cm.SandboxIDs.IsUnknown() || cm.TimeoutSeconds.IsUnknown() {
		return
	}
	runs, _ := tfkit.StringMap(ctx, cm.SandboxIDs) // nil while any ID is unknown
	warnCommandsOutliveSandboxes(ctx, a.client, runs, time.Duration(cm.TimeoutSeconds.ValueInt64())*time.Second, &resp.Diagnostics)
}

func (a *fleetExecAction) Invoke(ctx context.Context, req action.InvokeRequest, resp *action.InvokeResponse) {
	if !tfkit.RequireClient(a.client, &resp.Diagnostics) {
		return
	}
	var m fleetExecModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	run := fleetRunOf(ctx, m.commandModel(), m.EnvWO, &resp.Diagnostics)
	ids := tfkit.StringMapOf(ctx, m.SandboxIDs, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	run.progress = &fleetRunProgress{send: tfkit.ProgressTo(resp), steps: len(run.commands)}
	var problems memberkit.Problems
	done := (&fleetCommandResource{client: a.client}).runMembers(ctx, m.commandModel(), run, ids, nil, &problems)
	if problems.Len() > 0 {
		fleetCommandFailure{problems: &problems, tried: len(ids), action: true}.add(&resp.Diagnostics, false)
		return
	}
	run.progress.send(fmt.Sprintf("all %d members ran every step", len(done.done)))
}

// fleetRunProgress reports a fleet run as it goes: each member's output
// lines (prefixed with its key) and a line per finished step.
type fleetRunProgress struct {
	send  func(messages ...string)
	steps int
}

// memberOutput is a member's commandSpec.OnOutput (nil without progress,
// so the resource runs as before).
func (r fleetRun) memberOutput(key string) func(stderr bool, chunk []byte) {
	if r.progress == nil {
		return nil
	}
	return func(stderr bool, chunk []byte) { r.progress.send(outputLines(key, stderr, chunk)...) }
}

// stepDone reports a member's finished step; failures are reported once,
// together, by the caller.
func (r fleetRun) stepDone(key, sandboxID string, step int, res *commandResult, err error) {
	if r.progress == nil {
		return
	}
	switch {
	case res != nil:
		r.progress.send(fmt.Sprintf("[%s] step %d of %d exited with code %d (sandbox %s)", key, step+1, r.progress.steps,
			res.ExitCode, sandboxID))
	case err != nil:
		r.progress.send(fmt.Sprintf("[%s] step %d of %d did not finish: %s (sandbox %s)", key, step+1, r.progress.steps,
			commandErrorSummary(err), sandboxID))
	}
}
