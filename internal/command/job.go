package command

// Background mode: a command runs as a job in its sandbox (the Prime SDK's
// start_background_job wrapper and file paths, which the verifiers framework
// uses for every rollout) instead of over one held gateway call. The job
// lives in the sandbox, so a broken poll, a gateway 5xx, an expired token,
// a lost connection, an interrupted or killed Terraform never start the
// command again: the provider waits for the job through the shared job
// poller, and a later apply that finds the job (in state, or in the local
// job journal) attaches to it and collects its result.
//
// One runner for prime_sandbox_command and every member of
// prime_fleet_command, with runCommand's gate, judging, scrubbing and error
// texts.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/primeintellect/terraform-provider-prime/internal/files"
	"github.com/primeintellect/terraform-provider-prime/internal/journal"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// pendingJob is a job an apply started and did not see end: what a later
// apply attaches to.
type pendingJob struct {
	SandboxID string    `json:"sandbox_id"`
	JobID     string    `json:"job_id"`
	Started   time.Time `json:"started"`
	// Confirmed: its start command answered (otherwise it may never have
	// started).
	Confirmed bool `json:"confirmed"`
	// Run is the run the job belongs to (nil: recorded by an older build).
	Run *runStart `json:"run,omitempty"`
}

func (p pendingJob) job() prime.Job { return prime.Job{SandboxID: p.SandboxID, ID: p.JobID} }

// errJobInterrupted: the apply was interrupted (Ctrl-C, a stopping
// Terraform) while the job ran. The job goes on; the result carries where.
var errJobInterrupted = errors.New("the apply was interrupted while the job ran; the job goes on in the sandbox and the next apply collects its result")

// errJobTimeout ends a background wait at timeout_seconds.
var errJobTimeout = errors.New("timeout_seconds reached")

// collectBudget bounds how long the output of a finished job is retried
// when the gateway fails: the job is done, so nothing runs again meanwhile.
const collectBudget = 5 * time.Minute

var collectBackoff = prime.Backoff{Initial: 500 * time.Millisecond, Factor: 2, Max: 10 * time.Second, Jitter: 0.2}

// backgroundRun is one background command step.
type backgroundRun struct {
	spec commandSpec
	// hash identifies the run in the job journal (journal.RunHash).
	hash    string
	journal *journal.Jobs
	// attach is a job an earlier apply started (from state); entry is a
	// journal entry the caller adopted. Neither: look in the journal, else
	// start one.
	attach *pendingJob
	entry  *journal.JobEntry
	// keep leaves the journal entry of a judged run to the caller
	// (backgroundResult.Entry), which finishes it once the result is in
	// the state it returns: a kill before that still finds the outcome.
	// outputDir, when set, receives the whole stdout and stderr of the
	// job; outputName names its files there (default: the job ID).
	outputDir, outputName string
	keep                  bool
	// slots, when set, bounds how many runs talk to the gateway at once
	// (start, collect): a fleet's max_concurrency. The wait holds none, so
	// every member's job runs at the same time.
	slots chan struct{}
	// onJob, when set, hears of the job the run waits for, once it is
	// started or attached to (progress reporting).
	onJob func(job prime.Job)
	// start is the run a job this step starts belongs to, kept with the
	// job (journal, state) so a later apply that collects it records the
	// same run.
	start *runStart
}

