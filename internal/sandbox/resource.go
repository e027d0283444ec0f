package sandbox

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/float64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/setplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/primeintellect/terraform-provider-prime/internal/egress"
	"github.com/primeintellect/terraform-provider-prime/internal/journal"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

var (
	_ resource.ResourceWithConfigure      = (*sandboxResource)(nil)
	_ resource.ResourceWithImportState    = (*sandboxResource)(nil)
	_ resource.ResourceWithValidateConfig = (*sandboxResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*sandboxResource)(nil)
	_ resource.ResourceWithIdentity       = (*sandboxResource)(nil)
	_ resource.ResourceWithUpgradeState   = (*sandboxResource)(nil)
)

// NewResource is the prime_sandbox constructor.
func NewResource() resource.Resource { return &sandboxResource{} }

type sandboxResource struct {
	client  *prime.Client
	journal *journal.Creates
}

func (r *sandboxResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_sandbox"
}

func (r *sandboxResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = tfkit.ClientFrom(req.ProviderData, &resp.Diagnostics)
	r.journal = journal.CreatesFrom(req.ProviderData)
}

func (r *sandboxResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = sandboxIdentitySchema()
}

// replaces is appended to every configurable attribute's description: the
// API has no update endpoint.
const replaces = " Changing it replaces the sandbox (the API cannot update a sandbox in place)."

