package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/float64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/setplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

const (
	defaultSandboxCreateTimeout = 20 * time.Minute
	defaultSandboxDeleteTimeout = 5 * time.Minute
)

var (
	_ resource.ResourceWithConfigure      = (*sandboxResource)(nil)
	_ resource.ResourceWithImportState    = (*sandboxResource)(nil)
	_ resource.ResourceWithValidateConfig = (*sandboxResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*sandboxResource)(nil)
)

// NewSandboxResource is the prime_sandbox constructor.
func NewSandboxResource() resource.Resource { return &sandboxResource{} }

type sandboxResource struct {
	client  *prime.Client
	journal *createJournal
}

func (r *sandboxResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_sandbox"
}

func (r *sandboxResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = clientFrom(req.ProviderData, &resp.Diagnostics)
	r.journal = newCreateJournal("")
	if pd, ok := req.ProviderData.(*providerData); ok && pd.journal != nil {
		r.journal = pd.journal
	}
}

// replaces is appended to every configurable attribute's description: the
// API has no update endpoint.
const replaces = " Changing it replaces the sandbox (the API cannot update a sandbox in place)."

func (r *sandboxResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replaceString := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	keepString := []planmodifier.String{stringplanmodifier.UseStateForUnknown(), stringplanmodifier.RequiresReplace()}
	sdkFloat := func(v float64) []planmodifier.Float64 {
		return []planmodifier.Float64{sdkDefaultFloat64{v}, float64planmodifier.RequiresReplace()}
	}
	sdkInt := func(v int64) []planmodifier.Int64 {
		return []planmodifier.Int64{sdkDefaultInt64{v}, int64planmodifier.RequiresReplace()}
	}
	computedString := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: desc,
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}}
	}

	resp.Schema = schema.Schema{
		MarkdownDescription: "A Prime sandbox: a VM (the platform default) or a container running a Docker image.\n\n" +
			"Create returns once the sandbox is `RUNNING`. The sandbox ID is saved to state before the wait, so an " +
			"interrupted or failed apply leaves a tainted resource that the next apply replaces and `terraform destroy` " +
			"removes — never an untracked sandbox. If Terraform itself is killed while creates are in flight, the " +
			"provider has noted their idempotency keys (in the user cache directory, per working directory) and the " +
			"next apply of the same configuration picks those sandboxes up instead of creating new ones. " +
			"All sandboxes a provider process waits on are polled together " +
			"(`status:batchGet`, up to 100 per request), so a fleet's boot wait costs a handful of requests.\n\n" +
			"The API has no update call: changing any argument replaces the sandbox. Egress restrictions are a " +
			"separate resource, `prime_egress_policy`, so trusted setup can run with the network open first.",
		Attributes: map[string]schema.Attribute{
			"id": computedString("Sandbox ID assigned by the platform."),
			"name": schema.StringAttribute{
				Required: true, PlanModifiers: replaceString,
				MarkdownDescription: "Display name of the sandbox." + replaces,
				Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
			},
			"docker_image": schema.StringAttribute{
				Required: true, PlanModifiers: replaceString,
				MarkdownDescription: "Docker image to run, e.g. `python:3.12-slim`. The first use of an image as a VM " +
					"triggers an image build that can take around ten minutes; the create timeout allows for it." + replaces,
				Validators: []validator.String{stringvalidator.LengthAtLeast(1)},
			},
			"vm": schema.BoolAttribute{
				Optional: true, Computed: true,
				PlanModifiers: []planmodifier.Bool{boolplanmodifier.UseStateForUnknown(), boolplanmodifier.RequiresReplace()},
				MarkdownDescription: "`true` for a VM sandbox, `false` for a container. Unset leaves the choice to the " +
					"platform, whose default is a VM, and reads the result back. Egress policies, GPUs and `start_argv` " +
					"need a VM; `start_command`, `guaranteed` and `registry_credentials_id` need `vm = false`." + replaces,
			},
			"start_command": schema.StringAttribute{
				Optional: true, PlanModifiers: []planmodifier.String{replaceUnlessImportedString()},
				MarkdownDescription: "Shell-string start command, for containers (`vm = false`) only. Unset, the " +
					"provider sends the Prime SDK's default, `tail -f /dev/null`, unless `vm = true` (a VM runs its " +
					"image's default; the platform ignores a shell string on a VM). VMs take `start_argv` instead. " +
					"Conflicts with `start_argv`. Not read back when it is the default." + replaces,
				Validators: []validator.String{stringvalidator.ConflictsWith(path.MatchRoot("start_argv"))},
			},
			"start_argv": schema.ListAttribute{
				Optional: true, ElementType: types.StringType,
				PlanModifiers: []planmodifier.List{listplanmodifier.RequiresReplace()},
				MarkdownDescription: "Start command in argv form — the executable, then its arguments — e.g. " +
					"`[\"/bin/sh\", \"-c\", \"python -m http.server\"]`. VMs need this form; containers accept it " +
					"too. At least one element; no NUL bytes. Unset, a VM runs its image's default. Conflicts with " +
					"`start_command`." + replaces,
			},
			"cpu_cores": schema.Float64Attribute{
				Optional: true, Computed: true, PlanModifiers: sdkFloat(prime.DefaultCPUCores),
				MarkdownDescription: fmt.Sprintf("CPU cores. Must be > 0. Default `%g`, the Prime SDK's: like the SDK, "+
					"the provider always sends a value. An imported sandbox keeps the value the platform reports.",
					prime.DefaultCPUCores) + replaces,
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
				MarkdownDescription: fmt.Sprintf("Lifetime in minutes, counted while the sandbox runs; the platform then "+
					"stops it with status `TIMEOUT`. `-1` means no lifetime limit. Default `%d`, the Prime SDK's, always "+
					"sent.", prime.DefaultTimeoutMinutes) + replaces,
			},
			"idle_timeout_minutes": schema.Int64Attribute{
				Optional: true, PlanModifiers: []planmodifier.Int64{int64planmodifier.RequiresReplace()},
				MarkdownDescription: "Stop the sandbox after this many minutes without command or file activity. " +
					"At least 1, and at most `timeout_minutes` when that is positive (or the platform's 60-minute " +
					"default when it is unset). Containers with an idle timeout need a finite `timeout_minutes`." + replaces,
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
				Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				PlanModifiers: []planmodifier.Bool{replaceUnlessImportedBool()},
				MarkdownDescription: "Guaranteed (non-preemptible) resources. Containers only (`vm = false`); the " +
					"platform allows it for team admins and managers. Default `false`, always sent. Not read back." + replaces,
			},
			"registry_credentials_id": schema.StringAttribute{
				Optional: true, PlanModifiers: replaceString,
				MarkdownDescription: "ID of stored registry credentials for a private image. Containers only " +
					"(`vm = false`)." + replaces,
			},
			"secrets": schema.MapAttribute{
				Optional: true, Sensitive: true, ElementType: types.StringType,
				PlanModifiers: []planmodifier.Map{replaceUnlessImportedMap()},
				MarkdownDescription: "Secret environment variables. Sensitive: hidden in plans and logs, but stored " +
					"in state; use `secrets_wo` to keep them out of state. The API returns them masked, so drift in " +
					"their values cannot be detected. Conflicts with `secrets_wo`." + replaces,
				Validators: []validator.Map{mapvalidator.ConflictsWith(path.MatchRoot("secrets_wo"))},
			},
			"secrets_wo": schema.MapAttribute{
				Optional: true, WriteOnly: true, ElementType: types.StringType,
				MarkdownDescription: "Secret environment variables, write-only: sent at create and never stored in " +
					"state or plan (Terraform 1.11+). Terraform cannot see changes to write-only values, so bump " +
					"`secrets_wo_version` to roll them; that replaces the sandbox. Conflicts with `secrets`.",
			},
			"secrets_wo_version": schema.Int64Attribute{
				Optional:      true,
				PlanModifiers: []planmodifier.Int64{replaceUnlessImportedInt64()},
				MarkdownDescription: "Any number you change whenever `secrets_wo` changes, so Terraform knows to " +
					"apply the new secrets." + replaces,
			},
			"status": computedString("Lifecycle status the platform reported at the last refresh: `PENDING`, " +
				"`PROVISIONING`, `RUNNING`, `PAUSED`, `ERROR`, `TERMINATED` or `TIMEOUT`. A refresh that finds the " +
				"sandbox gone or in a terminal status removes it from state, so the next apply recreates it."),
			"created_at":      computedString("Creation time (RFC 3339)."),
			"started_at":      computedString("Time the sandbox started running (RFC 3339)."),
			"disk_mount_path": computedString("Where the sandbox's disk is mounted, e.g. `/sandbox-workspace`."),
			"user_id":         computedString("User that created the sandbox."),
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{
				Create: true, Delete: true,
				CreateDescription: "How long to wait for the sandbox to be `RUNNING` (default `20m`: a first-use VM " +
					"image build can take about ten minutes). On timeout the apply fails and the sandbox stays in state, tainted.",
				DeleteDescription: "How long to wait for the sandbox to be terminated (default `5m`).",
			}),
		},
	}
}

