package command

// prime_fleet_command in background mode: each step of each member is a
// job (runBackground), and a member's progress survives the apply. Steps a
// member finished are kept, with their results, in the job journal until
// the resource stores them, and in private state when an interrupted apply
// leaves a member mid-way; a later apply resumes the member at the step
// that was running, attaching to its job. No step that ran is run again.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/primeintellect/terraform-provider-prime/internal/journal"
	"github.com/primeintellect/terraform-provider-prime/internal/memberkit"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

// memberProgress is a member an apply left mid-way: the step whose job was
// still running, and the results of the steps before it.
type memberProgress struct {
	SandboxID string                `json:"sandbox_id"`
	Step      int                   `json:"step"`
	Job       pendingJob            `json:"job"`
	Done      []journal.StepOutcome `json:"done"`
}

// pendingMembersKey is the private-state key of members left mid-way.
const pendingMembersKey = "pending_members"

func encodeProgress(p map[string]memberProgress) []byte {
	if len(p) == 0 {
		return nil
	}
	b, _ := json.Marshal(p)
	return b
}

func progressOf(ctx context.Context, priv tfkit.PrivateGetter) map[string]memberProgress {
	if priv == nil {
		return nil
	}
	b, _ := priv.GetKey(ctx, pendingMembersKey)
	if len(b) == 0 {
		return nil
	}
	var p map[string]memberProgress
	if json.Unmarshal(b, &p) != nil {
		return nil
	}
	return p
}

// fleetRunResult is what a run of members produced.
type fleetRunResult struct {
	done map[string]*commandMemberRecord
	// failed are the records of members that failed (results entries
	// with failed = true).
	failed map[string]*commandMemberRecord
	// pending are members left mid-way (interrupted, or a step whose
	// outcome is unknown).
	pending map[string]memberProgress
	// entries are the journal entries of each member's judged steps;
	// settle finishes or releases them.
	entries     map[string][]*journal.JobEntry
	interrupted bool
	warnings    []string
}

// unknownOutcomes counts the failed members that were left mid-way: a job
// whose outcome could not be read, recorded in running_jobs.
func (fr *fleetRunResult) unknownOutcomes(problems *memberkit.Problems) int {
	n := 0
	for key := range fr.pending {
		if problems.Has(key) {
			n++
		}
	}
	return n
}

// settle hands over the journal entries of members whose results go to
// state (stored) and releases the others', so a later apply on this
// machine takes their outcomes instead of running their steps again —
// also when Terraform is killed before it stores the results.
func (fr *fleetRunResult) settle(stored bool) {
	for key, es := range fr.entries {
		_, recorded := fr.done[key]
		for _, e := range es {
			if stored && recorded {
				e.HandOver()
			} else {
				e.Release()
			}
		}
	}
}

// stepHash identifies one step of one member in the job journal: the
// arguments that make it a new run.
func stepHash(plan fleetCommandModel, run fleetRun, key, sandboxID string, step int) string {
	return journal.RunHash("prime_fleet_command", key, sandboxID, step, run.commands[step], plan.WorkingDir.ValueString(),
		plan.Env.String(), memberEnvOf(plan, key).String(), memberkit.TriggerOf(plan.MemberTriggers, key).String(), plan.EnvWOVersion.String(),
		plan.Triggers.String())
}

// retireRecordedClaims retires, in each member's sandbox, the run claims
// of every step of the members keys whose results state records (on the
// sandbox it records), so that those members' next runs start afresh
// instead of attaching to the recorded jobs: before members run again
// (Update) and when the resource goes (Delete; a replacement runs them
// again). One command per member, concurrently; best effort (see
// backgroundRun.forget). Foreground results never claimed a run.
func (r *fleetCommandResource) retireRecordedClaims(ctx context.Context, state fleetCommandModel, keys []string) {
	if !state.Background.ValueBool() || len(keys) == 0 {
		return
	}
	var diags diag.Diagnostics
	commands, d := tfkit.StringList(ctx, state.Commands)
	diags.Append(d...)
	records := commandMemberRecordsOf(state, &diags)
	if diags.HasError() {
		return
	}
	run := fleetRun{commands: commands}
	runs := map[string][]string{} // sandbox → its steps' run names
	for _, key := range keys {
		rec, ok := records[key]
		if !ok || rec.Result.SandboxID.ValueString() == "" {
			continue
		}
		id := rec.Result.SandboxID.ValueString()
		for i := range commands {
			runs[id] = append(runs[id], stepHash(state, run, key, id, i))
		}
	}
	memberkit.ForEachMember(ctx, tfkit.SortedKeys(runs), memberkit.DefaultConcurrency, func(ctx context.Context, id string) {
		retireClaims(ctx, r.client, id, runs[id]...)
	})
}