// sandboxArgumentAttributes are the arguments of one sandbox, shared by
// prime_sandbox and the template of prime_sandbox_fleet (same meaning, same
// plan behaviour). replaces ends the description of every argument the API
// cannot change in place.
func sandboxArgumentAttributes(replaces string) map[string]schema.Attribute {
	replaceString := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	keepString := []planmodifier.String{stringplanmodifier.UseStateForUnknown(), stringplanmodifier.RequiresReplace()}
	sdkFloat := func(v float64) []planmodifier.Float64 {
		return []planmodifier.Float64{tfkit.SDKDefaultFloat64(v), float64planmodifier.RequiresReplace()}
	}
	sdkInt := func(v int64) []planmodifier.Int64 {
		return []planmodifier.Int64{tfkit.SDKDefaultInt64(v), int64planmodifier.RequiresReplace()}
	}
	return map[string]schema.Attribute{
		"docker_image": schema.StringAttribute{
			Required: true, PlanModifiers: replaceString,
			MarkdownDescription: "Docker image to run, e.g. `python:3.12-slim`. The first use of an image as a VM " +
				"triggers an image build that can take around ten minutes; the create timeout allows for it." + replaces,
			Validators: []validator.String{stringvalidator.LengthAtLeast(1)},
		},
		"vm": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(true),
			DeprecationMessage: vmDeprecation,
			MarkdownDescription: "Deprecated, and never sent: every sandbox is a VM, since the platform retired " +
				"containers on 2026-09-18. Always `true` in state, so configurations that still set `vm = true` " +
				"plan no change; `vm = false` is refused at plan (the API answers HTTP 410). Remove it from your " +
				"configuration.",
		},
		"start_command": schema.StringAttribute{
			Optional: true, DeprecationMessage: startCommandDeprecation,
			MarkdownDescription: "Retired: the shell-string start command was the containers' form, and setting it " +
				"is refused at plan. Use `start_argv`. Never sent, never in state.",
		},
		"start_argv": schema.ListAttribute{
			Optional: true, ElementType: types.StringType,
			PlanModifiers: []planmodifier.List{listplanmodifier.RequiresReplace()},
			MarkdownDescription: "Start command in argv form — the executable, then its arguments, run without a " +
				"shell — e.g. `[\"/bin/sh\", \"-c\", \"python -m http.server\"]`. It is a one-shot process: **when it " +
				"exits, the sandbox stops**, so give a process that keeps running for as long as the sandbox should. " +
				"At least one element; no NUL bytes. Unset (the usual case), nothing is sent and the sandbox stays up " +
				"until its `timeout_minutes` or `idle_timeout_minutes`." + replaces,
		},
		"arch": schema.StringAttribute{
			Optional: true, Computed: true, PlanModifiers: keepString,
			MarkdownDescription: fmt.Sprintf("CPU architecture: `%s` or `%s`. Sent only when set; unset, the "+
				"platform's default (`%s`) applies, and the architecture the platform reports is read back.",
				prime.ArchAMD64, prime.ArchARM64, prime.DefaultArch) + replaces,
		},
		"cpu_cores": schema.Int64Attribute{
			Optional: true, Computed: true, CustomType: wholeNumberType{}, PlanModifiers: sdkInt(prime.DefaultCPUCores),
			MarkdownDescription: fmt.Sprintf("Number of vCPUs, a whole number of at least 1 (the platform refuses "+
				"fractions). Default `%d`, the platform's; the provider always sends a value. An imported sandbox "+
				"keeps the value the platform reports.", prime.DefaultCPUCores) + replaces,
		},
		"memory_gb": schema.Float64Attribute{
			Optional: true, Computed: true, PlanModifiers: sdkFloat(prime.DefaultMemoryGB),
			MarkdownDescription: fmt.Sprintf("Memory in GB. Must be > 0. Default `%g`, the Prime SDK's, always sent.",
				prime.DefaultMemoryGB) + replaces,
		},
		"disk_size_gb": schema.Float64Attribute{
			Optional: true, Computed: true, PlanModifiers: sdkFloat(prime.DefaultDiskSizeGB),
			MarkdownDescription: fmt.Sprintf("Disk size in GB. Must be > 0. Default `%g`, the Prime SDK's, always sent.",
				prime.DefaultDiskSizeGB) + replaces,
		},
		"gpu_count": schema.Int64Attribute{
			Optional: true, Computed: true, PlanModifiers: sdkInt(0),
			MarkdownDescription: "Number of GPUs. Default `0`, always sent. GPUs need a VM and a `gpu_type`." + replaces,
		},
		"gpu_type": schema.StringAttribute{
			Optional: true, Computed: true, PlanModifiers: keepString,
			MarkdownDescription: "GPU model, e.g. `A100`. Required when `gpu_count` > 0 and refused otherwise." + replaces,
		},
		"timeout_minutes": schema.Int64Attribute{
			Optional: true, Computed: true, PlanModifiers: sdkInt(prime.DefaultTimeoutMinutes),
			MarkdownDescription: fmt.Sprintf("Lifetime in minutes (paused time counts); the platform then stops the "+
				"sandbox with status `TIMEOUT`. `-1` (any negative number) means no lifetime limit; `0` is refused. "+
				"Default `%d`, the platform's, always sent.", prime.DefaultTimeoutMinutes) + replaces,
		},
		"idle_timeout_minutes": schema.Int64Attribute{
			Optional: true, PlanModifiers: []planmodifier.Int64{int64planmodifier.RequiresReplace()},
			MarkdownDescription: fmt.Sprintf("Stop the sandbox after this many minutes without command or file "+
				"activity (any command, upload, download or file read resets the clock; a running command keeps it "+
				"pinned). 1 to %d (24 hours), and at most `timeout_minutes` when that is finite (or its default of "+
				"%d, which the provider sends, when it is unset). Unset, no idle timeout.",
				prime.MaxIdleTimeoutMinutes, prime.DefaultTimeoutMinutes) + replaces,
		},
		"environment_vars": schema.MapAttribute{
			Optional: true, ElementType: types.StringType,
			PlanModifiers: []planmodifier.Map{mapplanmodifier.RequiresReplace()},
			MarkdownDescription: "Environment variables of the sandbox. Names must be valid variable names " +
				"(letters, digits, `_`; not starting with a digit). Not for secrets: values are stored in state " +
				"and returned by the API; use `secrets` or `secrets_wo`." + replaces,
		},
		"labels": schema.SetAttribute{
			Optional: true, ElementType: types.StringType,
			PlanModifiers: []planmodifier.Set{setplanmodifier.RequiresReplace()},
			MarkdownDescription: "Labels for finding sandboxes (see the `prime_sandboxes` data source) and bulk " +
				"clean-up. Non-empty strings." + replaces,
		},
		"team_id": schema.StringAttribute{
			Optional: true, Computed: true, PlanModifiers: keepString,
			MarkdownDescription: "Team that owns the sandbox. Unset, the provider's `team_id` applies, if any, and " +
				"the owner the platform reports is read back." + replaces,
		},
		"region": schema.StringAttribute{
			Optional: true, Computed: true, PlanModifiers: keepString,
			MarkdownDescription: "Region to run in, e.g. `us`. Unset, the platform chooses and its choice is read " +
				"back." + replaces,
		},
		"guaranteed": schema.BoolAttribute{
			Optional: true, DeprecationMessage: guaranteedDeprecation,
			MarkdownDescription: "Retired with containers, whose option it was: `guaranteed = true` is refused at " +
				"plan. Never sent, never in state. Remove it from your configuration.",
		},
		"registry_credentials_id": schema.StringAttribute{
			Optional: true, DeprecationMessage: registryCredentialsDeprecation,
			MarkdownDescription: "Retired with containers, whose option it was: setting it is refused at plan. " +
				"Never sent, never in state. Remove it from your configuration.",
		},
		"secrets": schema.MapAttribute{
			Optional: true, Sensitive: true, ElementType: types.StringType,
			PlanModifiers: []planmodifier.Map{tfkit.ReplaceUnlessImportedMap()},
			MarkdownDescription: "Secret environment variables. Sensitive: hidden in plans and logs, but stored " +
				"in state; use `secrets_wo` to keep them out of state. The API returns them masked, so drift in " +
				"their values cannot be detected. In the environment of every command the sandbox runs; a value a " +
				"command resource's command prints is replaced by `***` in what it records. Conflicts with " +
				"`secrets_wo`." + replaces,
			Validators: []validator.Map{mapvalidator.ConflictsWith(path.MatchRoot("secrets_wo"))},
		},
		"secrets_wo": schema.MapAttribute{
			Optional: true, WriteOnly: true, ElementType: types.StringType,
			MarkdownDescription: "Secret environment variables, write-only: sent at create and never stored in " +
				"state or plan (Terraform 1.11+). Terraform cannot see changes to write-only values, so bump " +
				"`secrets_wo_version` to roll them; that replaces the sandbox. In the environment of every command " +
				"the sandbox runs; a value a command resource's command prints is replaced by `***` in what it " +
				"records (state, plans, `output_dir`, errors, logs). Conflicts with `secrets`.",
		},
		"secrets_wo_version": schema.Int64Attribute{
			Optional:      true,
			PlanModifiers: []planmodifier.Int64{tfkit.ReplaceUnlessImportedInt64()},
			MarkdownDescription: "Any number you change whenever `secrets_wo` changes, so Terraform knows to " +
				"apply the new secrets." + replaces,
		},
	}
}

