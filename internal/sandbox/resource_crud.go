package sandbox

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/primeintellect/terraform-provider-prime/internal/egress"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

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
	bornAtCreate := egress.SetBornLists(&createReq, born)
	timeout, d := tfkit.TimeoutOf(plan.Timeouts, "create", defaultSandboxCreateTimeout)
	resp.Diagnostics.Append(d...)
	buildTimeout, d := tfkit.TimeoutOf(plan.Timeouts, "image_build", prime.DefaultImageBuildTimeout)
	resp.Diagnostics.Append(d...)
	egressTimeout, d := tfkit.TimeoutOf(plan.Timeouts, "egress", egress.DefaultTimeout)
	resp.Diagnostics.Append(d...)
	pauseTimeout, d := tfkit.TimeoutOf(plan.Timeouts, "update", defaultPauseTimeout)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}

	postCtx, cancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("create timeout (%s) reached", timeout))
	defer cancel()
	sb, inflight, err := createSandbox(postCtx, creator{r.client, r.journal, r.recovery}, createKindSandbox, nil, createReq)
	if sb == nil {
		attribute, summary, detail := createRefusal(createReq, err)
		if attribute != "" {
			resp.Diagnostics.AddAttributeError(path.Root(attribute), summary, detail)
		} else {
			resp.Diagnostics.AddError(summary, detail)
		}
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
	if born == nil {
		if err := awaitSandbox(ctx, r.client, sb.ID, timeout, buildTimeout); err != nil {
			resp.Diagnostics.AddError(notStartedSummary(ctx), err.Error()+".\n\n"+taintedNote)
			return
		}
	} else {
		// Before Create returns, so nothing that depends on the sandbox
		// starts on an unenforced policy.
		gen, waitErr, lockErr := awaitSandboxLocked(ctx, r.client, sb.ID, timeout, buildTimeout,
			bornLock{Policy: *born, SentAtCreate: bornAtCreate, Timeout: egressTimeout})
		if gen != nil {
			state.EgressGeneration = types.Int64Value(*gen)
		}
		switch {
		case waitErr != nil:
			resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &state)...)
			resp.Diagnostics.AddError(notStartedSummary(ctx), waitErr.Error()+".\n\n"+taintedNote)
			return
		case lockErr != nil:
			resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &state)...)
			resp.Diagnostics.AddError("Born egress policy not enforced", egress.FailClosedMessage(sb.ID, egressTimeout, "egress", lockErr)+"\n\n"+taintedNote)
			return
		}
		state.EgressApplied = types.BoolValue(true)
	}
	// Paused last: the lock is enforced first, and a paused sandbox keeps it.
	if act, paused := pauseChange(plan.Paused, types.BoolNull(), true); act {
		pc, _ := readPauseCheckpoints(ctx, nil)
		err := setPaused(ctx, r.client, sb.ID, paused, pauseTimeout, pc)
		resp.Diagnostics.Append(pc.save(ctx, resp.Private)...)
		pc.unlistedWarning(&resp.Diagnostics)
		if err != nil {
			resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &state)...)
			resp.Diagnostics.AddError("Sandbox not paused", err.Error()+".\n\n"+taintedNote)
			return
		}
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
		r.endedOnRefresh(ctx, req.Private, &state, &prime.Sandbox{ID: state.ID.ValueString(), Status: prime.StatusTerminated}, true, resp)
		return
	case err != nil:
		resp.Diagnostics.AddError("Cannot read sandbox", err.Error())
		return
	}
	if prime.IsTerminalStatus(sb.Status) {
		r.endedOnRefresh(ctx, req.Private, &state, sb, false, resp)
		return
	}
	imported := importRead && state.Egress.IsNull() && state.EgressGeneration.IsNull()
	state.Paused = pausedOnRefresh(state.Paused, sb.Status)
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
		pending := ""
		if sb.Status == prime.StatusPaused {
			pending = egress.PendingWhilePausedNote
		}
		diags.AddWarning("Egress policy not enforced",
			fmt.Sprintf("Sandbox %s's egress block (generation %d) is not enforced by the data plane "+
				"(applied_generation %d). The next apply writes it again and waits for enforcement.%s",
				sb.ID, state.EgressGeneration.ValueInt64(), st.AppliedGeneration, pending))
	}
	return false
}

// endedMessage is the one warning of a refresh that finds a sandbox ended
// (gone: it no longer exists at all), paused or not: the next apply makes a
// new one. kept names the pause checkpoints that keep it in state until
// then.
func endedMessage(sb *prime.Sandbox, gone bool, kept []string) string {
	detail := fmt.Sprintf("Sandbox %s is %s", sb.ID, sb.Status)
	if gone {
		detail = fmt.Sprintf("Sandbox %s no longer exists", sb.ID)
	} else if reason := firstNonEmpty(sb.ErrorMessage, sb.TerminationReason, sb.ErrorType); reason != "" {
		detail += " (" + reason + ")"
	}
	if len(kept) == 0 {
		return detail + "; it is removed from state and the next apply creates a new one."
	}
	return fmt.Sprintf("%s; the next apply replaces it with a new one. Until then it stays in state as %s, so that "+
		"the replacement deletes the checkpoints its pauses took (%s) instead of leaving them billed.",
		detail, sb.Status, strings.Join(kept, ", "))
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
	id := state.ID.ValueString()
	pauseTimeout, d := tfkit.TimeoutOf(plan.Timeouts, "update", defaultPauseTimeout)
	resp.Diagnostics.Append(d...)
	pc, d := readPauseCheckpoints(ctx, req.Private)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	pa := pauseApply{client: r.client, id: id, timeout: pauseTimeout, pc: pc, private: resp.Private}
	// A resume comes before an egress change (a policy written to a paused
	// sandbox is only enforced on resume), a pause after it.
	act, paused := pauseChange(plan.Paused, state.Paused, false)
	if act && !paused && !pa.apply(ctx, paused, &resp.Diagnostics) {
		resp.State.Raw = req.State.Raw.Copy() // nothing changed
		return
	}
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
	if act && paused {
		// The egress change is done: record it before pausing, so a failed
		// pause keeps it.
		done := plan
		done.Paused, done.Status = state.Paused, state.Status
		resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &done)...)
		if !pa.apply(ctx, paused, &resp.Diagnostics) {
			return
		}
	}
	if act {
		plan.Status = types.StringValue(pausedStatus(paused))
	}
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &plan)...)
	resp.Diagnostics.Append(setSandboxIdentity(ctx, resp.Identity, plan.ID)...)
	resp.Diagnostics.Append(tfkit.ClearImported(ctx, resp.Private)...)
}

