package sandbox

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
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
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/egress"
	"github.com/primeintellect/terraform-provider-prime/internal/journal"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
	"github.com/primeintellect/terraform-provider-prime/internal/volume"
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
	// recovery adopts what a lost apply created (recovery.go).
	recovery *Recovery
}

func (r *sandboxResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_sandbox"
}

func (r *sandboxResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = tfkit.ClientFrom(req.ProviderData, &resp.Diagnostics)
	r.journal = journal.CreatesFrom(req.ProviderData)
	r.recovery = RecoveryFrom(req.ProviderData)
}

func (r *sandboxResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = sandboxIdentitySchema()
}

// replaces is appended to every configurable attribute's description: the
// API has no update endpoint.
const replaces = " Changing it replaces the sandbox (the API cannot update a sandbox in place)."

// adoptedAfterImport ends the description of checkpoint_id and
// restore_memory (adoptsRestore).
const adoptedAfterImport = " Except on the first apply after an import: the platform does not report the " +
	"checkpoint a sandbox was restored from, so that apply records `checkpoint_id` and `restore_memory` as " +
	"configured without replacing (the plan warns), unless the platform reports a different checkpoint."

// sandboxArgumentAttributes are the arguments of one sandbox, shared by
// prime_sandbox and the template of prime_sandbox_fleet (same meaning, same
// plan behaviour). replaces ends the description of every argument the API
// cannot change in place.
func sandboxArgumentAttributes(replaces string) map[string]schema.Attribute {
	keepString := []planmodifier.String{stringplanmodifier.UseStateForUnknown(), stringplanmodifier.RequiresReplace()}
	// then runs after the SDK default and before the replace check.
	sdkFloat := func(v float64, then ...planmodifier.Float64) []planmodifier.Float64 {
		return append(append([]planmodifier.Float64{tfkit.SDKDefaultFloat64(v)}, then...), float64planmodifier.RequiresReplace())
	}
	sdkInt := func(v int64, then ...planmodifier.Int64) []planmodifier.Int64 {
		return append(append([]planmodifier.Int64{tfkit.SDKDefaultInt64(v)}, then...), int64planmodifier.RequiresReplace())
	}
	return map[string]schema.Attribute{
		"docker_image": schema.StringAttribute{
			Optional: true, PlanModifiers: []planmodifier.String{replaceUnlessRestoreAdoptedString()},
			MarkdownDescription: "Docker image to run, e.g. `python:3.12-slim`. Exactly one of `docker_image` and " +
				"`checkpoint_id` (checked at plan). The first use of an image as a VM triggers an image build that can " +
				"take around ten minutes; the create timeout allows for it." + replaces + " (After an import, a " +
				"configuration that restores a checkpoint records `docker_image` as unset without replacing.)",
			Validators: []validator.String{stringvalidator.LengthAtLeast(1)},
		},
		"checkpoint_id": schema.StringAttribute{
			Optional: true, PlanModifiers: []planmodifier.String{replaceUnlessRestoreAdoptedString()},
			MarkdownDescription: "Boot from a checkpoint instead of an image, e.g. `prime_sandbox_checkpoint.setup.id`: " +
				"the sandbox starts with the checkpoint's root file system (processes restart unless `restore_memory`), " +
				"its image and its disk size. The checkpoint must be `DURABLE` and the caller's (or the team's); one " +
				"checkpoint can be restored any number of times. Exactly one of `docker_image` and `checkpoint_id`; " +
				"`disk_size_gb` must be unset (both checked at plan); `docker_image` stays unset in state. Volumes are " +
				"never part of a checkpoint: attach them with `volumes`. With an `egress` block the sandbox is created " +
				"open and locked right after it is `RUNNING`, through the same fail-closed wait, before the create " +
				"returns (the platform does not say whether a restore can carry the lists). Unset (the default), the " +
				"sandbox boots `docker_image`." + replaces + adoptedAfterImport,
			Validators: []validator.String{stringvalidator.LengthBetween(1, prime.MaxCheckpointIDLength)},
		},
		"restore_memory": schema.BoolAttribute{
			Optional: true, PlanModifiers: []planmodifier.Bool{replaceUnlessRestoreAdoptedBool()},
			MarkdownDescription: "With `checkpoint_id` only (checked at plan): `true` restores a pause checkpoint's " +
				"memory too, so the sandbox continues where it was paused, with the paused sandbox's CPU and memory " +
				"(unset `cpu_cores` and `memory_gb` are then read back, not defaulted). The platform refuses (HTTP " +
				"409) a checkpoint without memory (only a pause takes one). Memory forks share random-number state, " +
				"keys and tokens. Processes resumed from memory run as soon as the sandbox is `RUNNING`: with an `egress` " +
				"block the lock is written at that moment and enforced before the create returns, but a resumed process " +
				"is not held until then [I: the contract does not show lists on a restore], so pause under the lock " +
				"what must never run open. Unset or `false` (the default): a cold boot from the checkpoint's files." + replaces +
				adoptedAfterImport,
		},
		"volumes": volumeAttachments(replaces),
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
			Optional: true, Computed: true, CustomType: wholeNumberType{},
			PlanModifiers: sdkInt(prime.DefaultCPUCores, takenFromCheckpoint{memoryOnly: true}),
			MarkdownDescription: fmt.Sprintf("Number of vCPUs, a whole number of at least 1 (the platform refuses "+
				"fractions). Default `%d`, the platform's; the provider always sends a value (except with "+
				"`restore_memory`, which keeps the paused sandbox's). An imported sandbox keeps the value the platform "+
				"reports.", prime.DefaultCPUCores) + replaces,
		},
		"memory_gb": schema.Float64Attribute{
			Optional: true, Computed: true, PlanModifiers: sdkFloat(prime.DefaultMemoryGB, takenFromCheckpoint{memoryOnly: true}),
			MarkdownDescription: fmt.Sprintf("Memory in GB. Must be > 0. Default `%g`, the Prime SDK's, always sent "+
				"(except with `restore_memory`, which keeps the paused sandbox's).", prime.DefaultMemoryGB) + replaces,
		},
		"disk_size_gb": schema.Float64Attribute{
			Optional: true, Computed: true, PlanModifiers: sdkFloat(prime.DefaultDiskSizeGB, takenFromCheckpoint{}),
			MarkdownDescription: fmt.Sprintf("Disk size in GB. Must be > 0. Default `%g`, the Prime SDK's, always sent "+
				"when booting an image. Must be unset with `checkpoint_id` (checked at plan): a restore takes the "+
				"checkpoint's disk size, which is read back.", prime.DefaultDiskSizeGB) + replaces,
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

// volumeAttachments is the `volumes` argument: internal/volume's
// attachment list (its plan check is in validateSandbox), a create field.
func volumeAttachments(replaces string) schema.ListNestedAttribute {
	a := volume.AttachmentsAttribute(replaces)
	a.PlanModifiers = []planmodifier.List{listplanmodifier.RequiresReplace()}
	a.MarkdownDescription += " Unset (the default), no volume is attached."
	return a
}

// pausedDescription is the `paused` argument's description; what is
// paused is a sandbox, or every member of a fleet.
func pausedDescription(what string) string {
	return "Pause or resume " + what + " in place: `true` pauses (waits until `PAUSED`), `false` resumes (waits " +
		"until `RUNNING`). Unset (the default), the provider neither pauses nor resumes and reports no drift " +
		"whatever the status. A paused sandbox keeps memory and disk and is billed at the disk rate only; paused " +
		"time counts toward `timeout_minutes` (a sandbox that times out while paused is terminated); commands, file " +
		"transfers and SSH need `RUNNING`, so `prime_command` and `prime_fleet_command` on a paused sandbox fail. An " +
		"egress policy replaced while paused is accepted and applies on resume; until then the policy resources " +
		"report it as not enforced (pending). A resume is checked like a create and can be refused at an account " +
		"limit; the sandbox then stays `PAUSED` and the apply fails. When the configured value is set, a sandbox " +
		"paused or resumed outside Terraform shows as drift. Changing it never replaces anything. Each pause makes " +
		"the platform take a checkpoint of its own (disk and memory), which outlives the sandbox once `DURABLE` and " +
		"is billed until deleted: the provider records the ones its pauses took (across pause and resume cycles) " +
		"and deletes them once the sandbox is deleted (destroy, replacement, a fleet member removed or redone); a " +
		"checkpoint `prime_sandbox_checkpoint` takes is never among them. An import does not know the pause " +
		"checkpoints taken before it, nor those of pauses made outside Terraform: delete them by hand. A pause " +
		"checkpoint that cannot be deleted fails the apply or destroy, naming it, and stays recorded, so the next " +
		"apply or destroy deletes it again (a sandbox found gone with such checkpoints stays in state, to be " +
		"replaced or destroyed). `timeouts.update` bounds each pause and resume."
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
		"delete": fmt.Sprintf("How long to wait for %s to be terminated (default `5m`); then, as long again, "+
			"for a pause checkpoint still uploading (which the platform refuses to delete until then) before "+
			"deleting it.", what),
		"update": fmt.Sprintf("How long one pause or resume (`paused`) of %s may take, with its wait for `PAUSED`, "+
			"or for `RUNNING` and the gateway (default `10m`). On timeout the apply fails and the previous `paused` "+
			"stays in state, so the next plan proposes the change again.", what),
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
		MarkdownDescription: fmt.Sprintf("Display name of the sandbox, 1 to %d characters.", prime.MaxSandboxNameChars) + replaces,
		Validators:          []validator.String{stringvalidator.LengthAtLeast(1), stringvalidator.UTF8LengthAtMost(prime.MaxSandboxNameChars)},
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
	attrs["paused"] = schema.BoolAttribute{Optional: true, MarkdownDescription: pausedDescription("the sandbox")}
	attrs["retire_after_checkpoint"] = retireAfterCheckpointAttribute()

	resp.Schema = schema.Schema{
		Version: SchemaVersion,
		MarkdownDescription: "A Prime sandbox: a microVM booted from a Docker image, or restored from a checkpoint (`checkpoint_id`).\n\n" +
			"Create returns once the sandbox is `RUNNING` and its gateway answers commands (see `status`). The " +
			"sandbox ID is saved to state before the wait, so an interrupted or failed apply leaves a tainted resource " +
			"that the next apply replaces and `terraform destroy` removes — never an untracked sandbox. If Terraform " +
			"itself is killed while creates are in flight, the next apply of the same configuration picks those " +
			"sandboxes up instead of creating new ones: on the same machine from the create journal (see the " +
			"provider's `create_journal`), on any machine from the platform, by the labels every sandbox is created " +
			"with (see the provider's `workspace_scope` and `platform_recovery`). " +
			"All sandboxes a provider process waits on are polled together (`status:batchGet`, up to 100 per " +
			"request), so a fleet's boot wait costs a handful of requests.\n\n" +
			"Unset resources are sent with the defaults (1 vCPU, 1 GB memory, 5 GB disk, no GPU, a 60-minute " +
			"lifetime; `timeout_minutes = -1` for none). No start command is sent unless `start_argv` is set. The API has no update call: changing any argument replaces the sandbox, " +
			"except the `egress` block, which changes through set-network in place, and `paused`, which pauses or " +
			"resumes it in place.\n\n" +
			"Egress: a sandbox starts open unless it has an `egress` block (born restricted). For trusted setup with " +
			"the network open first, leave the block out and add a `prime_egress_policy` after the setup commands.",
		Attributes: attrs,
		Blocks: map[string]schema.Block{
			"egress":   egress.Block(egress.SandboxBornFailClosed),
			"timeouts": tfkit.TimeoutsBlock(sandboxTimeoutKeys("the sandbox", sandboxCreateTimeoutOutcome)),
		},
	}
}
