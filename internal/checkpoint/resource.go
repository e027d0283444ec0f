package checkpoint

// prime_sandbox_checkpoint: POST /sandbox/{id}/checkpoints, then the
// client's shared batched wait until the checkpoint is DURABLE, failing
// closed on FAILED, on a checkpoint lost with its sandbox, and on the
// create timeout.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/primeintellect/terraform-provider-prime/internal/journal"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

var (
	_ resource.ResourceWithConfigure   = (*checkpointResource)(nil)
	_ resource.ResourceWithImportState = (*checkpointResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*checkpointResource)(nil)
	_ resource.ResourceWithIdentity    = (*checkpointResource)(nil)
)

// NewResource is the prime_sandbox_checkpoint constructor.
func NewResource() resource.Resource { return &checkpointResource{} }

type checkpointResource struct {
	client *prime.Client
	// journal notes each checkpoint request until Terraform holds it.
	journal *journal.Checkpoints
}

func (r *checkpointResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_sandbox_checkpoint"
}

func (r *checkpointResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = tfkit.ClientFrom(req.ProviderData, &resp.Diagnostics)
	r.journal = journal.CheckpointsFrom(req.ProviderData)
}

func (r *checkpointResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = identitySchema()
}

func (r *checkpointResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	keep := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	keepInt := []planmodifier.Int64{int64planmodifier.UseStateForUnknown()}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A checkpoint of a running VM sandbox's root file system, from which any number of " +
			"sandboxes can be restored (`checkpoint_id`): run the trusted setup once in a template sandbox, " +
			"checkpoint it, fan out.\n\n" +
			"Create requests the checkpoint and returns only once the platform reports it `DURABLE` (restorable, and " +
			"outliving its sandbox). It fails closed: a checkpoint that goes `FAILED` is deleted and reported; one " +
			"lost because its sandbox was deleted or ended before it was `DURABLE` (the platform discards such " +
			"checkpoints with their sandbox) is reported as lost and not recorded; one still uploading when " +
			"`timeouts.create` (default 20 minutes) ends is recorded as tainted, so the next apply deletes it and " +
			"takes a new one. Nothing that depends on this resource starts on a checkpoint that is not `DURABLE`. If " +
			"Terraform itself is killed while the checkpoint uploads, the next apply of the same configuration adopts " +
			"it rather than taking a second one: on the same machine from the create journal (see the provider's " +
			"`create_journal`), on any machine from a marker written into the source sandbox right after the request " +
			"(`/tmp/prime-checkpoints/<configuration hash>/<checkpoint id>`).\n\n" +
			"Only the root file system is checkpointed (never volumes), and only files: processes restart in a " +
			"restored sandbox. Order it after the setup with `depends_on` (or `triggers`). Destroy deletes the " +
			"checkpoint (its storage billing stops); one already gone counts as deleted, so destroy never fails on a " +
			"checkpoint deleted elsewhere. A refresh that finds it gone (deleted elsewhere, or expired after " +
			"`ttl_seconds`) removes it from state, and the next apply takes a new one; with `source_after = " +
			"\"pause\"` it stays in state as `DELETING` instead, so that the next apply replaces it (resuming the " +
			"source and deleting the checkpoint the pause took before checkpointing the source again). One found " +
			"`FAILED` or `DELETING` is replaced. Either way the plan says so once, and replaces what was restored " +
			"from it.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{Computed: true, MarkdownDescription: idDoc, PlanModifiers: keep},
			"sandbox_id": schema.StringAttribute{
				Required: true, MarkdownDescription: sandboxDoc + " Changing it replaces the checkpoint.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"ttl_seconds": schema.Int64Attribute{
				Optional: true,
				MarkdownDescription: fmt.Sprintf("Delete the checkpoint this many seconds after it was requested "+
					"(%d to %d, i.e. one minute to 365 days). Unset: it is kept until destroyed. Once it has expired, "+
					"a refresh finds it gone and the next apply takes a new one. Changing it replaces the checkpoint "+
					"(except on the first apply after an import, which records it: the platform does not report it).",
					MinTTLSeconds, MaxTTLSeconds),
				Validators:    []validator.Int64{int64validator.Between(MinTTLSeconds, MaxTTLSeconds)},
				PlanModifiers: []planmodifier.Int64{tfkit.ReplaceUnlessImportedInt64()},
			},
			"triggers": schema.MapAttribute{
				Optional: true, ElementType: types.StringType,
				MarkdownDescription: "Arbitrary values whose change replaces the checkpoint — typically the `id`s " +
					"of the setup commands, so a re-run of the setup is checkpointed again " +
					"(`triggers = { setup = prime_sandbox_command.setup.id }`). The values are only compared. Changing " +
					"it replaces the checkpoint (except on the first apply after an import, which records it).",
				PlanModifiers: []planmodifier.Map{tfkit.ReplaceUnlessImportedMap()},
			},
			"source_after": schema.StringAttribute{
				Optional: true, Computed: true, Default: stringdefault.StaticString(SourceKeep),
				MarkdownDescription: "What happens to the source sandbox once the checkpoint is `DURABLE`: `\"keep\"` " +
					"(default) leaves it running; `\"delete\"` deletes it and waits until it is gone (within " +
					"`timeouts.create`), so a template stops being billed at all as soon as the fleet can be restored " +
					"from the checkpoint, which outlives it: set `retire_after_checkpoint = true` on the template's " +
					"`prime_sandbox`, so that its refresh keeps it in state, retired, and the plan stays empty (a new " +
					"setup replaces the template, whose new checkpoint retires it again); `\"pause\"` pauses it and " +
					"waits until it is `PAUSED`, so it stops costing compute (a paused VM is billed for disk only, and " +
					"the checkpoint its pause takes for storage) but can run commands again once resumed. The source is " +
					"never paused or deleted before the checkpoint is `DURABLE` (a checkpoint of a sandbox that ends " +
					"first is lost). A pause or delete that fails is a warning, " +
					"not an error: the checkpoint is durable and recorded, and nothing restored from it is held back. " +
					"With `\"pause\"`: " +
					"Destroy resumes the source (if it still exists) before deleting the checkpoint, leaving it " +
					"`RUNNING` as the create found it, so that what depends on it can be torn down or run again (a " +
					"paused sandbox runs no command: a file's removal, a new setup). A source found `PAUSED` when a new " +
					"checkpoint is taken (an earlier one paused it, and its record was lost) is resumed first, then " +
					"paused again. Leave the source's `paused` unset " +
					"(unmanaged), or it would resume it. Changing `source_after` updates in place and only records the " +
					"value: it acts on the next checkpoint or destroy, never pauses, resumes or deletes the source by " +
					"itself.",
				Validators: []validator.String{stringvalidator.OneOf(SourceKeep, SourcePause, SourceDelete)},
			},
			"pause_checkpoint_id": schema.StringAttribute{
				Computed: true, PlanModifiers: keep,
				MarkdownDescription: "With `source_after = \"pause\"`: the checkpoint the platform itself takes when " +
					"it pauses the source (disk and memory, which outlives the source once it is `DURABLE`). Destroy " +
					"deletes it with this checkpoint, so pausing the template leaves no storage behind. Null otherwise, " +
					"and null if the platform listed none right after the pause.",
			},
			"state": schema.StringAttribute{Computed: true, MarkdownDescription: stateDoc + " Always `DURABLE` " +
				"after a successful apply; a refresh that finds `FAILED` or `DELETING` plans a replacement."},
			"parent_id":       schema.StringAttribute{Computed: true, MarkdownDescription: parentDoc, PlanModifiers: keep},
			"depth":           schema.Int64Attribute{Computed: true, MarkdownDescription: depthDoc, PlanModifiers: keepInt},
			"docker_image":    schema.StringAttribute{Computed: true, MarkdownDescription: imageDoc, PlanModifiers: keep},
			"disk_size_bytes": schema.Int64Attribute{Computed: true, MarkdownDescription: diskDoc, PlanModifiers: keepInt},
			"stored_bytes":    schema.Int64Attribute{Computed: true, MarkdownDescription: storedDoc, PlanModifiers: keepInt},
			"created_at":      schema.StringAttribute{Computed: true, MarkdownDescription: createdDoc, PlanModifiers: keep},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{
				Create: true, Delete: true,
				CreateDescription: "How long to wait for the checkpoint to become `DURABLE` (default `20m`). On " +
					"timeout the apply fails closed and the checkpoint is recorded as tainted.",
				DeleteDescription: "How long destroy waits for a checkpoint that is still uploading (the platform " +
					"refuses to delete it until then) before deleting it (default `5m`).",
			}),
		},
	}
}