// sandboxRuleAttribute maps a create-rule field to the attribute that sets
// it.
func sandboxRuleAttribute(field string, m sandboxModel) string {
	switch field {
	case "start_command":
		if !m.StartArgv.IsNull() {
			return "start_argv"
		}
	case "secrets":
		if m.Secrets.IsNull() && !m.SecretsWO.IsNull() {
			return "secrets_wo"
		}
	}
	return field
}

func (r *sandboxResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m sandboxModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	secretsWO, d := stringMap(ctx, m.SecretsWO)
	resp.Diagnostics.Append(d...)
	createReq, unknown, d := createRequestFromModel(ctx, m, secretsWO)
	resp.Diagnostics.Append(d...)
	if m.SecretsWO.IsUnknown() {
		unknown["secrets"] = true
	}
	if m.StartArgv.IsUnknown() {
		unknown["start_command"] = true
	}
	// Name and image are checked by their own validators.
	unknown["name"], unknown["docker_image"] = true, true

	for _, v := range prime.CreateRules(createReq) {
		if anyUnknown(unknown, v.Inputs) {
			continue
		}
		attrName := sandboxRuleAttribute(v.Field, m)
		resp.Diagnostics.AddAttributeError(path.Root(attrName), "Invalid sandbox configuration",
			fmt.Sprintf("%s: %s", attrName, v.Message))
	}

	if !m.TimeoutMinutes.IsNull() && !m.TimeoutMinutes.IsUnknown() {
		if t := m.TimeoutMinutes.ValueInt64(); t != -1 && t < 1 {
			resp.Diagnostics.AddAttributeError(path.Root("timeout_minutes"), "Invalid sandbox configuration",
				fmt.Sprintf("timeout_minutes: must be -1 (no lifetime limit) or at least 1, got %d", t))
		}
	}
	if !m.SecretsWOVersion.IsNull() && m.SecretsWO.IsNull() {
		resp.Diagnostics.AddAttributeWarning(path.Root("secrets_wo_version"), "secrets_wo_version without secrets_wo",
			"secrets_wo_version only matters together with secrets_wo.")
	}
}