// sandboxCreateTimeoutOutcome is what prime_sandbox's create timeout
// leaves: the sandbox, in state (its ID was saved before the wait), tainted.
const sandboxCreateTimeoutOutcome = "On timeout the apply fails and what was created stays in state, tainted."

// sandboxTimeoutKeys are the keys of prime_sandbox's (and a fleet's)
// timeouts block. onCreateTimeout says what a create timeout leaves, which
// is where the two differ.
func sandboxTimeoutKeys(what, onCreateTimeout string) map[string]string {
	return map[string]string{
		"create": fmt.Sprintf("How long to wait for %s to be `RUNNING` and reachable through the gateway (default "+
			"`20m`). A first-use VM image build does not count: it has `image_build`, after which this budget "+
			"starts again, as in the Prime SDK. %s", what, onCreateTimeout),
		"image_build": "How long a first-use VM image build may keep a sandbox `PENDING` (default `50m`, the " +
			"Prime SDK's budget; the platform builds a VM image the first time an image runs as a VM, which can " +
			"take around ten minutes).",
		"delete": fmt.Sprintf("How long to wait for %s to be terminated (default `5m`).", what),
		"egress": "How long to wait, after the sandbox is running (or after a change), for the data plane to " +
			"enforce the `egress` block's lists (default `60s`). On timeout the apply fails closed.",
	}
}

