package command

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/files"
	"github.com/primeintellect/terraform-provider-prime/internal/journal"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

// recordPending records a job an interrupted apply left running: no
// result yet.
func recordPending(m *sandboxCommandModel, p *pendingJob) {
	m.ExitCode, m.ExecutedAt = types.Int64Null(), types.StringNull()
	m.Stdout, m.Stderr, m.OutputTruncated = types.StringNull(), types.StringNull(), types.BoolNull()
	m.SensitiveStreams = types.ObjectNull(streamsType().AttrTypes)
	m.OutputFiles = types.ListNull(files.ArtifactFileType())
	m.JobID, m.JobStatus = types.StringValue(p.JobID), types.StringValue(jobRunning)
}

// pendingJobKey is the private-state key of a running job (its start time
// counts towards timeout_seconds).
const pendingJobKey = "pending_job"

func encodePending(p *pendingJob) []byte {
	b, _ := json.Marshal(p)
	return b
}

// pendingOf reads the running job of a state: from private state, else
// from job_id (its start time then unknown: the timeout counts from now).
func pendingOf(ctx context.Context, priv tfkit.PrivateGetter, m sandboxCommandModel) *pendingJob {
	if priv != nil {
		if b, _ := priv.GetKey(ctx, pendingJobKey); len(b) > 0 {
			var p pendingJob
			if json.Unmarshal(b, &p) == nil && p.JobID != "" {
				return &p
			}
		}
	}
	if m.JobID.IsNull() || m.JobID.IsUnknown() {
		return nil
	}
	return &pendingJob{SandboxID: m.SandboxID.ValueString(), JobID: m.JobID.ValueString(), Started: time.Now().UTC(), Confirmed: true}
}

// runHashOf identifies a prime_sandbox_command run in the job journal: the
// arguments that make it a new run (a change of any of them replaces the
// resource).
func runHashOf(m sandboxCommandModel) string {
	return journal.RunHash("prime_sandbox_command", m.SandboxID.ValueString(), m.Command.ValueString(), m.WorkingDir.ValueString(),
		m.Env.String(), m.EnvWOVersion.String(), m.Triggers.String())
}