// ModifyPlan explains the first plan after an import: settings the platform
// cannot report are recorded from the configuration, not applied.
func (r *sandboxResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || req.State.Raw.IsNull() || !wasImported(ctx, req.Private) {
		return
	}
	var plan, state sandboxModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var recorded []string
	for _, a := range []struct {
		name        string
		plan, state attr.Value
	}{
		{"secrets", plan.Secrets, state.Secrets},
		{"secrets_wo_version", plan.SecretsWOVersion, state.SecretsWOVersion},
		{"guaranteed", plan.Guaranteed, state.Guaranteed},
		{"start_command", plan.StartCommand, state.StartCommand},
	} {
		if !a.plan.Equal(a.state) {
			recorded = append(recorded, a.name)
		}
	}
	if len(recorded) > 0 {
		resp.Diagnostics.AddWarning("Imported sandbox: recording settings the platform cannot report",
			fmt.Sprintf("The platform does not report %s of an existing sandbox, so the imported state has none. "+
				"This apply records the configured values in state without replacing the sandbox and without "+
				"sending them; the sandbox keeps whatever it was created with. To apply them for real, replace it "+
				"(terraform apply -replace=...).", strings.Join(recorded, ", ")))
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
	if !requireClient(r.client, &resp.Diagnostics) {
		return
	}
	var plan sandboxModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	var secretsWO types.Map
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("secrets_wo"), &secretsWO)...)
	if resp.Diagnostics.HasError() {
		return
	}
	wo, d := stringMap(ctx, secretsWO)
	resp.Diagnostics.Append(d...)
	createReq, _, d := createRequestFromModel(ctx, plan, wo)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := plan.Timeouts.Create(ctx, defaultSandboxCreateTimeout)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("create timeout (%s) reached", timeout))
	defer cancel()

	// The journal keeps the key until this Create returns, so a create cut
	// short by a killed Terraform is finished by the next apply instead of
	// leaving an untracked sandbox (create_journal.go).
	inflight := r.journal.begin(createReq)
	createReq.IdempotencyKey = inflight.key
	sb, err := createSandboxTracked(ctx, r.client, createReq)
	if sb != nil && inflight.adopted && !adoptable(sb, createReq) {
		// The leftover key's sandbox is not one this configuration can use
		// (stopped since, or not what the key was recorded for): forget the
		// entry and create with a fresh key.
		tflog.Info(ctx, "create journal: not adopting the sandbox of a leftover key", map[string]any{
			"sandbox_id": sb.ID, "status": sb.Status,
		})
		inflight.finish()
		inflight = r.journal.fresh(requestHash(createReq))
		createReq.IdempotencyKey = inflight.key
		sb, err = createSandboxTracked(ctx, r.client, createReq)
	}
	if sb == nil {
		if definitelyNotCreated(err) {
			inflight.finish()
		}
		resp.Diagnostics.AddError("Cannot create sandbox", err.Error())
		return
	}
	inflight.recordID(sb.ID)
	defer inflight.finish() // from here on the state returned carries the ID
	// Save the ID before waiting: if the wait fails or the apply is
	// interrupted, Terraform keeps a tainted resource it can destroy, never
	// an untracked sandbox.
	state := plan
	resp.Diagnostics.Append(applySandboxResource(ctx, &state, sb)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
	if err != nil {
		resp.Diagnostics.AddError("Sandbox create interrupted", fmt.Sprintf("sandbox %s: %v.\n\nThe sandbox stays in "+
			"state as tainted: the next apply replaces it, and `terraform destroy` removes it.", sb.ID, err))
		return
	}
	if resp.Diagnostics.HasError() {
		return
	}
	tflog.Info(ctx, "sandbox created; waiting for RUNNING", map[string]any{"sandbox_id": sb.ID, "status": sb.Status})

	if err := r.waitRunning(ctx, sb.ID, timeout); err != nil {
		resp.Diagnostics.AddError("Sandbox did not start", err.Error())
		return
	}
	sb, err = r.client.GetSandbox(ctx, sb.ID)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the sandbox after it started", err.Error())
		return
	}
	resp.Diagnostics.Append(applySandboxResource(ctx, &state, sb)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// waitRunning waits on the shared poller and turns its outcome into an
// error a user can act on.
func (r *sandboxResource) waitRunning(ctx context.Context, id string, timeout time.Duration) error {
	var last prime.SandboxStatus
	started := time.Now()
	err := r.client.WaitForRunning(ctx, id, prime.WaitRunningOptions{OnProgress: func(s prime.SandboxStatus) {
		last = s
		fields := map[string]any{"sandbox_id": id, "status": s.Status, "elapsed": time.Since(started).Round(time.Second).String()}
		if s.PendingImageBuildID != nil {
			fields["image_build_id"] = *s.PendingImageBuildID
			tflog.Info(ctx, "sandbox waits for a first-use VM image build (this can take ~10 minutes)", fields)
			return
		}
		tflog.Info(ctx, "sandbox status changed", fields)
	}})
	var failed *prime.SandboxFailedError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &failed):
		return fmt.Errorf("%w.\n\nThe sandbox stays in state as tainted: the next apply replaces it, and "+
			"`terraform destroy` removes it", failed)
	case errInterrupted(ctx):
		return fmt.Errorf("waiting for sandbox %s to be RUNNING was interrupted (last status %s).\n\n"+
			"The sandbox stays in state as tainted: the next apply replaces it, and `terraform destroy` removes it",
			id, orUnknown(last.Status))
	case ctx.Err() != nil:
		msg := fmt.Sprintf("sandbox %s was not RUNNING within the create timeout (%s)", id, timeout)
		if last.Status != "" {
			msg += "; last status " + last.Status
			if last.PendingImageBuildID != nil {
				msg += " with a VM image build still in progress"
			}
		}
		return errors.New(msg + ".\n\nThe sandbox stays in state as tainted. Raise timeouts.create if the image " +
			"needs a first-use VM build")
	}
	return err
}