func (r *sandboxResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	computedString := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: desc,
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}}
	}
	attrs := sandboxArgumentAttributes(replaces)
	for k, v := range egress.ComputedAttributes() {
		attrs[k] = v
	}
	attrs["id"] = computedString("Sandbox ID assigned by the platform.")
	attrs["name"] = schema.StringAttribute{
		Required: true, PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
		MarkdownDescription: "Display name of the sandbox." + replaces,
		Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
	}
	attrs["status"] = computedString("Lifecycle status the platform reported at the last refresh: `PENDING`, " +
		"`PROVISIONING`, `RUNNING`, `PAUSED`, `ERROR`, `TERMINATED` or `TIMEOUT`. After a create it is `RUNNING`, " +
		"which here means more than the platform's own status: the sandbox's gateway also ran a command (the " +
		"platform's `RUNNING` can briefly lead the gateway's registration), so a command that depends on the " +
		"sandbox can start at once. A refresh that finds the sandbox gone or in a terminal status removes it from " +
		"state, so the next apply recreates it.")
	attrs["created_at"] = computedString("Creation time (RFC 3339).")
	attrs["started_at"] = computedString("Time the sandbox started running (RFC 3339).")
	attrs["disk_mount_path"] = computedString("Where the sandbox's disk is mounted, e.g. `/sandbox-workspace`.")
	attrs["user_id"] = computedString("User that created the sandbox.")

	resp.Schema = schema.Schema{
		Version: SchemaVersion,
		MarkdownDescription: "A Prime sandbox: a microVM booted from a Docker image.\n\n" +
			"Create returns once the sandbox is `RUNNING` and its gateway answers commands (see `status`). The " +
			"sandbox ID is saved to state before the wait, so an interrupted or failed apply leaves a tainted resource " +
			"that the next apply replaces and `terraform destroy` removes — never an untracked sandbox. If Terraform " +
			"itself is killed while creates are in flight, the create journal (see the provider's `create_journal`) " +
			"lets the next apply of the same configuration pick those sandboxes up instead of creating new ones. " +
			"All sandboxes a provider process waits on are polled together (`status:batchGet`, up to 100 per " +
			"request), so a fleet's boot wait costs a handful of requests.\n\n" +
			"Unset resources are sent with the defaults (1 vCPU, 1 GB memory, 5 GB disk, no GPU, a 60-minute " +
			"lifetime; `timeout_minutes = -1` for none). No start command is sent unless `start_argv` is set. The API has no update call: changing any argument replaces the sandbox, " +
			"except the `egress` block, which changes through set-network in place.\n\n" +
			"Egress: a sandbox starts open unless it has an `egress` block (born restricted). For trusted setup with " +
			"the network open first, leave the block out and add a `prime_egress_policy` after the setup commands.",
		Attributes: attrs,
		Blocks: map[string]schema.Block{
			"egress":   egress.Block(egress.SandboxBornFailClosed),
			"timeouts": tfkit.TimeoutsBlock(sandboxTimeoutKeys("the sandbox", sandboxCreateTimeoutOutcome)),
		},
	}
}

// sandboxRuleAttribute maps a create-rule field to the attribute that sets
// it.
func sandboxRuleAttribute(field string, m sandboxTemplate) string {
	switch field {
	case "start_command":
		return "start_argv"
	case "secrets":
		if m.Secrets.IsNull() && !m.SecretsWO.IsNull() {
			return "secrets_wo"
		}
	case "network_allowlist", "network_denylist":
		return "egress"
	}
	return field
}