// ModifyPlan plans state DURABLE, which every successful apply leaves: a
// checkpoint found FAILED or DELETING is replaced, one still uploading (an
// import) is waited for in place.
func (r *checkpointResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if id := tfkit.HeldID(ctx, req.State); id != "" {
		// Terraform holds this checkpoint: its journal entry goes.
		r.journal.Forget(id)
	}
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan resourceModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.State = types.StringValue(prime.CheckpointDurable)
	if !req.State.Raw.IsNull() {
		var state resourceModel
		resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
		if prime.IsTerminalCheckpointState(state.State.ValueString()) {
			resp.RequiresReplace = append(resp.RequiresReplace, path.Root("state"))
		}
	}
	resp.Diagnostics.Append(tfkit.SetPlan(ctx, &resp.Plan, &plan)...)
}

func (r *checkpointResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var plan resourceModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := plan.Timeouts.Create(ctx, DefaultCreateTimeout)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	sandboxID := plan.SandboxID.ValueString()
	request := func() (*prime.Checkpoint, *journal.CheckpointEntry, error) {
		return requestCheckpoint(ctx, r.client, r.journal, configHash(ctx, plan), sandboxID,
			prime.CreateCheckpointOptions{TTLSeconds: ttlOf(plan.TTLSeconds)})
	}
	ck, entry, err := request()
	if err != nil && plan.SourceAfter.ValueString() == SourcePause && prime.StatusCodeOf(err) == http.StatusConflict {
		// A source an earlier checkpoint of this configuration paused (its
		// record lost): resumed, checkpointed, and paused again below.
		if resumed, rerr := resumePausedSource(ctx, r.client, sandboxID, timeout); rerr != nil {
			err = rerr
		} else if resumed {
			ck, entry, err = request()
		}
	}
	if err != nil {
		summary, detail := createErrorText(sandboxID, err)
		resp.Diagnostics.AddAttributeError(path.Root("sandbox_id"), summary, detail)
		return
	}
	// The journal entry stays until Terraform holds the checkpoint: handed
	// over once it is in the response's state, finished when nothing is
	// left to track.
	inState, leftForNextApply := false, false
	defer func() {
		switch {
		case inState:
			entry.HandOver()
		case leftForNextApply:
			entry.Release()
		default:
			entry.Finish()
		}
	}()
	tflog.Info(ctx, "checkpoint requested; waiting until it is DURABLE", map[string]any{"checkpoint_id": ck.ID, "sandbox_id": sandboxID, "timeout": timeout.String()})

	waitCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	last := newLastSeen(*ck)
	done, err := r.client.WaitForCheckpoint(waitCtx, ck.ID, prime.WaitCheckpointOptions{OnProgress: last.observe})
	plan.PauseCheckpointID = types.StringNull()
	if err == nil {
		plan.Fields = fieldsOf(*done)
		// Only now: the checkpoint is DURABLE, so it outlives whatever
		// happens to its source. The create timeout bounds both waits.
		switch plan.SourceAfter.ValueString() {
		case SourcePause:
			pauseID, perr := r.client.PauseTakingCheckpoint(waitCtx, sandboxID)
			if perr != nil {
				resp.Diagnostics.AddWarning(pauseWarning(ck.ID, sandboxID, perr))
			}
			if pauseID != "" {
				plan.PauseCheckpointID = types.StringValue(pauseID)
			}
		case SourceDelete:
			if derr := deleteSource(waitCtx, r.client, sandboxID); derr != nil {
				resp.Diagnostics.AddWarning(deleteWarning(ck.ID, sandboxID, derr))
			}
		}
		inState = true
		resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &plan)...)
		resp.Diagnostics.Append(setIdentity(ctx, resp.Identity, plan.ID)...)
		return
	}
	outcome := classifyWait(err, waitCtx.Err() != nil && ctx.Err() == nil)
	if outcome == waitOther && ctx.Err() != nil && r.journal.Enabled() {
		// Interrupted (Ctrl-C): the checkpoint goes on uploading. Tainting
		// it would make the next apply delete it and wait for a new one;
		// the journal lets that apply adopt it and wait out the rest.
		leftForNextApply = true
		resp.Diagnostics.AddError("Checkpoint wait interrupted", interruptedText(last.get(), sandboxID))
		return
	}
	detail := waitErrorText(outcome, ck.ID, sandboxID, timeout, err, true)
	if outcome == waitFailed {
		// A FAILED checkpoint is deleted at once; only if that fails is it
		// recorded (tainted), so the next apply deletes it.
		derr := r.client.DeleteCheckpoint(ctx, ck.ID)
		if derr == nil || errors.Is(derr, prime.ErrNotFound) {
			resp.Diagnostics.AddError(outcomeSummary(outcome), detail+" It was deleted.")
			return
		}
		detail += fmt.Sprintf(" Deleting it failed (%v): it is recorded as tainted, so the next apply deletes it.", derr)
	}
	resp.Diagnostics.AddError(outcomeSummary(outcome), detail)
	if outcome == waitLost {
		return // nothing on the platform to track
	}
	plan.Fields = fieldsOf(last.get())
	inState = true
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &plan)...)
	resp.Diagnostics.Append(setIdentity(ctx, resp.Identity, plan.ID)...)
}

