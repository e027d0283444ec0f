package command

// prime_sandbox_exec (Terraform 1.14+ action): prime_sandbox_command's
// command, run ad hoc — from `terraform apply -invoke=...` or a resource's
// action_trigger — through the same runCommand, keeping nothing in state.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/action"
	actionschema "github.com/hashicorp/terraform-plugin-framework/action/schema"
	resourceschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

var (
	_ action.ActionWithConfigure      = (*sandboxExecAction)(nil)
	_ action.ActionWithValidateConfig = (*sandboxExecAction)(nil)
	_ action.ActionWithModifyPlan     = (*sandboxExecAction)(nil)
)

// NewExecAction is the prime_sandbox_exec constructor.
func NewExecAction() action.Action { return &sandboxExecAction{} }

type sandboxExecAction struct{ client *prime.Client }

type sandboxExecModel struct {
	SandboxID types.String `tfsdk:"sandbox_id"`
	Command   types.String `tfsdk:"command"`
	runArguments
}

// execArgumentDocs are the exec actions' descriptions of the shared
// arguments (their types and validators come from the command resources').
var execArgumentDocs = map[string]string{
	"working_dir": "Directory to run in. Unset, the sandbox's default.",
	"env":         "Extra environment variables for the command. Shown in plans: not for secrets, use `env_wo`.",
	"env_wo": "Secret environment variables for the command, write-only: passed to the command, never shown in " +
		"plans, never logged, and a value the command prints is replaced by `***` in the progress output and in " +
		"errors (values of 4 bytes or more).",
	"timeout_seconds": fmt.Sprintf("How long the command may run, in seconds. Default `%d`. On a timeout (or an "+
		"interrupted apply) the command is stopped (SIGTERM, then SIGKILL). The plan warns when it exceeds the "+
		"sandbox's lifetime (`timeout_minutes`).", defaultCommandTimeout),
	"allowed_exit_codes": "Exit codes that count as success. Default `[0]`. Any other fails the action with the " +
		"code and the end of the output.",
	"require_open_egress": "Refuse to run unless the sandbox's egress is open (the policy is read right before " +
		"running; a restricted or not yet enforced one fails the action naming it, and the command never reaches " +
		"the sandbox), as on `prime_sandbox_command`. Default `false`.",
	"sensitive_output": "Treat the output as secret: it is not streamed as progress, never logged, and left out of " +
		"failure messages. Default `false`.",
}

// execArgumentAttributes are the shared arguments as action attributes.
func execArgumentAttributes() map[string]actionschema.Attribute {
	shared := commandArgumentAttributes()
	out := map[string]actionschema.Attribute{}
	for name, doc := range execArgumentDocs {
		out[name] = actionAttribute(shared[name], doc)
	}
	return out
}

// actionAttribute is a resource argument as an action attribute: the same
// type, requiredness and validators, with the action's description. A
// resource default becomes the action's, applied by runArguments.withDefaults.
func actionAttribute(a resourceschema.Attribute, doc string) actionschema.Attribute {
	switch a := a.(type) {
	case resourceschema.StringAttribute:
		return actionschema.StringAttribute{Required: a.Required, Optional: !a.Required, WriteOnly: a.WriteOnly,
			MarkdownDescription: doc, Validators: a.Validators}
	case resourceschema.MapAttribute:
		return actionschema.MapAttribute{Required: a.Required, Optional: !a.Required, WriteOnly: a.WriteOnly,
			ElementType: a.ElementType, MarkdownDescription: doc, Validators: a.Validators}
	case resourceschema.ListAttribute:
		return actionschema.ListAttribute{Required: a.Required, Optional: !a.Required, WriteOnly: a.WriteOnly,
			ElementType: a.ElementType, MarkdownDescription: doc, Validators: a.Validators}
	case resourceschema.SetAttribute:
		return actionschema.SetAttribute{Required: a.Required, Optional: !a.Required,
			ElementType: a.ElementType, MarkdownDescription: doc, Validators: a.Validators}
	case resourceschema.Int64Attribute:
		return actionschema.Int64Attribute{Required: a.Required, Optional: !a.Required, WriteOnly: a.WriteOnly,
			MarkdownDescription: doc, Validators: a.Validators}
	case resourceschema.BoolAttribute:
		return actionschema.BoolAttribute{Required: a.Required, Optional: !a.Required, WriteOnly: a.WriteOnly,
			MarkdownDescription: doc, Validators: a.Validators}
	}
	panic(fmt.Sprintf("actionAttribute: %T has no action form", a)) // a schema bug, caught by every test
}