func (r *sandboxResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if !requireClient(r.client, &resp.Diagnostics) {
		return
	}
	var state sandboxModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
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
		detail := fmt.Sprintf("Sandbox %s is %s", sb.ID, sb.Status)
		if reason := firstNonEmpty(sb.ErrorMessage, sb.TerminationReason, sb.ErrorType); reason != "" {
			detail += " (" + reason + ")"
		}
		resp.Diagnostics.AddWarning("Sandbox is no longer running",
			detail+"; it is removed from state and the next apply creates a new one.")
		resp.State.RemoveResource(ctx)
		return
	}
	resp.Diagnostics.Append(applySandboxResource(ctx, &state, sb)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func firstNonEmpty(ss ...*string) string {
	for _, s := range ss {
		if s != nil && strings.TrimSpace(*s) != "" {
			return *s
		}
	}
	return ""
}

// Update changes nothing on the platform (it has no update call): it carries
// timeouts-block edits into state, and after an import records the
// configured values the platform cannot report.
func (r *sandboxResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan sandboxModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	plan.SecretsWO = types.MapNull(types.StringType)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	resp.Diagnostics.Append(clearImported(ctx, resp.Private)...)
}

func (r *sandboxResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	if !requireClient(r.client, &resp.Diagnostics) {
		return
	}
	var state sandboxModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := state.Timeouts.Delete(ctx, defaultSandboxDeleteTimeout)
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

// ImportState reads the sandbox by ID. What the platform cannot report
// (secrets, secrets_wo_version, guaranteed, a default start_command) is
// recorded from the configuration by the first apply, without replacement
// (see importedKey).
func (r *sandboxResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resource.ImportStatePassthroughID(ctx, path.Root("id"), req, resp)
	resp.Diagnostics.Append(markImported(ctx, resp.Private)...)
}

// requireClient reports a clear error when the provider could not be
// configured (for example because its api_key is only known after apply).
func requireClient(c *prime.Client, diags interface {
	AddError(summary, detail string)
}) bool {
	if c == nil {
		diags.AddError("Provider not configured",
			"The prime provider has no API client: its configuration was incomplete or not yet known. "+
				"Set api_key (or PRIME_API_KEY) to a value known at plan time.")
		return false
	}
	return true
}