// recordedStepHashes are the job-journal names of the steps whose results
// a fleet command's state records.
func recordedStepHashes(ctx context.Context, state fleetCommandModel) []string {
	var diags diag.Diagnostics
	commands, d := tfkit.StringList(ctx, state.Commands)
	diags.Append(d...)
	records := commandMemberRecordsOf(state, &diags)
	ids, d := tfkit.StringMap(ctx, state.SandboxIDs)
	diags.Append(d...)
	if diags.HasError() {
		return nil
	}
	run := fleetRun{commands: commands}
	var out []string
	for key := range records {
		for i := range commands {
			out = append(out, stepHash(state, run, key, ids[key], i))
		}
	}
	return out
}

// runMemberInBackground runs one member's steps as jobs, resuming from its
// progress (from state) or from the journal, and reports into fr.
func (r *fleetCommandResource) runMemberInBackground(ctx context.Context, plan fleetCommandModel, run fleetRun, key, id string,
	progress *memberProgress, slots chan struct{}, fr *fleetRunResult, lock func() func()) (out memberOutcome) {
	memberSpec := run.memberSpec(key)
	var entries []*journal.JobEntry
	keep := func() {
		defer lock()()
		fr.entries[key] = append(fr.entries[key], entries...)
	}
	start := 0
	// memberRun is the member's run: the one an earlier apply began (its
	// jobs carry it), else a new one as its first step starts.
	var memberRun *runStart
	defer func() { out.run = orNewRun(memberRun) }()
	if progress != nil && progress.SandboxID == id && progress.Step < len(run.commands) {
		start = progress.Step
		memberRun = progress.Job.Run
		for i := range progress.Done {
			out.results = append(out.results, resultOf(&progress.Done[i]))
		}
	} else {
		progress = nil
	}

	for i := range run.commands {
		hash := stepHash(plan, run, key, id, i)
		spec := memberSpec
		spec.SandboxID, spec.Command = id, run.commands[i]
		spec.RequireOpenEgress = run.base.RequireOpenEgress && i == 0
		if i > 0 {
			spec.ResultPaths = nil // removed before the member's first step only
		}
		adopted := r.jobs.Adopt(hash)
		if memberRun == nil && adopted != nil {
			memberRun = decodeRunStart(adopted.Record().Run)
		}
		if i < start {
			if adopted != nil {
				entries = append(entries, adopted) // its outcome is in progress.Done
			}
			continue
		}
		if i == 0 && memberRun == nil && adopted == nil && progress == nil {
			// A new run: its ID, its start and the egress it starts under,
			// read once (with the open-egress check the step requires).
			began, err := startRun(ctx, r.client, id, spec.RequireOpenEgress)
			if err != nil {
				out.err, out.step = err, 0
				return out
			}
			memberRun, spec.RequireOpenEgress = &began, false
		}
		if memberRun != nil {
			spec.RunStamp = memberRun.RunID
		}
		var attach *pendingJob
		if progress != nil && i == start {
			attach = &progress.Job
		}
		if attach == nil && adopted != nil && adopted.Record().Outcome != nil && adopted.Record().SandboxID == id {
			// A killed apply finished this step: take its result.
			res := resultOf(adopted.Record().Outcome)
			entries = append(entries, adopted)
			out.results = append(out.results, res)
			if !slices.Contains(spec.Allowed, int64(res.ExitCode)) {
				out.err = &commandError{Summary: "Command exited with a disallowed code",
					Err: errors.New(commandFailure(spec, &prime.ExecResult{ExitCode: res.ExitCode, Stdout: res.Stdout, Stderr: res.Stderr}))}
				out.step = i
				r.forgetEntries(ctx, entries)
				return out
			}
			continue
		}
		if adopted != nil && adopted.Record().Outcome != nil {
			adopted.Finish() // another sandbox's outcome: not this member's any more
			adopted = nil
		}
		run.reporter.update(key, func(m *memberProgressState) { m.Step, m.JobID = i+1, "" })
		br, err := runBackground(ctx, r.client, backgroundRun{
			spec: spec, hash: hash, journal: r.jobs, attach: attach, entry: adopted, keep: true, start: memberRun,
			outputDir: memberOutputDir(plan, key), slots: slots,
			onJob: func(job prime.Job) { run.reporter.update(key, func(m *memberProgressState) { m.JobID = job.ID }) },
		})
		func() {
			defer lock()()
			fr.warnings = append(fr.warnings, memberWarnings(key, br.Warnings)...)
		}()
		if memberRun == nil {
			memberRun = br.Run
		}
		if br.Pending != nil && err != nil {
			p := memberProgress{SandboxID: id, Step: i, Job: *br.Pending}
			if p.Job.Run == nil {
				p.Job.Run = memberRun
			}
			for _, o := range out.results {
				p.Done = append(p.Done, *outcomeOf(o))
			}
			func() {
				defer lock()()
				fr.pending[key] = p
				if errors.Is(err, errJobInterrupted) {
					fr.interrupted = true
				}
			}()
			out.pending, out.step = true, i
			if !errors.Is(err, errJobInterrupted) {
				out.err = err // its outcome is unknown
			}
			keep()
			return out
		}
		if err != nil {
			if br.Result != nil {
				out.results = append(out.results, br.Result)
			}
			out.err, out.step = err, i
			r.forgetEntries(ctx, append(entries, br.Entry))
			return out
		}
		br.Entry.Complete(outcomeOf(br.Result))
		entries = append(entries, br.Entry)
		out.results = append(out.results, br.Result)
	}
	keep()
	return out
}