func (a *sandboxExecAction) Metadata(_ context.Context, req action.MetadataRequest, resp *action.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_sandbox_exec"
}

func (a *sandboxExecAction) Configure(_ context.Context, req action.ConfigureRequest, resp *action.ConfigureResponse) {
	a.client = tfkit.ClientFrom(req.ProviderData, &resp.Diagnostics)
}

func (a *sandboxExecAction) Schema(_ context.Context, _ action.SchemaRequest, resp *action.SchemaResponse) {
	attrs := execArgumentAttributes()
	attrs["sandbox_id"] = actionschema.StringAttribute{Required: true,
		MarkdownDescription: "Sandbox to run in; it must be `RUNNING`."}
	attrs["command"] = actionschema.StringAttribute{Required: true,
		MarkdownDescription: "Command line, run with `/bin/bash -c`.",
		Validators:          []validator.String{stringvalidator.LengthAtLeast(1)}}
	resp.Schema = actionschema.Schema{
		MarkdownDescription: "Runs a command in a sandbox ad hoc (Terraform 1.14+): `terraform apply " +
			"-invoke=action.prime_sandbox_exec.<name>`, or from a resource's `lifecycle { action_trigger { ... } }`. " +
			"It runs exactly as `prime_sandbox_command` runs one — same arguments, same transport (the gateway's " +
			"Connect RPC command session), same timeout and stop-on-timeout, `require_open_egress` gate, `env_wo` " +
			"rules and error texts — and is never retried once it may have reached the sandbox. The output is " +
			"shown as the action's progress (unless `sensitive_output`), and an exit code outside " +
			"`allowed_exit_codes` fails the action.\n\n" + tfkit.ActionsKeepNothing,
		Attributes: attrs,
	}
}

func (a *sandboxExecAction) ValidateConfig(ctx context.Context, req action.ValidateConfigRequest, resp *action.ValidateConfigResponse) {
	var m sandboxExecModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	validateCommandEnv(ctx, m.Env, m.EnvWO, types.Int64Null(), &resp.Diagnostics)
}

// ModifyPlan warns, as prime_sandbox_command's plan does, when the command
// may outlive its sandbox.
func (a *sandboxExecAction) ModifyPlan(ctx context.Context, req action.ModifyPlanRequest, resp *action.ModifyPlanResponse) {
	var m sandboxExecModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	args := m.withDefaults()
	if resp.Diagnostics.HasError() || m.SandboxID.IsUnknown() || args.TimeoutSeconds.IsUnknown() {
		return
	}
	warnCommandsOutliveSandboxes(ctx, a.client, map[string]string{"": m.SandboxID.ValueString()},
		time.Duration(args.TimeoutSeconds.ValueInt64())*time.Second, &resp.Diagnostics)
}

func (a *sandboxExecAction) Invoke(ctx context.Context, req action.InvokeRequest, resp *action.InvokeResponse) {
	if !tfkit.RequireClient(a.client, &resp.Diagnostics) {
		return
	}
	var m sandboxExecModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	spec, d := specOf(ctx, m.withDefaults(), m.EnvWO)
	spec.SandboxID, spec.Command = m.SandboxID.ValueString(), m.Command.ValueString()
	spec.AfterFailure = actionRecordsNothing
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	progress := tfkit.ProgressTo(resp)
	spec.OnOutput = func(stderr bool, chunk []byte) { progress(outputLines("", stderr, chunk)...) }
	res, err := runCommand(ctx, a.client, spec)
	if err != nil {
		resp.Diagnostics.AddError(commandErrorSummary(err), err.Error())
		return
	}
	progress(fmt.Sprintf("sandbox %s: exited with code %d", spec.SandboxID, res.ExitCode))
}

// outputLines turns a chunk of command output into progress lines, each
// prefixed with who printed it (a fleet member's key; "" for a single
// sandbox) and marked when it is stderr.
func outputLines(who string, stderr bool, chunk []byte) []string {
	prefix := ""
	switch {
	case who != "" && stderr:
		prefix = fmt.Sprintf("[%s stderr] ", who)
	case who != "":
		prefix = fmt.Sprintf("[%s] ", who)
	case stderr:
		prefix = "[stderr] "
	}
	text := strings.TrimSuffix(string(chunk), "\n")
	if text == "" {
		return nil
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = prefix + strings.TrimSuffix(l, "\r")
	}
	return lines
}
