package provider

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// maxCommandOutput is how much of stdout and of stderr is kept in state:
// the last 64 KiB, where a failing command usually explains itself.
const maxCommandOutput = 64 << 10

// defaultCommandTimeout is the command timeout when timeout_seconds is unset
// (the SDK's default).
const defaultCommandTimeout = 300

var (
	_ resource.ResourceWithConfigure      = (*sandboxCommandResource)(nil)
	_ resource.ResourceWithValidateConfig = (*sandboxCommandResource)(nil)
)

// NewSandboxCommandResource is the prime_sandbox_command constructor.
func NewSandboxCommandResource() resource.Resource { return &sandboxCommandResource{} }

type sandboxCommandResource struct {
	client *prime.Client
}

type sandboxCommandModel struct {
	ID               types.String `tfsdk:"id"`
	SandboxID        types.String `tfsdk:"sandbox_id"`
	Command          types.String `tfsdk:"command"`
	WorkingDir       types.String `tfsdk:"working_dir"`
	Env              types.Map    `tfsdk:"env"`
	TimeoutSeconds   types.Int64  `tfsdk:"timeout_seconds"`
	Triggers         types.Map    `tfsdk:"triggers"`
	AllowedExitCodes types.List   `tfsdk:"allowed_exit_codes"`
	ExitCode         types.Int64  `tfsdk:"exit_code"`
	Stdout           types.String `tfsdk:"stdout"`
	Stderr           types.String `tfsdk:"stderr"`
	OutputTruncated  types.Bool   `tfsdk:"output_truncated"`
	ExecutedAt       types.String `tfsdk:"executed_at"`
}

func (r *sandboxCommandResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_sandbox_command"
}

func (r *sandboxCommandResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = clientFrom(req.ProviderData, &resp.Diagnostics)
}

const rerun = " Changing it runs the command again (the resource is replaced)."

func (r *sandboxCommandResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	computedString := func(d string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: d,
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Runs a command in a sandbox once, at create, through the platform's exec path — " +
			"trusted setup as a node in the dependency graph. The whole evaluation protocol then reads as HCL: " +
			"sandbox → setup commands (network open) → `prime_egress_policy` → agent command, each step " +
			"`depends_on` the previous one; destroy walks it backwards.\n\n" +
			"An exit code outside `allowed_exit_codes` fails the apply with the code and the end of the output, and " +
			"nothing is stored, so the next apply runs the command again. A command is never retried after it may " +
			"have reached the sandbox.\n\n" +
			"The result is history: refresh and destroy make no API call, and import is not supported (there is " +
			"nothing on the platform to import). To run a command again, change `triggers` (or any argument), or " +
			"use `terraform apply -replace`.",
		Attributes: map[string]schema.Attribute{
			"id": computedString("Unique ID of this execution."),
			"sandbox_id": schema.StringAttribute{
				Required: true, PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
				MarkdownDescription: "Sandbox to run in; it must be `RUNNING`." + rerun,
			},
			"command": schema.StringAttribute{
				Required: true, PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
				MarkdownDescription: "Command line, run through the sandbox's shell." + rerun,
				Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
			},
			"working_dir": schema.StringAttribute{
				Optional: true, PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
				MarkdownDescription: "Directory to run in. Unset, the sandbox's default." + rerun,
			},
			"env": schema.MapAttribute{
				Optional: true, ElementType: types.StringType,
				PlanModifiers:       []planmodifier.Map{mapplanmodifier.RequiresReplace()},
				MarkdownDescription: "Extra environment variables for the command. Stored in state; not for secrets." + rerun,
			},
			"timeout_seconds": schema.Int64Attribute{
				Optional: true, Computed: true, Default: int64default.StaticInt64(defaultCommandTimeout),
				PlanModifiers:       []planmodifier.Int64{int64planmodifier.RequiresReplace()},
				MarkdownDescription: fmt.Sprintf("How long the command may run, in seconds. Default `%d`.", defaultCommandTimeout) + rerun,
				Validators:          []validator.Int64{int64validator.Between(1, 24*3600)},
			},
			"triggers": schema.MapAttribute{
				Optional: true, ElementType: types.StringType,
				PlanModifiers: []planmodifier.Map{mapplanmodifier.RequiresReplace()},
				MarkdownDescription: "Arbitrary values; changing any of them runs the command again (for example a " +
					"hash of a setup script, or the ID of a resource the command must follow)." + rerun,
			},
			"allowed_exit_codes": schema.ListAttribute{
				Optional: true, Computed: true, ElementType: types.Int64Type,
				Default:       listdefault.StaticValue(types.ListValueMust(types.Int64Type, []attr.Value{types.Int64Value(0)})),
				PlanModifiers: []planmodifier.List{listplanmodifier.RequiresReplace()},
				MarkdownDescription: "Exit codes that count as success. Default `[0]`. An agent probe that may " +
					"legitimately fail can allow, say, `[0, 7]` and read `exit_code`." + rerun,
				Validators: []validator.List{listvalidator.SizeAtLeast(1), listvalidator.UniqueValues(),
					listvalidator.ValueInt64sAre(int64validator.Between(0, 255))},
			},
			"exit_code": schema.Int64Attribute{
				Computed: true, MarkdownDescription: "Exit code of the command.",
				PlanModifiers: []planmodifier.Int64{int64planmodifier.UseStateForUnknown()},
			},
			"stdout": computedString("Standard output: the last 64 KiB."),
			"stderr": computedString("Standard error: the last 64 KiB."),
			"output_truncated": schema.BoolAttribute{
				Computed: true, MarkdownDescription: "Whether `stdout` or `stderr` was cut to its last 64 KiB.",
				PlanModifiers: []planmodifier.Bool{boolplanmodifier.UseStateForUnknown()},
			},
			"executed_at": computedString("When the command finished (RFC 3339)."),
		},
	}
}

