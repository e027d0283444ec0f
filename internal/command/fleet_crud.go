package command

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/memberkit"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

func (r *fleetCommandResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var plan fleetCommandModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	var envWO types.Map
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("env_wo"), &envWO)...)
	if resp.Diagnostics.HasError() {
		return
	}
	run := fleetRunOf(ctx, plan, envWO, &resp.Diagnostics)
	ids := tfkit.StringMapOf(ctx, plan.SandboxIDs, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	var problems memberkit.Problems
	fr := r.runMembers(ctx, plan, run, ids, nil, &problems)
	addWarnings(&resp.Diagnostics, "Background job", fr.warnings)
	failure := fleetCommandFailure{problems: &problems, tried: len(ids), recorded: len(fr.failed), succeeded: len(fr.done),
		pending: fr.unknownOutcomes(&problems), journaled: run.base.Background}
	if problems.Len() > 0 && onFailureOf(plan) != onFailureRecord {
		// Nothing is stored: the next apply runs every member again —
		// except, on this machine, background steps that finished, whose
		// outcomes the job journal keeps.
		fr.settle(false)
		failure.add(&resp.Diagnostics, false)
		return
	}
	plan.ID = types.StringValue(prime.NewIdempotencyKey()[:16])
	plan.EnvWO = types.MapNull(types.StringType)
	records := maps.Clone(fr.done)
	maps.Copy(records, fr.failed)
	r.setRecords(ctx, &plan, records, &resp.Diagnostics)
	r.recordPending(ctx, &plan, fr, resp.Private, &resp.Diagnostics)
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &plan)...)
	fr.settle(!resp.Diagnostics.HasError())
	if problems.Len() > 0 {
		// on_member_failure = "record": a background create promised no
		// results keys, so members whose outcome is unknown may be absent.
		failure.stored = true
		failure.add(&resp.Diagnostics, true)
	}
}

func addWarnings(diags *diag.Diagnostics, summary string, ws []string) {
	if len(ws) > 0 {
		diags.AddWarning(summary, strings.Join(ws, "\n\n"))
	}
}

// recordPending keeps the members left mid-way (an interrupted apply, a job
// whose outcome could not be read) in private state, with their steps'
// results, and in running_jobs, and says so when an interrupt left them.
func (r *fleetCommandResource) recordPending(ctx context.Context, m *fleetCommandModel, fr *fleetRunResult, priv tfkit.PrivateSetter, diags *diag.Diagnostics) {
	diags.Append(priv.SetKey(ctx, pendingMembersKey, encodeProgress(fr.pending))...)
	m.RunningJobs = fleetCommandJobsValue(fr.pending)
	if len(fr.pending) == 0 || !fr.interrupted {
		return
	}
	var b strings.Builder
	for _, k := range tfkit.SortedKeys(fr.pending) {
		p := fr.pending[k]
		fmt.Fprintf(&b, "\n  %q: step %d, job %s in sandbox %s", k, p.Step+1, p.Job.JobID, p.SandboxID)
	}
	diags.AddWarning("Background jobs left running",
		"The apply was interrupted while these members' jobs ran. The jobs go on; they are recorded in running_jobs, and "+
			"the next apply attaches to them and collects their results without running anything again:"+b.String())
}

// Read touches no API: the results are history.
func (r *fleetCommandResource) Read(_ context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	resp.State.Raw = req.State.Raw
}

// Update runs the members ModifyPlan planned to run (new, moved to another
// sandbox, failed before, or with recorded exit codes no longer allowed)
// and keeps the others' results. Failed members are recorded as failed.
func (r *fleetCommandResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state fleetCommandModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	var envWO types.Map
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("env_wo"), &envWO)...)
	if resp.Diagnostics.HasError() {
		return
	}
	run := fleetRunOf(ctx, plan, envWO, &resp.Diagnostics)
	ids := tfkit.StringMapOf(ctx, plan.SandboxIDs, &resp.Diagnostics)
	prior := commandMemberRecordsOf(state, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	records := map[string]*commandMemberRecord{}
	toRun := map[string]string{}
	for key, id := range ids {
		if p, had := prior[key]; had && keepFleetResult(p.Result, id, run.base.Allowed) &&
			sameMemberInputs(plan, state, key) {
			moved := movedRecord(p, state.SensitiveOutput.ValueBool(), run.base.SensitiveOutput, stepOutputOf(plan))
			records[key] = &moved
		} else {
			toRun[key] = id
		}
	}
	var problems memberkit.Problems
	fr := &fleetRunResult{}
	if len(toRun) > 0 {
		if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
			return
		}
		// A member that runs again on the sandbox its result records
		// (it failed, or its exit codes are no longer allowed) starts
		// afresh: its recorded jobs' claims go first.
		var again []string
		for key, id := range toRun {
			if p, had := prior[key]; had && p.Result.SandboxID.ValueString() == id {
				again = append(again, key)
			}
		}
		r.retireRecordedClaims(ctx, state, again)
		if progress := progressOf(ctx, req.Private); len(progress) > 0 {
			run.base.Background = true // members left mid-way run in the background, whatever the argument says now
			fr = r.runMembers(ctx, plan, run, toRun, progress, &problems)
		} else {
			fr = r.runMembers(ctx, plan, run, toRun, nil, &problems)
		}
		maps.Copy(records, fr.done)
		maps.Copy(records, fr.failed)
		addWarnings(&resp.Diagnostics, "Background job", fr.warnings)
	}
	plan.EnvWO = types.MapNull(types.StringType)
	r.setRecords(ctx, &plan, records, &resp.Diagnostics)
	r.recordPending(ctx, &plan, fr, resp.Private, &resp.Diagnostics)
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &plan)...)
	fr.settle(!resp.Diagnostics.HasError())
	if fr.interrupted {
		resp.Diagnostics.AddError("Apply interrupted", "The apply was interrupted while background jobs ran (see the warning "+
			"above). They are recorded in running_jobs; the next apply collects them.")
	}
	if problems.Len() > 0 {
		succeeded := 0
		for _, rec := range records {
			if !rec.Result.Failed.ValueBool() {
				succeeded++
			}
		}
		unknown := fr.unknownOutcomes(&problems)
		// A member whose outcome is unknown is absent from results, whose
		// keys the plan promised: that is an error even with "record".
		fleetCommandFailure{problems: &problems, tried: len(toRun), stored: true, recorded: len(fr.failed),
			succeeded: succeeded, pending: unknown}.add(&resp.Diagnostics, onFailureOf(plan) == onFailureRecord && unknown == 0)
	}
}

// Delete stops the jobs of members an interrupted apply left running
// (SIGTERM, then SIGKILL), so they cannot go on after their egress lock is
// lifted, and retires the run claims of background results (one command
// per member), so that a replacement with the same arguments runs the
// members again instead of collecting these jobs.
func (r *fleetCommandResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state fleetCommandModel
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	progress := progressOf(ctx, req.Private)
	if resp.Diagnostics.HasError() || (len(progress) == 0 && !state.Background.ValueBool()) {
		return
	}
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	if len(progress) > 0 {
		stopPendingMembers(ctx, r.client, r.jobs, progress, &resp.Diagnostics)
	}
	r.retireRecordedClaims(ctx, state, tfkit.SortedKeys(commandMemberRecordsOf(state, &resp.Diagnostics)))
}
