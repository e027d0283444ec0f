package prime

// Background jobs, compatible with prime-sandboxes 0.2.39's
// start_background_job: the same wrapper (nohup sh -c, a subshell, the
// canonical files in /tmp), so the SDK's get_background_job and the
// platform's background-jobs status:batchGet (which reads the canonical
// exit file) see our jobs as theirs. Our extension: setsid makes the job a
// process-group leader and a pgid file records the group, so a job can be
// stopped (the SDK has no cancel).

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

const (
	// jobStartTimeout is the SDK's timeout of the starting command.
	jobStartTimeout = 30 * time.Second
	// jobControlTimeout bounds the small commands that probe, signal or
	// read a job.
	jobControlTimeout = 30 * time.Second
	// jobOutputTimeout bounds the command that reads a job's log tails.
	jobOutputTimeout = 60 * time.Second
)

// Exit codes recorded for a job StopJob ended (128 + the signal, as a
// shell reports a command a signal killed).
const (
	jobExitTerm = 143
	jobExitKill = 137
)

var (
	jobIDPattern  = regexp.MustCompile(`^[0-9a-f]{8}$`)
	envKeyPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// NewJobID returns a fresh job id: 8 lowercase hex characters, the SDK's
// format (which the platform's batch endpoint requires), from crypto/rand.
func NewJobID() string { return randomHex(4) }

// Job names one background job.
type Job struct {
	SandboxID, ID string
}

// StdoutPath is the job's stdout log (the SDK's canonical path).
func (j Job) StdoutPath() string { return "/tmp/job_" + j.ID + ".stdout.log" }

// StderrPath is the job's stderr log (the SDK's canonical path).
func (j Job) StderrPath() string { return "/tmp/job_" + j.ID + ".stderr.log" }

// ExitPath is the file the job's exit code is written to (the SDK's
// canonical path; the platform's batch endpoint reads it).
func (j Job) ExitPath() string { return "/tmp/job_" + j.ID + ".exit" }

// PGIDPath is our addition: the job's process group id, written first.
func (j Job) PGIDPath() string { return "/tmp/job_" + j.ID + ".pgid" }

func (j Job) String() string { return "job " + j.ID + " in sandbox " + j.SandboxID }

func (j Job) check() error {
	if j.SandboxID == "" {
		return fmt.Errorf("%w: a job needs a sandbox id", ErrInvalidRequest)
	}
	if !jobIDPattern.MatchString(j.ID) {
		return fmt.Errorf("%w: job id %q is not 8 lowercase hex characters", ErrInvalidRequest, j.ID)
	}
	return nil
}

// JobRequest is what a job runs.
type JobRequest struct {
	Command, WorkingDir string
	// Env and SensitiveEnv go into the starting command's environment
	// (Connect envs, REST env), which the job inherits: not as export lines
	// in the command (the SDK's way), so secret values stay out of the
	// command line, and hence out of every process listing. SensitiveEnv
	// values are scrubbed from every log and error.
	Env, SensitiveEnv map[string]string
	// Claim, when set, claims a run for the job in the same command that
	// starts it (job_claims.go): a start refused because another job
	// claimed the run is a *ClaimedError, and nothing starts.
	Claim *RunClaim
}

// jobStartCommand is the one command that starts a job:
//
//	nohup setsid sh -c '<SH>' < /dev/null > /dev/null 2>&1 &
//	SH = echo $$ > PGID; ([cd DIR && ]COMMAND) > STDOUT 2> STDERR; echo $? > EXIT
//
// The SDK's wrapper, with setsid and the pgid file added (ours): sh -c
// runs in the process setsid made a session and group leader, so $$ is the
// group's id.
func jobStartCommand(job Job, req JobRequest) string {
	body := req.Command
	if req.WorkingDir != "" {
		body = "cd " + shellQuote(req.WorkingDir) + " && " + body
	}
	sh := "echo $$ > " + shellQuote(job.PGIDPath()) + "; (" + body + ") > " + shellQuote(job.StdoutPath()) +
		" 2> " + shellQuote(job.StderrPath()) + "; echo $? > " + shellQuote(job.ExitPath())
	return "nohup setsid sh -c " + shellQuote(sh) + " < /dev/null > /dev/null 2>&1 &"
}

// StartJob starts the job with the given (caller-chosen, already
// journaled) id by one ordinary command (timeout 30 s, jobStartCommand,
// after claimPrefix with a Claim).
// An error whose outcome is unknown (the start may have reached the
// sandbox) wraps ErrCommandMayStillRun: the caller must then NOT start the
// job again, but ask JobExists. Other errors (the request was refused, or
// never left, or the sandbox is not running) mean nothing started.
func (c *Client) StartJob(ctx context.Context, job Job, req JobRequest) error {
	what := "starting " + job.String()
	if err := job.check(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if strings.TrimSpace(req.Command) == "" {
		return fmt.Errorf("%s: %w: no command", what, ErrInvalidRequest)
	}
	for _, env := range []map[string]string{req.Env, req.SensitiveEnv} {
		for k := range env {
			if !envKeyPattern.MatchString(k) {
				return fmt.Errorf("%s: %w: invalid environment variable name %q", what, ErrInvalidRequest, k)
			}
		}
	}
	if err := req.Claim.check(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	command := jobStartCommand(job, req)
	if req.Claim != nil {
		command = claimPrefix(job, *req.Claim) + command
	}
	res, err := c.Exec(ctx, job.SandboxID, ExecRequest{
		Command: command, Env: req.Env, SensitiveEnv: req.SensitiveEnv, Timeout: jobStartTimeout,
	})
	if claimed := claimRefusal(req.Claim, res); err == nil && claimed != nil {
		return claimed
	}
	switch {
	case err != nil && (commandNeverRan(err) || errors.Is(err, ErrCommandMayStillRun)):
		return fmt.Errorf("%s: %w", what, err)
	case err != nil:
		return fmt.Errorf("%s: %w (check whether it exists before starting it again): %w", what, ErrCommandMayStillRun, err)
	case res.ExitCode != 0:
		// "… &" exits 0 once the job is launched; anything else is a shell
		// that failed somewhere, maybe after the launch.
		return fmt.Errorf("%s: the starting command exited %d (%s): %w", what, res.ExitCode,
			strings.TrimSpace(clip(ScrubText(res.Stderr, mapValues(req.SensitiveEnv)), 512)), ErrCommandMayStillRun)
	}
	return nil
}

// commandNeverRan reports failures that prove a command did not run: the
// request never left, the gateway refused its token, the sandbox is not
// running (the gateway refused, or it is gone), or the request was invalid.
func commandNeverRan(err error) bool {
	var pre *preSendError
	return errors.As(err, &pre) || errors.Is(err, ErrInvalidRequest) || errors.Is(err, ErrSandboxNotRunning) ||
		StatusCodeOf(err) == 401
}

// JobExists reports whether any of the job's files exist (one command), to
// prove a job whose start had an unknown outcome absent (or present).
func (c *Client) JobExists(ctx context.Context, job Job) (bool, error) {
	what := "checking whether " + job.String() + " exists"
	if err := job.check(); err != nil {
		return false, fmt.Errorf("%s: %w", what, err)
	}
	res, err := c.Exec(ctx, job.SandboxID, ExecRequest{Command: jobExistsCommand(job), Timeout: jobControlTimeout})
	if err != nil {
		return false, fmt.Errorf("%s: %w", what, err)
	}
	switch res.ExitCode {
	case 0:
		return true, nil
	case 1:
		return false, nil
	}
	return false, fmt.Errorf("%s: test exited %d: %s", what, res.ExitCode, strings.TrimSpace(clip(res.Stderr, 512)))
}

func jobExistsCommand(job Job) string {
	return "test -e " + shellQuote(job.PGIDPath()) + " || test -e " + shellQuote(job.StdoutPath()) +
		" || test -e " + shellQuote(job.ExitPath())
}

// JobState is a job's end as its exit file records it.
type JobState struct {
	Completed bool
	ExitCode  int
}

// WaitJob blocks until the job has exited (its exit file holds an
// integer), ctx ends (its cause is returned), or a job-level failure: the
// platform terminated the sandbox mid-job (ErrSandboxNotRunning with a
// *SandboxFailedError naming its status and reason), or the platform's job
// status check failed for this job (a *JobStatusError). Transient failures
// are logged and polling goes on: a broken poll never reads as the job's
// end. Every waiting job shares the client's JobPoller.
func (c *Client) WaitJob(ctx context.Context, job Job) (JobState, error) {
	if err := job.check(); err != nil {
		return JobState{}, fmt.Errorf("waiting for %s: %w", job, err)
	}
	return c.JobPoller().Wait(ctx, job)
}

// jobOutputCommand reads both tails in one command; getting max+1 bytes
// tells whether a log was longer than max.
func jobOutputCommand(job Job, maxBytes int) string {
	n := strconv.Itoa(maxBytes + 1)
	return "tail -c " + n + " -- " + shellQuote(job.StdoutPath()) + " 2>/dev/null; tail -c " + n + " -- " +
		shellQuote(job.StderrPath()) + " 1>&2 2>/dev/null"
}

// JobOutput reads the last maxBytes of the job's stdout and stderr once
// the job has completed, in one command (jobOutputCommand), and whether
// each log was cut. The bytes are as received: the caller makes them valid
// UTF-8. A command and not read-file, because VM sandboxes ignore
// read-file's window and answer 413 over their read limit: a big log could
// not be tailed. The answer is kept out of debug records (a job's output
// may carry what its secrets revealed; the caller scrubs it).
func (c *Client) JobOutput(ctx context.Context, job Job, maxBytes int) (stdout, stderr string, stdoutCut, stderrCut bool, err error) {
	what := "reading the output of " + job.String()
	if err := job.check(); err != nil {
		return "", "", false, false, fmt.Errorf("%s: %w", what, err)
	}
	if maxBytes <= 0 {
		return "", "", false, false, fmt.Errorf("%s: %w: the tail length must be positive", what, ErrInvalidRequest)
	}
	res, err := c.exec(ctx, job.SandboxID, ExecRequest{
		Command: jobOutputCommand(job, maxBytes), Timeout: jobOutputTimeout, SensitiveOutput: true,
	}, execMode{raw: true})
	if err != nil {
		return "", "", false, false, fmt.Errorf("%s: %w", what, err)
	}
	stdout, stdoutCut = lastBytes(res.Stdout, maxBytes)
	stderr, stderrCut = lastBytes(res.Stderr, maxBytes)
	return stdout, stderr, stdoutCut, stderrCut, nil
}

// lastBytes is the last n bytes of s, and whether s was longer.
func lastBytes(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	return s[len(s)-n:], true
}

// StopResult says how StopJob ended a job.
type StopResult struct {
	// Signal is "SIGTERM" or "SIGKILL": the signal that ended the group
	// (empty when none was needed).
	Signal string
	// AlreadyExited: the job had exited by itself; nothing was sent.
	AlreadyExited bool
	// NotStarted: neither the pgid file nor the exit file exists (the job
	// never started, or its files are gone); nothing was sent.
	NotStarted bool
	// SandboxGone: the sandbox is gone or not running: nothing runs any
	// more.
	SandboxGone bool
}

// StopJob ends a job: it reads the exit file (a job that exited is left
// alone) and the pgid file, sends SIGTERM to the job's process group,
// checks with the one wait helper until the group is gone or grace ends,
// then sends SIGKILL; finally it records 143 (or 137) in the exit file
// when the job wrote none, so that the SDK and the batch endpoint see the
// job as ended. A sandbox that is gone or not running is success. It uses
// ctx as given: a caller stopping a job because its own context ended
// passes a fresh one.
func (c *Client) StopJob(ctx context.Context, job Job, grace time.Duration) (*StopResult, error) {
	what := "stopping " + job.String()
	if err := job.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	res, err := c.stopJob(ctx, job, grace)
	if errors.Is(err, ErrSandboxNotRunning) {
		return &StopResult{SandboxGone: true}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return res, nil
}

func (c *Client) stopJob(ctx context.Context, job Job, grace time.Duration) (*StopResult, error) {
	if _, exited, err := c.readExitCode(ctx, job); err != nil || exited {
		return &StopResult{AlreadyExited: exited}, err
	}
	pgid, found, err := c.readPGID(ctx, job, grace)
	if err != nil {
		return nil, err
	}
	if !found {
		// No pgid after the grace: maybe the job exited meanwhile.
		if _, exited, err := c.readExitCode(ctx, job); err != nil || exited {
			return &StopResult{AlreadyExited: exited}, err
		}
		return &StopResult{NotStarted: true}, nil
	}
	res := &StopResult{Signal: "SIGTERM"}
	code := jobExitTerm
	alive, err := c.signalGroup(ctx, job, "TERM", pgid)
	if err != nil {
		return nil, err
	}
	if !alive {
		// Gone between the reads: it exited by itself (or something
		// else ended it without a record, which the fix-up covers).
		res = &StopResult{AlreadyExited: true}
	} else if gone, err := c.groupGone(ctx, job, pgid, grace); err != nil {
		return nil, err
	} else if !gone {
		if _, err := c.signalGroup(ctx, job, "KILL", pgid); err != nil {
			return nil, err
		}
		res.Signal, code = "SIGKILL", jobExitKill
	}
	if err := c.runChecked(ctx, job.SandboxID, "recording the exit code", jobExitFixCommand(job, code), jobControlTimeout); err != nil {
		return nil, err
	}
	return res, nil
}

func jobSignalCommand(sig string, pgid int) string {
	return "kill -" + sig + " -- -" + strconv.Itoa(pgid)
}

func jobExitFixCommand(job Job, code int) string {
	return "test -s " + shellQuote(job.ExitPath()) + " || echo " + strconv.Itoa(code) + " > " + shellQuote(job.ExitPath())
}

// signalGroup sends sig ("TERM", "KILL", "0") to the process group and
// reports whether there was one (kill's exit 0).
func (c *Client) signalGroup(ctx context.Context, job Job, sig string, pgid int) (bool, error) {
	res, err := c.Exec(ctx, job.SandboxID, ExecRequest{Command: jobSignalCommand(sig, pgid), Timeout: jobControlTimeout})
	if err != nil {
		return false, fmt.Errorf("signalling the process group %d: %w", pgid, err)
	}
	return res.ExitCode == 0, nil
}

// groupGone checks (kill -0) until the group is gone or grace ends, on the
// one wait helper. [I: in a container whose init does not reap orphans, a
// stopped job's processes linger as zombies and still answer kill -0; the
// job then reads as alive until the grace ends and gets a SIGKILL, which
// is harmless.]
func (c *Client) groupGone(ctx context.Context, job Job, pgid int, grace time.Duration) (bool, error) {
	if grace <= 0 {
		return false, nil
	}
	gctx, cancel := context.WithTimeout(ctx, grace)
	defer cancel()
	gone := false
	err := Poll(gctx, jobStopChecks(grace), func(ctx context.Context) (bool, error) {
		alive, err := c.signalGroup(ctx, job, "0", pgid)
		if err != nil && !errors.Is(err, ErrSandboxNotRunning) && ctx.Err() == nil {
			// A failed check is no answer: check again, SIGKILL at the end.
			c.debug(ctx, "Prime job stop: a liveness check failed", map[string]any{"sandbox_id": job.SandboxID, "job_id": job.ID, "error": err.Error()})
			return false, nil
		}
		gone = err == nil && !alive
		return gone, err
	})
	if err != nil && ctx.Err() == nil && gctx.Err() != nil {
		err = nil // the grace ran out: SIGKILL
	}
	return gone, err
}

// jobStopChecks paces the liveness checks of a stop: a few across the
// grace, the first soon (most jobs end on SIGTERM at once).
func jobStopChecks(grace time.Duration) Backoff {
	return Backoff{Initial: max(grace/20, 50*time.Millisecond), Factor: 2, Max: max(grace/4, 50*time.Millisecond)}
}

// readExitCode reads the exit file: exited when it holds an integer.
func (c *Client) readExitCode(ctx context.Context, job Job) (int, bool, error) {
	r, err := c.ReadFile(ctx, job.SandboxID, ReadFileRequest{Path: job.ExitPath(), Timeout: jobControlTimeout})
	if errors.Is(err, ErrFileNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	code, ok := parseExitCode(r.Content)
	return code, ok, nil
}

// parseExitCode reads an exit file's content: an integer, or not yet
// (empty, or a write in progress).
func parseExitCode(s string) (int, bool) {
	code, err := strconv.Atoi(strings.TrimSpace(s))
	return code, err == nil
}

// readPGID reads the pgid file, waiting up to grace for a job that is
// still starting (the wrapper writes it first, a moment after the starting
// command returned). A pgid below 2 is refused: kill -- -1 would signal
// every process.
func (c *Client) readPGID(ctx context.Context, job Job, grace time.Duration) (int, bool, error) {
	read := func(ctx context.Context) (int, bool, error) {
		r, err := c.ReadFile(ctx, job.SandboxID, ReadFileRequest{Path: job.PGIDPath(), Timeout: jobControlTimeout})
		if errors.Is(err, ErrFileNotFound) {
			return 0, false, nil
		}
		if err != nil {
			return 0, false, err
		}
		s := strings.TrimSpace(r.Content)
		if s == "" {
			return 0, false, nil // being written
		}
		pgid, perr := strconv.Atoi(s)
		if perr != nil || pgid < 2 {
			return 0, false, fmt.Errorf("the pgid file %s holds %q, not a process group id", job.PGIDPath(), clip(s, 40))
		}
		return pgid, true, nil
	}
	pgid, found, err := read(ctx)
	if err != nil || found || grace <= 0 {
		return pgid, found, err
	}
	gctx, cancel := context.WithTimeout(ctx, grace)
	defer cancel()
	perr := Poll(gctx, jobStopChecks(grace), func(ctx context.Context) (bool, error) {
		pgid, found, err = read(ctx)
		return found, err
	})
	if perr != nil && ctx.Err() == nil && gctx.Err() != nil {
		return 0, false, nil // the grace ran out without a pgid
	}
	return pgid, found, perr
}