// validateSandbox checks one sandbox's arguments at plan time: the
// platform's create rules (prime.CreateRules, the same code the client runs
// before sending), the egress block's lists, and what the provider adds.
// prime_sandbox and prime_sandbox_fleet's template share it. (The name is
// checked by its own validator.)
func validateSandbox(ctx context.Context, m sandboxTemplate, diags *diag.Diagnostics) {
	secretsWO, d := tfkit.StringMap(ctx, m.SecretsWO)
	diags.Append(d...)
	createReq, unknown, d := createRequest(ctx, types.StringUnknown(), m, secretsWO)
	diags.Append(d...)
	if m.SecretsWO.IsUnknown() {
		unknown["secrets"] = true
	}
	if m.StartArgv.IsUnknown() {
		unknown["start_command"] = true
	}
	// Name and image are checked by their own validators.
	unknown["name"], unknown["docker_image"] = true, true

	// The egress block's entries are checked by the composition below; the
	// create rules only need to know that lists are sent.
	if eg, d := egress.BlockModelOf(ctx, m.Egress); eg != nil && !d.HasError() {
		eg.Lists.Validate(ctx, egress.BlockPath, diags)
		switch {
		case !eg.Allow.IsNull():
			createReq.NetworkAllowlist = &[]string{}
		case !eg.Block.IsNull():
			createReq.NetworkDenylist = &[]string{}
		}
	}

	retiredSandboxAttributes(m, diags)
	for _, v := range prime.CreateRules(createReq) {
		if anyUnknown(unknown, v.Inputs) {
			continue
		}
		attrName := sandboxRuleAttribute(v.Field, m)
		diags.AddAttributeError(path.Root(attrName), "Invalid sandbox configuration",
			fmt.Sprintf("%s: %s", attrName, v.Message))
	}

	if !m.SecretsWOVersion.IsNull() && m.SecretsWO.IsNull() {
		diags.AddAttributeWarning(path.Root("secrets_wo_version"), "secrets_wo_version without secrets_wo",
			"secrets_wo_version only matters together with secrets_wo.")
	}
}