// runInBackground runs (or, with attach, collects) the command as a job
// and records the outcome in m and state: the result; or, when the apply
// was interrupted, the running job, which the next apply collects.
// A new run's ID and start are in m already (recordRun); entry is a
// journal entry of its job a killed apply left (nil: none).
func (r *sandboxCommandResource) runInBackground(ctx context.Context, m *sandboxCommandModel, spec commandSpec, attach *pendingJob,
	entry *journal.JobEntry, priv tfkit.PrivateSetter, state interface {
		Set(context.Context, any) diag.Diagnostics
	}, diags *diag.Diagnostics) {
	const key = "command"
	reporter := newProgressReporter(ctx, progressOptions{What: "prime_sandbox_command", Keys: []string{key},
		States: commandProgressStates, File: progressFileOf(m.OutputDir)})
	reporter.update(key, func(p *memberProgressState) {
		p.State, p.SandboxID, p.Steps, p.Step = ProgressRunning, spec.SandboxID, 1, 1
	})
	start := m.runStart()
	if start != nil {
		spec.RunStamp = start.RunID
	}
	run := backgroundRun{
		spec: spec, hash: runHashOf(*m), journal: r.jobs, attach: attach, entry: entry, outputDir: m.OutputDir.ValueString(),
		keep: true, start: start,
		onJob: func(job prime.Job) { reporter.update(key, func(p *memberProgressState) { p.JobID = job.ID }) },
	}
	br, err := runBackground(ctx, r.client, run)
	if br.Run != nil && br.Run.RunID != m.RunID.ValueString() {
		recordRun(m, *br.Run) // the job an earlier apply started is that run's
	}
	reporter.update(key, func(p *memberProgressState) {
		switch {
		case br.Pending != nil:
			p.State = ProgressLeft
		case err != nil:
			p.State, p.Error = ProgressFailed, memberErrorLine(0, 1, err)
		default:
			p.State = ProgressSucceeded
		}
	})
	if ferr := reporter.stop(); ferr != nil {
		diags.AddWarning("Progress file not written", ferr.Error())
	}
	stored := false
	defer func() {
		// After the state below: a stored result is handed over (Terraform
		// may be killed before it persists it); a failure runs again.
		switch {
		case stored:
			br.Entry.HandOver()
		case br.Entry != nil: // judged, not stored: the next apply runs it again
			run.forget(ctx, r.client, br.Entry, br.Job)
		}
	}()
	for _, w := range br.Warnings {
		diags.AddWarning("Background job", w)
	}
	switch {
	case errors.Is(err, errJobInterrupted):
		recordPending(m, br.Pending)
		diags.Append(priv.SetKey(ctx, pendingJobKey, encodePending(br.Pending))...)
		diags.AddWarning("Background job left running",
			fmt.Sprintf("The apply was interrupted while job %s ran in sandbox %s. The job goes on; it is recorded in state "+
				"(job_status = \"running\"), and the next apply attaches to it and collects its result without running the "+
				"command again.", br.Pending.JobID, spec.SandboxID))
		diags.Append(tfkit.SetStateAny(ctx, state, m)...)
		return
	case err != nil && br.Pending != nil && attach != nil:
		// Its outcome is unknown (say, its output could not be read): it
		// stays recorded as running, and the next apply tries again.
		recordPending(m, br.Pending)
		diags.Append(priv.SetKey(ctx, pendingJobKey, encodePending(br.Pending))...)
		diags.Append(tfkit.SetStateAny(ctx, state, m)...)
		diags.AddError(commandErrorSummary(err), err.Error())
		return
	case err != nil && attach != nil:
		// A collected job that failed: recorded, so the next apply runs
		// the command again (a replacement) instead of collecting it again.
		recordPending(m, &pendingJob{JobID: br.Job.ID})
		m.JobStatus = types.StringValue(jobFailed)
		if br.Result != nil {
			recordResult(m, br.Result)
			m.JobID, m.JobStatus = types.StringValue(br.Job.ID), types.StringValue(jobFailed)
		}
		r.writeRunRecord(*m, diags)
		diags.Append(priv.SetKey(ctx, pendingJobKey, nil)...)
		diags.Append(tfkit.SetStateAny(ctx, state, m)...)
		diags.AddError(commandErrorSummary(err), err.Error())
		return
	case err != nil:
		diags.AddError(commandErrorSummary(err), err.Error())
		return
	}
	recordResult(m, br.Result)
	m.JobID, m.JobStatus = types.StringValue(br.Job.ID), types.StringValue(jobCompleted)
	m.OutputFiles = types.ListNull(files.ArtifactFileType())
	if m.OutputDir.ValueString() != "" {
		m.OutputFiles = files.ArtifactFilesValue(br.OutputFiles)
	}
	r.writeRunRecord(*m, diags)
	diags.Append(priv.SetKey(ctx, pendingJobKey, nil)...)
	diags.Append(tfkit.SetStateAny(ctx, state, m)...)
	stored = !diags.HasError()
}

// stopRunningJob stops a job whose resource goes away. A sandbox that is
// gone took the job with it. A job that cannot be stopped fails the
// destroy: the agent must not go on running once its lock is lifted.
func stopRunningJob(ctx context.Context, c *prime.Client, jobs *journal.Jobs, p pendingJob) error {
	if gone, err := c.SandboxGone(ctx, p.SandboxID); err == nil && gone {
		jobs.Drop(p.JobID)
		return nil
	}
	if _, err := c.StopJob(ctx, p.job(), c.CommandStopGrace()); err != nil && !prime.GoneWithSandbox(err) {
		return fmt.Errorf("sandbox %s: background job %s is still running and could not be stopped: %w; run destroy again", p.SandboxID, p.JobID, err)
	}
	jobs.Drop(p.JobID)
	return nil
}