func (r *sandboxCommandResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var env types.Map
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("env"), &env)...)
	vars, d := stringMap(ctx, env)
	resp.Diagnostics.Append(d...)
	for name := range vars {
		if !prime.ValidEnvName(name) {
			resp.Diagnostics.AddAttributeError(path.Root("env"), "Invalid command configuration",
				fmt.Sprintf("env: %q is not a valid variable name (letters, digits and _, not starting with a digit)", name))
		}
	}
}

func (r *sandboxCommandResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	if !requireClient(r.client, &resp.Diagnostics) {
		return
	}
	var plan sandboxCommandModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	env, d := stringMap(ctx, plan.Env)
	resp.Diagnostics.Append(d...)
	var allowed []int64
	resp.Diagnostics.Append(plan.AllowedExitCodes.ElementsAs(ctx, &allowed, false)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id := plan.SandboxID.ValueString()
	timeout := time.Duration(plan.TimeoutSeconds.ValueInt64()) * time.Second
	tflog.Info(ctx, "running command", map[string]any{"sandbox_id": id, "timeout": timeout.String()})
	res, err := r.client.Exec(ctx, id, prime.ExecRequest{
		Command: plan.Command.ValueString(), WorkingDir: plan.WorkingDir.ValueString(), Env: env, Timeout: timeout,
	})
	if err != nil {
		summary := "Command failed to run"
		if errors.Is(err, prime.ErrExecTimeout) {
			summary = "Command timed out"
		}
		resp.Diagnostics.AddError(summary, fmt.Sprintf("sandbox %s: %v", id, err))
		return
	}
	if !slices.Contains(allowed, int64(res.ExitCode)) {
		resp.Diagnostics.AddError("Command exited with a disallowed code", commandFailure(id, res, allowed))
		return
	}
	stdout, cutOut := tail(res.Stdout, maxCommandOutput)
	stderr, cutErr := tail(res.Stderr, maxCommandOutput)
	plan.ID = types.StringValue(id + "/" + prime.NewIdempotencyKey()[:16])
	plan.ExitCode = types.Int64Value(int64(res.ExitCode))
	plan.Stdout = types.StringValue(stdout)
	plan.Stderr = types.StringValue(stderr)
	plan.OutputTruncated = types.BoolValue(cutOut || cutErr)
	plan.ExecutedAt = types.StringValue(time.Now().UTC().Format(time.RFC3339))
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// commandFailure is the error for a disallowed exit code: the code and the
// end of the output, stderr first, where failures explain themselves.
func commandFailure(id string, res *prime.ExecResult, allowed []int64) string {
	const show = 2048
	var b strings.Builder
	fmt.Fprintf(&b, "The command in sandbox %s exited with code %d (allowed: %v).", id, res.ExitCode, allowed)
	for _, s := range []struct{ name, text string }{{"stderr", res.Stderr}, {"stdout", res.Stdout}} {
		if strings.TrimSpace(s.text) == "" {
			continue
		}
		t, cut := tail(s.text, show)
		if cut {
			t = "…" + t
		}
		fmt.Fprintf(&b, "\n\nLast of %s:\n%s", s.name, strings.TrimRight(t, "\n"))
	}
	b.WriteString("\n\nNothing was stored: the next apply runs the command again.")
	return b.String()
}

// tail returns the last maxBytes bytes of s as valid UTF-8 (state strings must
// be), cut at a character boundary, and whether anything was cut.
func tail(s string, maxBytes int) (string, bool) {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= maxBytes {
		return s, false
	}
	start := len(s) - maxBytes
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	return s[start:], true
}

// Read touches no API: a command's result is history.
func (r *sandboxCommandResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	resp.State.Raw = req.State.Raw
}

// Update is never called with a change: every argument replaces.
func (r *sandboxCommandResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	resp.State.Raw = req.Plan.Raw
}

// Delete touches no API: there is nothing to undo on the platform.
func (r *sandboxCommandResource) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {
}