func (r *sandboxResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m sandboxModel
	resp.Diagnostics.Append(tfkit.GetConfig(ctx, req.Config, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	validateSandbox(ctx, m.template(), &resp.Diagnostics)
}

// ModifyPlan plans the egress attributes (composed lists, a write and its
// generation), says when removing the egress block reopens egress, and
// explains the first plan after an import.
func (r *sandboxResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if !req.State.Raw.IsNull() {
		// Terraform holds this sandbox: its create-journal entry goes.
		var id types.String
		if !req.State.GetAttribute(ctx, path.Root("id"), &id).HasError() {
			r.journal.Forget(id.ValueString())
		}
	}
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan sandboxModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var prior *egress.BlockState
	var state sandboxModel
	if !req.State.Raw.IsNull() {
		resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
		prior = state.egressState()
	}
	es := plan.egressState()
	writes := egress.PlanBlock(ctx, es, prior, &resp.Diagnostics)
	plan.setEgressState(es)
	resp.Diagnostics.Append(tfkit.SetPlan(ctx, &resp.Plan, &plan)...)
	if resp.Diagnostics.HasError() || prior == nil {
		return
	}
	if writes && plan.Egress.IsNull() {
		resp.Diagnostics.AddAttributeWarning(egress.BlockPath, "Removing egress reopens the sandbox",
			fmt.Sprintf("The egress block of sandbox %s is removed: this apply writes an unrestricted egress policy "+
				"to it (in place) and waits until it is enforced.", state.ID.ValueString()))
	}
	if tfkit.WasImported(ctx, req.Private) {
		warnRecordedAfterImport(plan.sandboxInputs, state.sandboxInputs, &resp.Diagnostics)
	}
}

// warnRecordedAfterImport explains the first plan after an import: settings
// the platform cannot report are recorded from the configuration, not
// applied. prime_sandbox and prime_sandbox_fleet's template share it.
func warnRecordedAfterImport(plan, state sandboxInputs, diags *diag.Diagnostics) {
	var recorded []string
	for _, a := range []struct {
		name        string
		plan, state attr.Value
	}{
		{"secrets", plan.Secrets, state.Secrets},
		{"secrets_wo_version", plan.SecretsWOVersion, state.SecretsWOVersion},
	} {
		if !a.plan.Equal(a.state) {
			recorded = append(recorded, a.name)
		}
	}
	if len(recorded) > 0 {
		diags.AddWarning("Imported sandbox: recording settings the platform cannot report",
			fmt.Sprintf("The platform does not report %s of an existing sandbox, and no apply has recorded them "+
				"since the import, so the state has none. This apply records the configured values in state without "+
				"replacing anything and without sending them; the sandbox keeps whatever it was created with. To "+
				"apply them for real, replace it (terraform apply -replace=...). From this apply on, changing them "+
				"replaces it.", strings.Join(recorded, ", ")))
	}
}

func anyUnknown(unknown map[string]bool, fields []string) bool {
	for _, f := range fields {
		if unknown[f] {
			return true
		}
	}
	return false
}

func (r *sandboxResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var plan sandboxModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	var secretsWO types.Map
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("secrets_wo"), &secretsWO)...)
	if resp.Diagnostics.HasError() {
		return
	}
	wo, d := tfkit.StringMap(ctx, secretsWO)
	resp.Diagnostics.Append(d...)
	createReq, _, d := createRequest(ctx, plan.Name, plan.template(), wo)
	resp.Diagnostics.Append(d...)
	born, _ := egress.BornPolicy(ctx, plan.Egress, &resp.Diagnostics)
	egress.SetCreateLists(&createReq, born)
	timeout, d := tfkit.TimeoutOf(plan.Timeouts, "create", defaultSandboxCreateTimeout)
	resp.Diagnostics.Append(d...)
	buildTimeout, d := tfkit.TimeoutOf(plan.Timeouts, "image_build", prime.DefaultImageBuildTimeout)
	resp.Diagnostics.Append(d...)
	egressTimeout, d := tfkit.TimeoutOf(plan.Timeouts, "egress", egress.DefaultTimeout)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}

	postCtx, cancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("create timeout (%s) reached", timeout))
	defer cancel()
	sb, inflight, err := createSandbox(postCtx, r.client, r.journal, createReq)
	if sb == nil {
		resp.Diagnostics.AddError("Cannot create sandbox", err.Error())
		return
	}
	defer inflight.HandOver() // from here on the state returned carries the ID
	// Save the ID before waiting: if the wait fails or the apply is
	// interrupted, Terraform keeps a tainted resource it can destroy, never
	// an untracked sandbox. Born lists are not enforced yet.
	state := plan
	resp.Diagnostics.Append(applySandboxResource(ctx, &state, sb)...)
	state.EgressGeneration, state.EgressOverride = types.Int64Null(), types.Int64Null()
	if born != nil {
		state.EgressApplied = types.BoolValue(false)
	}
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &state)...)
	resp.Diagnostics.Append(setSandboxIdentity(ctx, resp.Identity, state.ID)...)
	if err != nil {
		resp.Diagnostics.AddError("Sandbox create interrupted", interruptedCreate(sb.ID, err)+".\n\n"+taintedNote)
		return
	}
	if resp.Diagnostics.HasError() {
		return
	}
	tflog.Info(ctx, "sandbox created; waiting until it is ready", map[string]any{"sandbox_id": sb.ID, "status": sb.Status})
	if err := awaitSandbox(ctx, r.client, sb.ID, timeout, buildTimeout); err != nil {
		resp.Diagnostics.AddError("Sandbox did not start", err.Error()+".\n\n"+taintedNote)
		return
	}
	if born != nil {
		st, err := egress.WaitBorn(ctx, r.client, sb.ID, egressTimeout)
		if st != nil {
			state.EgressGeneration = types.Int64Value(st.Generation)
		}
		if err != nil {
			resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &state)...)
			resp.Diagnostics.AddError("Born egress policy not enforced", egress.FailClosedMessage(sb.ID, egressTimeout, "egress", err)+"\n\n"+taintedNote)
			return
		}
		state.EgressApplied = types.BoolValue(true)
	}
	sb, err = r.client.GetSandbox(ctx, sb.ID)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the sandbox after it started", err.Error())
		return
	}
	resp.Diagnostics.Append(applySandboxResource(ctx, &state, sb)...)
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &state)...)
}