// forgetEntries ends the runs of a member that failed (backgroundRun.forget):
// the journal entries of its steps go and their claims in the sandbox are
// retired, so the next apply runs the member's steps again. Nil entries
// are skipped.
func (r *fleetCommandResource) forgetEntries(ctx context.Context, entries []*journal.JobEntry) {
	bySandbox := map[string][]string{}
	for _, e := range entries {
		if e == nil {
			continue
		}
		rec := e.Record()
		e.Finish()
		if rec.SandboxID != "" && rec.JobID != "" {
			bySandbox[rec.SandboxID] = append(bySandbox[rec.SandboxID], rec.RunHash+"/"+rec.JobID)
		}
	}
	for id, runs := range bySandbox {
		retireClaims(ctx, r.client, id, runs...)
	}
}

// memberOutputDir is where a member's full output goes (output_dir/<key>),
// "" without output_dir.
func memberOutputDir(plan fleetCommandModel, key string) string {
	if plan.OutputDir.IsNull() || plan.OutputDir.IsUnknown() || plan.OutputDir.ValueString() == "" {
		return ""
	}
	return filepath.Join(plan.OutputDir.ValueString(), key)
}

func memberWarnings(key string, ws []string) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = fmt.Sprintf("Member %q: %s", key, w)
	}
	return out
}

// stopPendingMembers stops the jobs of members an interrupted apply left
// running (the resource is being destroyed or replaced).
func stopPendingMembers(ctx context.Context, c *prime.Client, jobs *journal.Jobs, progress map[string]memberProgress, diags *diag.Diagnostics) {
	var problems memberkit.Problems
	memberkit.ForEachMember(ctx, tfkit.SortedKeys(progress), memberkit.DefaultConcurrency, func(ctx context.Context, key string) {
		if err := stopRunningJob(ctx, c, jobs, progress[key].Job); err != nil {
			problems.Add(key, "%v", err)
		}
	})
	if problems.Len() > 0 {
		diags.AddError("Background jobs not stopped",
			fmt.Sprintf("%d members still run a job that could not be stopped:\n\n%s", problems.Len(), problems.String()))
	}
}

// outcomeOf is a step's result as the job journal records it (nil: none).
func outcomeOf(r *commandResult) *journal.StepOutcome {
	if r == nil {
		return nil
	}
	return &journal.StepOutcome{ExitCode: r.ExitCode, Stdout: r.Stdout, Stderr: r.Stderr, Truncated: r.Truncated, ExecutedAt: r.ExecutedAt}
}

// resultOf is the result a job journal's outcome records.
func resultOf(o *journal.StepOutcome) *commandResult {
	return &commandResult{ExitCode: o.ExitCode, Stdout: o.Stdout, Stderr: o.Stderr, Truncated: o.Truncated, ExecutedAt: o.ExecutedAt}
}