// hold takes one of run's slots until release is called (nothing to take
// without slots).
func (run backgroundRun) hold(ctx context.Context) (release func(), err error) {
	if run.slots == nil {
		return func() {}, nil
	}
	select {
	case run.slots <- struct{}{}:
		return func() { <-run.slots }, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// backgroundResult is what a background run produced.
type backgroundResult struct {
	Result *commandResult
	// Pending is set when the wait was interrupted (with
	// errJobInterrupted) or its outcome is unknown: the job to attach to.
	Pending *pendingJob
	// Job is the job that ran (its ID goes to state).
	Job prime.Job
	// OutputFiles are the full logs kept in outputDir.
	OutputFiles []files.ArtifactFileRecord
	// Warnings are things the user should know that did not fail the run.
	Warnings []string
	// Entry is the journal entry of a judged run, with keep: the caller
	// completes or finishes it.
	Entry *journal.JobEntry
	// Run is the run the job belongs to: the one an earlier apply recorded
	// with the job it started, else backgroundRun's start.
	Run *runStart
}

// runBackground runs, or attaches to, one background job, waits for it
// through the shared job poller, stops it at its timeout, reads its output
// tails once and judges its exit code as runCommand does.
func runBackground(ctx context.Context, c *prime.Client, run backgroundRun) (*backgroundResult, error) {
	spec := run.spec
	out := &backgroundResult{}
	// entry is this run's journal entry, locked while this process owns
	// the job.
	release, err := run.hold(ctx)
	if err != nil {
		return out, err
	}
	defer func() { release() }()
	entry := run.entry
	p := run.attach
	if p == nil && entry != nil {
		p = pendingOfEntry(entry)
	}
	if p == nil {
		if e := run.journal.Adopt(run.hash); e != nil {
			entry = e
			p = pendingOfEntry(e)
			tflog.Info(ctx, "attaching to a background job a killed apply started", map[string]any{"sandbox_id": p.SandboxID, "job_id": p.JobID})
		}
	}
	if p != nil && p.SandboxID != spec.SandboxID {
		entry.Finish() // the sandbox was replaced: the job went with the old one
		entry, p = nil, nil
	}
	if p != nil && p.Run != nil {
		run.start = p.Run // the run an earlier apply began, should it start the job again
	}
	if p != nil {
		exists, err := c.JobExists(ctx, p.job())
		switch {
		case err != nil:
			// Cannot prove it gone: never start it again; the wait decides.
			tflog.Debug(ctx, "checking a recorded job failed; waiting for it", map[string]any{"job_id": p.JobID, "error": err.Error()})
		case !exists && !p.Confirmed:
			// Its start never reached the sandbox: nothing ran, start it.
			if p, err = startJob(ctx, c, run, &entry, p.JobID); err != nil {
				return out, err
			}
		case !exists:
			out.Warnings = append(out.Warnings, fmt.Sprintf("Job %s, started by an earlier apply, left no files in sandbox %s "+
				"(its /tmp was cleared, or the sandbox restarted): it is proven gone, so the command runs again.", p.JobID, p.SandboxID))
			run.forget(ctx, c, entry, p.job())
			entry, p = nil, nil
		}
	}
	if p == nil {
		if spec.RequireOpenEgress {
			if _, err := checkEgressOpen(ctx, c, spec.SandboxID); err != nil {
				return out, &commandError{Summary: "Egress is restricted", Err: err}
			}
		}
		var err error
		if p, err = startJob(ctx, c, run, &entry, ""); err != nil {
			return out, err
		}
	}
	run.journal.NoteInUse(p.SandboxID, run.hash, p.JobID)
	if entry == nil {
		// Attached through state: journal it too, so a kill from here on
		// still leaves a trace (an older leftover of it goes first).
		run.journal.Drop(p.JobID)
		entry = run.journal.Begin(journal.JobRecord{RunHash: run.hash, SandboxID: p.SandboxID, JobID: p.JobID, Started: p.Started,
			Confirmed: p.Confirmed, Run: p.Run.encode()})
	}
	job := p.job()
	out.Job = job
	out.Run = p.Run
	if out.Run == nil {
		out.Run = run.start
	}
	if run.onJob != nil {
		run.onJob(job)
	}
	release()
	release = func() {}

	deadline := p.Started.Add(spec.Timeout)
	wctx, cancel := context.WithDeadlineCause(ctx, deadline, errJobTimeout)
	state, err := c.WaitJob(wctx, job)
	cancel()
	switch {
	case err == nil:
	case ctx.Err() != nil:
		// Interrupted: the job goes on; the next apply attaches.
		entry.Release()
		out.Pending = p
		return out, errJobInterrupted
	case errors.Is(context.Cause(wctx), errJobTimeout) || errors.Is(err, errJobTimeout):
		return out, stopTimedOutJob(ctx, c, run, job, entry, p)
	default:
		run.forget(ctx, c, entry, job)
		return out, &commandError{Summary: jobFailureSummary(err),
			Err: fmt.Errorf("sandbox %s, background job %s: %w", spec.SandboxID, job.ID, err)}
	}

	if release, err = run.hold(ctx); err != nil {
		entry.Release()
		out.Pending = p
		return out, errJobInterrupted
	}
	if err := spec.learnSandboxSecrets(ctx, c); err != nil {
		// The job is done, its output unread: the next apply reads the
		// secrets again and collects it; nothing runs twice.
		entry.Release()
		out.Pending = p
		return out, err
	}
	res, cut, err := collectJobOutput(ctx, c, job, spec)
	if errors.Is(err, prime.ErrSandboxNotRunning) {
		// The job completed (its exit code is known) and then its sandbox
		// ended: the output is gone for good, the exit code is not. Keep
		// it, as the SDK's completed status keeps exit_code beside
		// stdout_error and stderr_error.
		out.Warnings = append(out.Warnings, fmt.Sprintf("Background job %s in sandbox %s exited with code %d, but its "+
			"output could not be read (%v): stdout and stderr are recorded empty.", job.ID, spec.SandboxID, state.ExitCode, err))
		res, cut, err = &prime.ExecResult{}, false, nil
	}
	if err != nil {
		entry.Release()
		out.Pending = p
		return out, &commandError{Summary: "Job output not read",
			Err: fmt.Errorf("sandbox %s: background job %s exited with code %d, but its output could not be read: %w. "+
				"Nothing ran twice: the next apply reads the output again", spec.SandboxID, job.ID, state.ExitCode, err)}
	}
	res.ExitCode = state.ExitCode
	if run.outputDir != "" {
		files, err := saveJobOutput(ctx, c, job, spec, run.outputDir, orString(run.outputName, job.ID))
		if err != nil {
			out.Warnings = append(out.Warnings, fmt.Sprintf("The full output of job %s in sandbox %s was not saved to %s: %v",
				job.ID, spec.SandboxID, run.outputDir, err))
		}
		out.OutputFiles = files
	}
	result, err := judgeResult(spec, res, cut, time.Now().UTC())
	out.Result = result
	if run.keep {
		out.Entry = entry
	} else {
		run.forget(ctx, c, entry, job)
	}
	return out, err
}

// pendingOfEntry is the job a journal entry records.
func pendingOfEntry(e *journal.JobEntry) *pendingJob {
	r := e.Record()
	return &pendingJob{SandboxID: r.SandboxID, JobID: r.JobID, Started: r.Started, Confirmed: r.Confirmed, Run: decodeRunStart(r.Run)}
}

// forget ends a run that is over without a result Terraform holds (it
// failed, timed out, or is proven gone): its journal entry goes and its
// claim in the sandbox is retired, so that the next apply, on any machine,
// runs the command again instead of attaching to this job. Retiring is
// best effort: a claim left behind only makes the next apply attach to
// this job and judge it again, which retires it then.
func (run backgroundRun) forget(ctx context.Context, c *prime.Client, entry *journal.JobEntry, job prime.Job) {
	entry.Finish()
	retireClaims(ctx, c, job.SandboxID, run.hash+"/"+job.ID)
}

// retireClaims retires run claims in one sandbox (prime.RetireRunClaims),
// logging a failure: see backgroundRun.forget.
func retireClaims(ctx context.Context, c *prime.Client, sandboxID string, runs ...string) {
	if err := c.RetireRunClaims(context.WithoutCancel(ctx), sandboxID, runs...); err != nil {
		tflog.Warn(ctx, "a run claim could not be retired; the next apply attaches to its job once more", map[string]any{
			"sandbox_id": sandboxID, "error": err.Error(),
		})
	}
}

// claim is the claim in the sandbox that a job start of run makes; it
// names the run's ID, which an apply on another machine that attaches to
// the job records (attachClaimed).
func (run backgroundRun) claim(started time.Time, force bool) *prime.RunClaim {
	rc := &prime.RunClaim{Run: run.hash, Started: started, Force: force}
	if run.start != nil {
		rc.RunID = run.start.RunID
	}
	return rc
}

func orString(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// startJob journals a job, then starts it. A start whose outcome is
// unknown is checked before anything else happens: if the job did not
// start, it is started again with the same ID (nothing ran); if that
// cannot be told, the wait decides (never a second start).
func startJob(ctx context.Context, c *prime.Client, run backgroundRun, entry **journal.JobEntry, id string) (*pendingJob, error) {
	return startClaimedJob(ctx, c, run, entry, id, time.Now().UTC(), false)
}

// startClaimedJob is startJob with the start time to record and whether
// to claim the run even though other jobs did (force). A start refused
// because another job claimed the run attaches to that job instead
// (attachClaimed): the run is already started, by an apply that was lost.
func startClaimedJob(ctx context.Context, c *prime.Client, run backgroundRun, entry **journal.JobEntry, id string, started time.Time, force bool) (*pendingJob, error) {
	spec := run.spec
	if id == "" {
		id = prime.NewJobID()
	}
	if spec.RunStamp != "" && run.start != nil {
		spec.RunStamp = run.start.RunID // the stamp names the run the job belongs to
	}
	p := &pendingJob{SandboxID: spec.SandboxID, JobID: id, Started: started, Run: run.start}
	rec := journal.JobRecord{RunHash: run.hash, SandboxID: p.SandboxID, JobID: id, Started: p.Started, Run: run.start.encode()}
	if *entry == nil {
		*entry = run.journal.Begin(rec)
	} else {
		(*entry).Update(rec)
	}
	// In use before its claim exists: another resource of this apply
	// with the same run, starting at the same moment, must not attach to
	// it (TakeClaim).
	run.journal.NoteInUse(p.SandboxID, run.hash, id)
	req := prime.JobRequest{Command: spec.commandLine(), WorkingDir: spec.WorkingDir, Env: spec.Env, SensitiveEnv: spec.EnvWO,
		Claim: run.claim(p.Started, force)}
	tflog.Info(ctx, "starting background job", map[string]any{"sandbox_id": spec.SandboxID, "job_id": id, "timeout": spec.Timeout.String()})
	err := c.StartJob(ctx, p.job(), req)
	var claimed *prime.ClaimedError
	if errors.As(err, &claimed) {
		return attachClaimed(ctx, c, run, entry, claimed)
	}
	if errors.Is(err, prime.ErrCommandMayStillRun) {
		exists, xerr := c.JobExists(ctx, p.job())
		switch {
		case xerr != nil || exists:
			err = nil // started, or unknown: wait for it, never start it twice
		default:
			err = c.StartJob(ctx, p.job(), req)
		}
	}
	if err != nil {
		if errors.Is(err, prime.ErrCommandMayStillRun) {
			(*entry).Release()
			*entry = nil
			return nil, &commandError{Summary: "Job start unknown", Err: fmt.Errorf("sandbox %s: starting background job %s: %w. "+
				"The next apply checks whether it started before doing anything else", spec.SandboxID, id, err)}
		}
		(*entry).Finish()
		*entry = nil
		return nil, &commandError{Summary: "Command failed to run", Err: fmt.Errorf("sandbox %s: starting background job %s: %w", spec.SandboxID, id, err)}
	}
	p.Confirmed = true
	rec.Confirmed = true
	(*entry).Update(rec)
	return p, nil
}

// stopTimedOutJob stops a job that outlived timeout_seconds: SIGTERM to
// its process group, then SIGKILL after the stop grace, so it is not left
// running while egress is locked or the sandbox reused.
func stopTimedOutJob(ctx context.Context, c *prime.Client, run backgroundRun, job prime.Job, entry *journal.JobEntry, p *pendingJob) error {
	spec := run.spec
	stop, err := c.StopJob(ctx, job, c.CommandStopGrace())
	if err != nil {
		entry.Release()
		return &commandError{Summary: "Command timed out",
			Err: fmt.Errorf("sandbox %s: background job %s outlived timeout_seconds (%s) and could not be stopped: %w. %v; "+
				"the next apply attaches to it and stops it", spec.SandboxID, job.ID, spec.Timeout, err, prime.ErrCommandMayStillRun)}
	}
	run.forget(ctx, c, entry, job)
	what := fmt.Sprintf("it was stopped (%s)", stop.Signal)
	if stop.Signal == "SIGKILL" {
		what = fmt.Sprintf("it was stopped (SIGTERM, then SIGKILL after %s)", c.CommandStopGrace())
	}
	if stop.AlreadyExited {
		what = "it exited just as it was being stopped"
	}
	after := ""
	if spec.AfterFailure != "" {
		after = " " + strings.TrimSuffix(spec.AfterFailure, ".")
	}
	return &commandError{Summary: "Command timed out",
		Err: fmt.Errorf("sandbox %s: background job %s did not finish within timeout_seconds (%s, since %s); %s.%s",
			spec.SandboxID, job.ID, spec.Timeout, p.Started.Format(time.RFC3339), what, after)}
}

// jobFailureSummary titles a job-level failure.
func jobFailureSummary(err error) string {
	if errors.Is(err, prime.ErrSandboxNotRunning) {
		return "Sandbox terminated mid-job"
	}
	return "Background job failed"
}

// collectJobOutput reads a finished job's output tails, retrying transient
// failures for a while (the job is done: retrying runs nothing).
func collectJobOutput(ctx context.Context, c *prime.Client, job prime.Job, spec commandSpec) (*prime.ExecResult, bool, error) {
	cctx, cancel := context.WithTimeout(ctx, collectBudget)
	defer cancel()
	var res prime.ExecResult
	var cut bool
	var last error
	try := func(ctx context.Context) (bool, error) {
		stdout, stderr, cutOut, cutErr, err := c.JobOutput(ctx, job, MaxOutput)
		if err != nil {
			if errors.Is(err, prime.ErrSandboxNotRunning) {
				return false, err
			}
			last = err
			return false, nil
		}
		res, cut = prime.ExecResult{Stdout: stdout, Stderr: stderr}, cutOut || cutErr
		return true, nil
	}
	if done, err := try(cctx); done || err != nil {
		return &res, cut, err
	}
	if err := prime.Poll(cctx, collectBackoff, try); err != nil {
		if last != nil && cctx.Err() != nil {
			return nil, false, last
		}
		return nil, false, err
	}
	return &res, cut, nil
}

// saveJobOutput downloads the job's whole stdout and stderr into dir, with
// env_wo values and the sandbox's secrets scrubbed, under temporary names
// renamed when complete.
func saveJobOutput(ctx context.Context, c *prime.Client, job prime.Job, spec commandSpec, dir, name string) ([]files.ArtifactFileRecord, error) {
	secrets := spec.secretValues()
	var out []files.ArtifactFileRecord
	for _, f := range []struct{ remote, local string }{
		{job.StdoutPath(), filepath.Join(dir, name+".stdout.log")},
		{job.StderrPath(), filepath.Join(dir, name+".stderr.log")},
	} {
		rec, err := downloadScrubbed(ctx, c, job.SandboxID, f.remote, f.local, secrets)
		if err != nil {
			return out, err
		}
		out = append(out, rec)
	}
	return out, nil
}

// downloadScrubbed is files.DownloadOneFile with secrets scrubbed on the way.
func downloadScrubbed(ctx context.Context, c *prime.Client, sandboxID, remote, local string, secrets []string) (files.ArtifactFileRecord, error) {
	if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil { //nolint:gosec // G301: logs are the operator's to read
		return files.ArtifactFileRecord{}, err
	}
	res, err := files.DownloadArtifact(ctx, c, files.ArtifactRequest{SandboxID: sandboxID, Remote: remote, Local: local,
		Kind: files.ArtifactFile, MaxBytes: files.DefaultArtifactMaxSize, AllowMissing: true, Scrub: secrets})
	if err != nil {
		return files.ArtifactFileRecord{}, err
	}
	if !res.Exists {
		return files.ArtifactFileRecord{Path: local}, nil
	}
	return res.Files[0], nil
}

// claimedRun is the run of a job another apply started and claimed: the
// run ID in its claim (its results carry that stamp), started when the
// claim says; what the sandbox enforced then is not known. A claim without
// a run ID (an older build's) leaves this apply's own run, as before.
func claimedRun(cl prime.JobClaim, own *runStart) *runStart {
	if cl.RunID == "" || !prime.ValidRunID(cl.RunID) {
		return own
	}
	return &runStart{RunID: cl.RunID, StartedAt: cl.Started}
}

// attachClaimed handles a start refused because other jobs claimed the
// run (in the sandbox, see prime.RunClaim): an apply, on this machine or
// another, started the run and was lost before its result reached state.
// It attaches to the oldest claim this process has not taken (the run a
// lost apply started), after checking that its job exists: a claim whose
// job never started (the apply was lost between the two) is started now,
// with its own ID. When every claim is this process's own (another
// resource of this apply runs the same command on the same sandbox), the
// run is claimed once more, for a new job.
func attachClaimed(ctx context.Context, c *prime.Client, run backgroundRun, entry **journal.JobEntry, claimed *prime.ClaimedError) (*pendingJob, error) {
	ids := make([]string, len(claimed.Claims))
	byID := make(map[string]prime.JobClaim, len(claimed.Claims))
	for i, cl := range claimed.Claims {
		ids[i], byID[cl.JobID] = cl.JobID, cl
	}
	id, ok := run.journal.TakeClaim(run.spec.SandboxID, run.hash, ids)
	if !ok {
		return startClaimedJob(ctx, c, run, entry, "", time.Now().UTC(), true)
	}
	p := &pendingJob{SandboxID: run.spec.SandboxID, JobID: id, Started: byID[id].Started, Run: claimedRun(byID[id], run.start)}
	run.start = p.Run // a start again with its own ID stamps the claimed run
	rec := journal.JobRecord{RunHash: run.hash, SandboxID: p.SandboxID, JobID: id, Started: p.Started, Run: p.Run.encode()}
	(*entry).Update(rec)
	tflog.Info(ctx, "attaching to the background job an earlier apply started (its claim is in the sandbox)",
		map[string]any{"sandbox_id": p.SandboxID, "job_id": id, "started": p.Started.Format(time.RFC3339)})
	exists, err := c.JobExists(ctx, p.job())
	if err == nil && !exists {
		return startClaimedJob(ctx, c, run, entry, id, p.Started, false)
	}
	// Started, or unknown: wait for it, never start it twice.
	p.Confirmed = true
	rec.Confirmed = true
	(*entry).Update(rec)
	return p, nil
}