func (r *sandboxResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var state sandboxModel
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	importRead, d := tfkit.ReadAfterImport(ctx, req.Private, resp.Private)
	resp.Diagnostics.Append(d...)
	resp.Diagnostics.Append(setSandboxIdentity(ctx, resp.Identity, state.ID)...)
	if resp.Diagnostics.HasError() {
		return
	}
	sb, err := r.client.GetSandbox(ctx, state.ID.ValueString())
	switch {
	case errors.Is(err, prime.ErrNotFound):
		resp.Diagnostics.AddWarning("Sandbox is gone",
			fmt.Sprintf("Sandbox %s no longer exists; it is removed from state and the next apply creates a new one.", state.ID.ValueString()))
		resp.State.RemoveResource(ctx)
		return
	case err != nil:
		resp.Diagnostics.AddError("Cannot read sandbox", err.Error())
		return
	}
	if prime.IsTerminalStatus(sb.Status) {
		resp.Diagnostics.AddWarning("Sandbox is no longer running", goneFromStateMessage(sb))
		resp.State.RemoveResource(ctx)
		return
	}
	imported := importRead && state.Egress.IsNull() && state.EgressGeneration.IsNull()
	if gone := refreshSandbox(ctx, r.client, &state, sb, imported, &resp.Diagnostics); gone || resp.Diagnostics.HasError() {
		if gone {
			resp.State.RemoveResource(ctx)
		}
		return
	}
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &state)...)
}

// refreshSandbox merges a read sandbox into state: what Read does once it
// has the sandbox, and what the prime_sandbox list resource does to show
// what an import of it would hold. imported (right after an import, before
// an egress block is known) reads the sandbox's egress lists into the block. It
// reports whether the sandbox is gone.
func refreshSandbox(ctx context.Context, c *prime.Client, state *sandboxModel, sb *prime.Sandbox, imported bool, diags *diag.Diagnostics) (gone bool) {
	diags.Append(applySandboxResource(ctx, state, sb)...)
	if state.Egress.IsNull() && !imported {
		return false
	}
	st, gone, err := egress.ReadStatus(ctx, c, sb.ID)
	switch {
	case err != nil:
		diags.AddError("Cannot read the sandbox's egress policy", err.Error())
		return false
	case gone:
		return true
	}
	if imported {
		eg, d := egress.BlockFromImport(ctx, st)
		diags.Append(d...)
		if eg != nil {
			state.Egress, d = egress.BlockValue(ctx, eg)
			diags.Append(d...)
		}
	}
	es := state.egressState()
	if warning := egress.RefreshBlock(ctx, es, sb.ID, st, diags); warning != "" {
		diags.AddWarning("Egress block overridden", warning)
	}
	state.setEgressState(es)
	if !state.Egress.IsNull() && !state.EgressApplied.ValueBool() {
		diags.AddWarning("Egress policy not enforced",
			fmt.Sprintf("Sandbox %s's egress block (generation %d) is not enforced by the data plane "+
				"(applied_generation %d). The next apply writes it again and waits for enforcement.",
				sb.ID, state.EgressGeneration.ValueInt64(), st.AppliedGeneration))
	}
	return false
}

// goneFromStateMessage explains why a refresh drops a stopped sandbox.
func goneFromStateMessage(sb *prime.Sandbox) string {
	detail := fmt.Sprintf("Sandbox %s is %s", sb.ID, sb.Status)
	if reason := firstNonEmpty(sb.ErrorMessage, sb.TerminationReason, sb.ErrorType); reason != "" {
		detail += " (" + reason + ")"
	}
	return detail + "; it is removed from state and the next apply creates a new one."
}

func firstNonEmpty(ss ...*string) string {
	for _, s := range ss {
		if s != nil && strings.TrimSpace(*s) != "" {
			return *s
		}
	}
	return ""
}