func (r *checkpointResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	_, d := tfkit.ReadAfterImport(ctx, req.Private, resp.Private)
	resp.Diagnostics.Append(d...)
	var state resourceModel
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	// The framework wants an identity after every Read without errors, even
	// one that removes the resource, and a state written by a Terraform
	// without identities (before 1.12) has none: set it first.
	resp.Diagnostics.Append(setIdentity(ctx, resp.Identity, state.ID)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ck, err := r.client.GetCheckpoint(ctx, state.ID.ValueString())
	switch {
	case errors.Is(err, prime.ErrNotFound):
		summary, detail, keep := goneOnRefresh(state)
		resp.Diagnostics.AddWarning(summary, detail)
		if !keep {
			resp.State.RemoveResource(ctx)
			return
		}
		state.State = types.StringValue(prime.CheckpointDeleting)
		resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &state)...)
		return
	case err != nil:
		resp.Diagnostics.AddError("Cannot read checkpoint", err.Error())
		return
	}
	state.Fields = fieldsOf(*ck)
	if prime.IsTerminalCheckpointState(ck.State) {
		resp.Diagnostics.AddWarning("Checkpoint not usable",
			fmt.Sprintf("Checkpoint %s is %s%s: no sandbox can be restored from it. The next apply replaces it.",
				ck.ID, ck.State, reasonSuffix(ck.Error)))
	}
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &state)...)
}

