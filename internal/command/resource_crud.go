package command

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

func (r *sandboxCommandResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var plan sandboxCommandModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	var envWO types.Map
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("env_wo"), &envWO)...)
	if resp.Diagnostics.HasError() {
		return
	}
	spec, d := plan.spec(ctx, envWO)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.EnvWO = types.MapNull(types.StringType)
	if spec.Background {
		// A job a killed apply started is this run's, with its record.
		entry := r.jobs.Adopt(runHashOf(plan))
		var run *runStart
		if entry != nil {
			run = decodeRunStart(entry.Record().Run)
		} else {
			began, err := startRun(ctx, r.client, spec.SandboxID, spec.RequireOpenEgress)
			if err != nil {
				resp.Diagnostics.AddError(commandErrorSummary(err), err.Error()+"\n\n"+commandNotStored)
				return
			}
			run, spec.RequireOpenEgress = &began, false
		}
		recordRun(&plan, orNewRun(run))
		r.runInBackground(ctx, &plan, spec, nil, entry, resp.Private, &resp.State, &resp.Diagnostics)
		return
	}
	tflog.Info(ctx, "running command", map[string]any{"sandbox_id": spec.SandboxID, "timeout": spec.Timeout.String()})
	run, err := startRun(ctx, r.client, spec.SandboxID, spec.RequireOpenEgress)
	if err != nil {
		resp.Diagnostics.AddError(commandErrorSummary(err), err.Error()+"\n\n"+commandNotStored)
		return
	}
	spec.RequireOpenEgress, spec.RunStamp = false, run.RunID
	res, err := runCommand(ctx, r.client, spec)
	if err != nil {
		resp.Diagnostics.AddError(commandErrorSummary(err), err.Error())
		return
	}
	recordRun(&plan, run)
	recordResult(&plan, res)
	r.writeRunRecord(plan, &resp.Diagnostics)
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &plan)...)
}

// writeRunRecord writes the run's run.json into output_dir (nothing
// without it); failing to is a warning.
func (r *sandboxCommandResource) writeRunRecord(m sandboxCommandModel, diags *diag.Diagnostics) {
	if m.OutputDir.IsNull() || m.OutputDir.IsUnknown() || m.OutputDir.ValueString() == "" {
		return
	}
	if err := writeRunRecord(m.OutputDir.ValueString(), m.recordOf()); err != nil {
		diags.AddWarning("Run record not written", err.Error())
	}
}

// Read touches no API: a command's result is history.
func (r *sandboxCommandResource) Read(_ context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	resp.State.Raw = req.State.Raw
}

// Update records arguments that only judge or record the result; nothing
// runs. The plan (see ModifyPlan) already holds the moved output. A job an
// interrupted apply left running is collected here.
func (r *sandboxCommandResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state sandboxCommandModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.EnvWO = types.MapNull(types.StringType)
	if state.JobStatus.ValueString() == jobRunning {
		if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
			return
		}
		var envWO types.Map
		resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("env_wo"), &envWO)...)
		spec, d := plan.spec(ctx, envWO)
		resp.Diagnostics.Append(d...)
		if resp.Diagnostics.HasError() {
			return
		}
		spec.Background = true // the job runs in the background, whatever the argument says now
		spec.AfterFailure = jobFailureRecorded
		r.runInBackground(ctx, &plan, spec, pendingOf(ctx, req.Private, state), nil, resp.Private, &resp.State, &resp.Diagnostics)
		return
	}
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &plan)...)
}

// Delete touches no API for a foreground command. A job an interrupted
// apply left running is stopped (SIGTERM, then SIGKILL), so it cannot go
// on after its egress lock is lifted; and a background run's claim in the
// sandbox is retired (one command), so that a replacement with the same
// arguments (terraform apply -replace) runs the command again instead of
// collecting this job.
func (r *sandboxCommandResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state sandboxCommandModel
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	if resp.Diagnostics.HasError() || state.JobStatus.IsNull() || state.JobID.ValueString() == "" {
		return
	}
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	if state.JobStatus.ValueString() == jobRunning {
		if p := pendingOf(ctx, req.Private, state); p != nil {
			if err := stopRunningJob(ctx, r.client, r.jobs, *p); err != nil {
				resp.Diagnostics.AddError("Background job not stopped", err.Error())
				return
			}
		}
	}
	retireClaims(ctx, r.client, state.SandboxID.ValueString(), runHashOf(state)+"/"+state.JobID.ValueString())
}