// Update changes the egress block in place (the API has no other update):
// the new lists, or an open policy when the block is removed, written and
// waited for, fail-closed. Otherwise it only carries timeouts edits into
// state and, after an import, records the configured values the platform
// cannot report.
func (r *sandboxResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var plan, state sandboxModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.SecretsWO = types.MapNull(types.StringType)
	if plan.EgressGeneration.IsUnknown() || (plan.Egress.IsNull() && !state.Egress.IsNull()) {
		timeout, d := tfkit.TimeoutOf(plan.Timeouts, "egress", egress.DefaultTimeout)
		resp.Diagnostics.Append(d...)
		policy, ok := egress.BornPolicy(ctx, plan.Egress, &resp.Diagnostics)
		if !ok || resp.Diagnostics.HasError() {
			return
		}
		target := prime.OpenEgressPolicy()
		if policy != nil {
			target = *policy
		}
		id := state.ID.ValueString()
		own, ownGen := egress.PolicyOfBlockState(ctx, *state.egressState(), &resp.Diagnostics)
		st, gen, err := egress.WriteBlock(ctx, r.client, id, target, own, ownGen, timeout)
		if err != nil {
			var layered *egress.LayeredPolicyError
			if errors.As(err, &layered) {
				resp.Diagnostics.AddAttributeError(path.Root("egress"), "Egress block not written", err.Error())
			} else {
				resp.Diagnostics.AddError("Egress policy not enforced", egress.FailClosedMessage(id, timeout, "egress", err))
			}
			// The previous lists stay in state; a write the platform accepted
			// is recorded as ours, not applied, so the next plan writes again.
			resp.State.Raw = req.State.Raw.Copy()
			if gen > 0 && !state.Egress.IsNull() {
				resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("egress_generation"), gen)...)
				resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("egress_applied"), false)...)
			}
			return
		}
		if policy != nil {
			plan.EgressGeneration, plan.EgressApplied = types.Int64Value(gen), types.BoolValue(st.Enforces(gen))
			plan.EgressOverride = types.Int64Null()
		}
	}
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &plan)...)
	resp.Diagnostics.Append(setSandboxIdentity(ctx, resp.Identity, plan.ID)...)
	resp.Diagnostics.Append(tfkit.ClearImported(ctx, resp.Private)...)
}

func (r *sandboxResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var state sandboxModel
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := tfkit.TimeoutOf(state.Timeouts, "delete", defaultSandboxDeleteTimeout)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("delete timeout (%s) reached", timeout))
	defer cancel()
	id := state.ID.ValueString()
	if err := r.client.DeleteSandbox(ctx, id); err != nil && !errors.Is(err, prime.ErrNotFound) {
		resp.Diagnostics.AddError("Cannot delete sandbox", err.Error())
		return
	}
	if err := r.client.WaitForGone(ctx, id); err != nil {
		resp.Diagnostics.AddError("Sandbox was not terminated",
			fmt.Sprintf("sandbox %s: %v", id, err))
	}
}

// ImportState reads the sandbox by ID, or by its identity. What the
// platform cannot report (secrets, secrets_wo_version) is recorded from the configuration by the first
// apply, without replacement (see tfkit.ImportedKey).
func (r *sandboxResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	id, d := tfkit.ImportIDOf(ctx, req, func(m sandboxIdentityModel) (string, error) { return m.ID.ValueString(), nil })
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(importedSandboxState(ctx, &resp.State, id)...)
	resp.Diagnostics.Append(setSandboxIdentity(ctx, resp.Identity, types.StringValue(id))...)
	resp.Diagnostics.Append(tfkit.MarkImported(ctx, resp.Private)...)
}

// importedSandboxState is the state an import of sandbox id starts from,
// before its first Read: the ID.
func importedSandboxState(ctx context.Context, st *tfsdk.State, id string) diag.Diagnostics {
	return st.SetAttribute(ctx, path.Root("id"), id)
}