// pauseApply is the pause or resume of an Update.
type pauseApply struct {
	client  *prime.Client
	id      string
	timeout time.Duration
	pc      *pauseCheckpoints
	private tfkit.PrivateSetter
}

// apply pauses or resumes the sandbox, recording the checkpoint a pause
// took, and reports a failure at `paused`. The caller leaves the prior
// `paused` and status in state then, so the next plan proposes the change
// again.
func (a pauseApply) apply(ctx context.Context, paused bool, diags *diag.Diagnostics) bool {
	err := setPaused(ctx, a.client, a.id, paused, a.timeout, a.pc)
	diags.Append(a.pc.save(ctx, a.private)...)
	a.pc.unlistedWarning(diags)
	if err == nil {
		return true
	}
	what := "resumed"
	if paused {
		what = "paused"
	}
	diags.AddAttributeError(path.Root("paused"), "Sandbox not "+what, err.Error())
	return false
}

func (r *sandboxResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var state sandboxModel
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	pc, d := readPauseCheckpoints(ctx, req.Private)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := tfkit.TimeoutOf(state.Timeouts, "delete", defaultSandboxDeleteTimeout)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	id := state.ID.ValueString()
	// A terminal status is only recorded for a sandbox already gone whose
	// pause checkpoints are left (see Read): nothing to delete but them.
	if !prime.IsTerminalStatus(state.Status.ValueString()) && !deleteSandbox(ctx, r.client, id, timeout, &resp.Diagnostics) {
		return
	}
	// Only now: a checkpoint not yet DURABLE went with the sandbox, and a
	// DURABLE one outlives it until deleted.
	pc.deleteOf(ctx, r.client, []string{id}, timeout, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		// The sandbox is gone: recorded so; the checkpoints left stay
		// recorded, so the next destroy (or the replacement the next plan
		// proposes) deletes them.
		state.Status = types.StringValue(prime.StatusTerminated)
		resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &state)...)
		resp.Diagnostics.Append(pc.save(ctx, resp.Private)...)
	}
}

// notStartedSummary is the summary of a create whose wait ended: the
// apply's interruption (Ctrl-C), or the sandbox itself.
func notStartedSummary(ctx context.Context) string {
	if ctx.Err() != nil {
		return "Sandbox create interrupted"
	}
	return "Sandbox did not start"
}

// deleteSandbox deletes a sandbox and waits until it is gone, within
// timeout; it reports whether it is.
func deleteSandbox(ctx context.Context, c *prime.Client, id string, timeout time.Duration, diags *diag.Diagnostics) bool {
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("delete timeout (%s) reached", timeout))
	defer cancel()
	if err := c.DeleteSandbox(ctx, id); err != nil && !errors.Is(err, prime.ErrNotFound) {
		diags.AddError("Cannot delete sandbox", err.Error())
		return false
	}
	if err := c.WaitForGone(ctx, id); err != nil {
		diags.AddError("Sandbox was not terminated", fmt.Sprintf("sandbox %s: %v", id, err))
		return false
	}
	return true
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

// endedOnRefresh handles a refresh that finds the sandbox ended (gone: it
// no longer exists). A template retired after its checkpoint stays in
// state, quietly (retire_after_checkpoint.go). Otherwise it usually leaves
// state, and the next apply creates a new one; while checkpoints its pauses
// took are recorded and not deleted, it stays instead, with its terminal
// status, so that they are not left untracked: the next plan replaces it
// (ModifyPlan) and that replacement, or a destroy, deletes them. Either way,
// one warning says so.
func (r *sandboxResource) endedOnRefresh(ctx context.Context, private tfkit.PrivateGetter, state *sandboxModel, sb *prime.Sandbox, gone bool, resp *resource.ReadResponse) {
	pc, _ := readPauseCheckpoints(ctx, private)
	left := pc.of(state.ID.ValueString())
	if len(left) == 0 {
		by, err := retiredByCheckpoint(ctx, r.client, *state)
		if err != nil {
			resp.Diagnostics.AddError("Cannot tell whether the sandbox is retired", err.Error())
			return
		}
		if by != "" {
			resp.Diagnostics.Append(markRetired(ctx, r.client, state, sb.Status, by, resp.Private)...)
			resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, state)...)
			return
		}
	}
	resp.Diagnostics.AddWarning("Sandbox is no longer running", endedMessage(sb, gone, left))
	if len(left) == 0 {
		resp.State.RemoveResource(ctx)
		return
	}
	state.Status = types.StringValue(sb.Status)
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, state)...)
}