// Update changes only what the platform does not hold: timeouts, or the
// ttl_seconds and triggers the first apply after an import records. A
// checkpoint imported while still uploading is waited for here.
func (r *checkpointResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var plan, state resourceModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.Fields = state.Fields
	if state.State.ValueString() != prime.CheckpointDurable {
		timeout, d := plan.Timeouts.Create(ctx, DefaultCreateTimeout)
		resp.Diagnostics.Append(d...)
		if resp.Diagnostics.HasError() {
			return
		}
		waitCtx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		done, err := r.client.WaitForCheckpoint(waitCtx, state.ID.ValueString(), prime.WaitCheckpointOptions{})
		if err != nil {
			outcome := classifyWait(err, waitCtx.Err() != nil && ctx.Err() == nil)
			resp.Diagnostics.AddError(outcomeSummary(outcome), waitErrorText(outcome, state.ID.ValueString(), state.SandboxID.ValueString(), timeout, err, false))
			return
		}
		plan.Fields = fieldsOf(*done)
	}
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &plan)...)
	resp.Diagnostics.Append(setIdentity(ctx, resp.Identity, plan.ID)...)
	resp.Diagnostics.Append(tfkit.ClearImported(ctx, resp.Private)...)
}

func (r *checkpointResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var state resourceModel
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := state.Timeouts.Delete(ctx, DefaultDeleteTimeout)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	if state.SourceAfter.ValueString() == SourcePause {
		// Leave the source as the create found it, RUNNING, so that what
		// depends on it can be torn down or run again (a paused sandbox runs
		// no command: a file's removal, a new setup).
		if err := resumeSource(ctx, r.client, state.SandboxID.ValueString(), timeout); err != nil {
			resp.Diagnostics.AddWarning("Source sandbox not resumed", fmt.Sprintf("Checkpoint %s paused its source "+
				"sandbox %s (source_after = \"pause\"), and destroy could not resume it: %v. The checkpoint is deleted "+
				"anyway; whatever still runs a command in the sandbox will fail until it is resumed.",
				state.ID.ValueString(), state.SandboxID.ValueString(), err))
		}
	}
	if err := r.client.DeleteCheckpointOnceUploaded(ctx, state.ID.ValueString(), timeout); err != nil {
		resp.Diagnostics.AddError("Checkpoint not deleted", err.Error())
		return
	}
	if id := state.PauseCheckpointID.ValueString(); id != "" {
		if err := r.client.DeleteCheckpointOnceUploaded(ctx, id, timeout); err != nil {
			resp.Diagnostics.AddError("Pause checkpoint not deleted", fmt.Sprintf("Checkpoint %s is deleted, but the "+
				"checkpoint %s that pausing its source (source_after = \"pause\") created is not: %v", state.ID.ValueString(), id, err))
		}
	}
}

// ImportState takes a checkpoint ID, or the identity's id. The platform's
// record becomes the state; ttl_seconds and triggers, which it does not
// report, are recorded from the configuration by the first apply.
func (r *checkpointResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	id, d := tfkit.ImportIDOf(ctx, req, func(m identityModel) (string, error) { return m.ID.ValueString(), nil })
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := prime.ValidateCheckpointID(id); err != nil {
		resp.Diagnostics.AddError("Invalid import ID", err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), id)...)
	// Not reported by the platform; an imported checkpoint did nothing to its source.
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("source_after"), SourceKeep)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("pause_checkpoint_id"), types.StringNull())...)
	resp.Diagnostics.Append(setIdentity(ctx, resp.Identity, types.StringValue(id))...)
	resp.Diagnostics.Append(tfkit.MarkImported(ctx, resp.Private)...)
}

// lastSeen is the checkpoint's last observed record; the wait's progress
// callback runs on the poller's goroutine.
type lastSeen struct {
	mu sync.Mutex
	ck prime.Checkpoint
}

func newLastSeen(ck prime.Checkpoint) *lastSeen { return &lastSeen{ck: ck} }

func (l *lastSeen) observe(ck prime.Checkpoint) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ck = ck
}

func (l *lastSeen) get() prime.Checkpoint {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ck
}

func ttlOf(v types.Int64) *int {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	n := int(v.ValueInt64())
	return &n
}

type resourceModel struct {
	Fields
	TTLSeconds  types.Int64  `tfsdk:"ttl_seconds"`
	Triggers    types.Map    `tfsdk:"triggers"`
	SourceAfter types.String `tfsdk:"source_after"`
	// PauseCheckpointID is the checkpoint the platform took when
	// source_after paused the source; destroy deletes it with this one.
	PauseCheckpointID types.String   `tfsdk:"pause_checkpoint_id"`
	Timeouts          timeouts.Value `tfsdk:"timeouts"`
}
