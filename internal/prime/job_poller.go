package prime

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// DefaultJobPollInterval is how often the job poller looks at every
// waiting job (verifiers polls its jobs every second too).
const DefaultJobPollInterval = time.Second

// MaxBatchJobs is the most jobs one background-jobs status:batchGet may
// carry.
const MaxBatchJobs = 100

// jobReadConcurrency bounds the per-job exit-file reads of one round: they
// go to the gateways, which the REST throttle does not pace.
const jobReadConcurrency = 16

// Per-job error codes of the background-jobs status:batchGet, beyond the
// sandbox batch's NOT_FOUND, FORBIDDEN and MANAGED.
const (
	BatchCodeNotVM        = "NOT_VM"
	BatchCodeNotRunning   = "NOT_RUNNING"
	BatchCodeRuntimeError = "RUNTIME_ERROR"
)

// ErrJobBatchUnsupported: the platform answered the background-jobs
// status:batchGet with 404 or 405. The client does not ask it again.
var ErrJobBatchUnsupported = errors.New("the background-jobs status:batchGet endpoint is unavailable")

// BackgroundJobRef names a job on the wire.
type BackgroundJobRef struct {
	SandboxID string `json:"sandbox_id"`
	JobID     string `json:"job_id"`
}

// BatchJobStatusRequest is the background-jobs status:batchGet body.
type BatchJobStatusRequest struct {
	Jobs []BackgroundJobRef `json:"jobs"`
}

// BackgroundJobStatus is one entry of BatchJobStatusResponse.Statuses.
type BackgroundJobStatus struct {
	SandboxID string `json:"sandbox_id"`
	JobID     string `json:"job_id"`
	Completed bool   `json:"completed"`
	ExitCode  *int   `json:"exit_code"`
}

// BackgroundJobStatusError is one entry of BatchJobStatusResponse.Errors.
type BackgroundJobStatusError struct {
	SandboxID string `json:"sandbox_id"`
	JobID     string `json:"job_id"`
	Code      string `json:"code"`
	Message   string `json:"message"`
}

// BatchJobStatusResponse answers the background-jobs status:batchGet.
type BatchJobStatusResponse struct {
	Statuses []BackgroundJobStatus      `json:"statuses"`
	Errors   []BackgroundJobStatusError `json:"errors"`
}

// JobStatusError is the platform's status check failing for one job (a
// per-job error of the batch endpoint, or an answer that leaves the job
// out or calls it completed without an exit code).
type JobStatusError struct {
	SandboxID, JobID string
	Code             string // the platform's code; empty for a malformed answer
	Message          string
}

func (e *JobStatusError) Error() string {
	code := e.Code
	if code == "" {
		code = "malformed answer"
	}
	return fmt.Sprintf("the platform's status check of job %s in sandbox %s failed (%s): %s", e.JobID, e.SandboxID, code, e.Message)
}

// BatchJobStatus asks the platform whether 1 to 100 unique jobs have
// completed (it reads their canonical exit files): POST
// /sandbox/background-jobs/status:batchGet, retried as an idempotent
// request and paced by the throttle. A 404 or 405 makes the client stop
// using the endpoint, as the SDK does: ErrJobBatchUnsupported, then and
// from then on, without a request.
func (c *Client) BatchJobStatus(ctx context.Context, jobs []Job) (*BatchJobStatusResponse, error) {
	if len(jobs) == 0 || len(jobs) > MaxBatchJobs {
		return nil, fmt.Errorf("%w: background-jobs status:batchGet takes 1 to %d jobs, got %d", ErrInvalidRequest, MaxBatchJobs, len(jobs))
	}
	body := BatchJobStatusRequest{Jobs: make([]BackgroundJobRef, 0, len(jobs))}
	seen := make(map[Job]bool, len(jobs))
	for _, j := range jobs {
		if err := j.check(); err != nil {
			return nil, fmt.Errorf("background-jobs status:batchGet: %w", err)
		}
		if seen[j] {
			return nil, fmt.Errorf("%w: background-jobs status:batchGet: %s twice", ErrInvalidRequest, j)
		}
		seen[j] = true
		body.Jobs = append(body.Jobs, BackgroundJobRef{SandboxID: j.SandboxID, JobID: j.ID})
	}
	if c.jobBatchUnsupported.Load() {
		return nil, ErrJobBatchUnsupported
	}
	var out BatchJobStatusResponse
	err := c.do(ctx, call{
		method: http.MethodPost, path: "/sandbox/background-jobs/status:batchGet",
		body: body, out: &out, retry: retryIdempotent,
	})
	if code := StatusCodeOf(err); code == http.StatusNotFound || code == http.StatusMethodNotAllowed {
		c.jobBatchUnsupported.Store(true)
		c.debug(ctx, "background-jobs status:batchGet unsupported; falling back to reading exit files", map[string]any{"status": code})
		return nil, fmt.Errorf("%w: %w", ErrJobBatchUnsupported, err)
	}
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// JobPoller is the client's one poller of background jobs, shared by every
// waiter of the process (the sibling of StatusPoller, on the same engine).
// Every JobPollInterval a round looks at every waiting job: in
// background-jobs status:batchGet requests of up to 100 jobs, all of a
// round's chunks sent together (a round over N jobs costs ⌈N/100⌉
// requests); jobs the endpoint answered NOT_VM, and every job once the
// endpoint answered 404/405, by reading their exit file.
//
// The batch's per-job errors: NOT_VM reads that job's exit file from then
// on (every sandbox is a VM now, but the platform still lists the code
// among its answers, and reading the file is the answer that works);
// RUNTIME_ERROR (the platform failed to read the exit file) reads it
// directly that round; NOT_RUNNING and NOT_FOUND ask the sandbox's error
// context once per round and end the wait with the platform's reason when
// it ended (else NOT_RUNNING polls on); FORBIDDEN and MANAGED end the wait
// with a *JobStatusError. At a 1 s interval a job costs each sandbox one
// batch lookup a second, 60 of the 300 a minute the platform allows.
type JobPoller struct {
	client *Client
	// engine holds the waiters. Its rounds run on one clock (every
	// interval, start to start, every job in every round): a waiter's job
	// is looked at in the round after it joined.
	engine *batchPoller[Job, JobState]

	mu    sync.Mutex
	notVM map[Job]bool // answered NOT_VM: read per job from now on

	// roundDone, when set (tests), is called after every round with the
	// number of jobs it covered.
	roundDone func(jobs int)
}

// JobPoller returns the client's shared job poller.
func (c *Client) JobPoller() *JobPoller {
	c.jobPollerOnce.Do(func() {
		p := &JobPoller{client: c, notVM: map[Job]bool{}}
		p.engine = newBatchPoller(Backoff{}, compareJobs, p.round)
		p.engine.clock = Backoff{Initial: c.jobPollInterval}
		c.jobPoller = p
	})
	return c.jobPoller
}

// Wait blocks until the job completed, failed at the job level, or ctx
// ended (see WaitJob).
func (p *JobPoller) Wait(ctx context.Context, job Job) (JobState, error) {
	var state JobState
	// A round settles a job only with its end: the check takes it.
	err := p.engine.Watch(ctx, job, nil, func(s JobState) (bool, error) {
		state = s
		return true, nil
	})
	if err != nil {
		return JobState{}, err
	}
	return state, nil
}

// round looks at every waiting job once (jobs sorted by compareJobs).
func (p *JobPoller) round(ctx context.Context, jobs []Job, settle func(Job, JobState, error)) {
	c := p.client
	var batch, reads []Job
	p.mu.Lock()
	for _, job := range jobs {
		if !p.notVM[job] && !c.jobBatchUnsupported.Load() {
			batch = append(batch, job)
		} else {
			reads = append(reads, job)
		}
	}
	p.mu.Unlock()
	checks := &sandboxChecks{client: c, ctx: ctx, seen: map[string]*sandboxCheck{}}

	var mu sync.Mutex
	inChunks(batch, MaxBatchJobs, func(chunk []Job) {
		fallback := p.batchChunk(ctx, chunk, settle, checks)
		mu.Lock()
		reads = append(reads, fallback...)
		mu.Unlock()
	})

	slices.SortFunc(reads, compareJobs)
	var wg sync.WaitGroup
	sem := make(chan struct{}, jobReadConcurrency)
	for _, job := range reads {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			p.readOne(ctx, job, settle, checks)
		})
	}
	wg.Wait()
	if p.roundDone != nil {
		p.roundDone(len(jobs))
	}
}

// batchChunk asks the batch endpoint about up to 100 jobs and settles
// what it can; it returns the jobs to read one by one this round (NOT_VM,
// or the endpoint unavailable).
func (p *JobPoller) batchChunk(ctx context.Context, chunk []Job, settle func(Job, JobState, error), checks *sandboxChecks) []Job {
	c := p.client
	resp, err := c.BatchJobStatus(ctx, chunk)
	if errors.Is(err, ErrJobBatchUnsupported) {
		return chunk
	}
	if err != nil {
		// Transient (the client retried already): the next round asks
		// again. A failed poll never ends a wait.
		c.debug(ctx, "Prime job poll: background-jobs status:batchGet failed; polling goes on", map[string]any{
			"jobs": len(chunk), "error": err.Error(),
		})
		return nil
	}
	statuses := make(map[Job]BackgroundJobStatus, len(resp.Statuses))
	for _, s := range resp.Statuses {
		statuses[Job{SandboxID: s.SandboxID, ID: s.JobID}] = s
	}
	errs := make(map[Job]BackgroundJobStatusError, len(resp.Errors))
	for _, e := range resp.Errors {
		errs[Job{SandboxID: e.SandboxID, ID: e.JobID}] = e
	}
	var fallback []Job
	for _, job := range chunk {
		if e, ok := errs[job]; ok {
			switch e.Code {
			case BatchCodeNotVM:
				p.mu.Lock()
				p.notVM[job] = true
				p.mu.Unlock()
				fallback = append(fallback, job)
			case BatchCodeRuntimeError:
				// The platform could not read the exit file this time: a
				// failed lookup, not the job's end. This round reads it
				// directly (which also tells a sandbox that ended).
				c.debug(ctx, "Prime job poll: RUNTIME_ERROR from the batch; reading the exit file instead", map[string]any{
					"sandbox_id": job.SandboxID, "job_id": job.ID, "message": e.Message,
				})
				fallback = append(fallback, job)
			default:
				p.batchError(ctx, job, settle, e, checks)
			}
			continue
		}
		s, ok := statuses[job]
		switch {
		case !ok:
			// Silence must not read as progress: an error for this job.
			settle(job, JobState{}, fmt.Errorf("waiting for %s: %w", job,
				&JobStatusError{SandboxID: job.SandboxID, JobID: job.ID, Message: "the job is missing from the status:batchGet answer"}))
		case !s.Completed:
		case s.ExitCode == nil:
			settle(job, JobState{}, fmt.Errorf("waiting for %s: %w", job,
				&JobStatusError{SandboxID: job.SandboxID, JobID: job.ID, Message: "completed without an exit_code"}))
		default:
			settle(job, JobState{Completed: true, ExitCode: *s.ExitCode}, nil)
		}
	}
	return fallback
}

// batchError settles a per-job error of the batch endpoint (NOT_VM and
// RUNTIME_ERROR are batchChunk's: the job is read directly). NOT_RUNNING
// and NOT_FOUND are about the sandbox: its error context says whether the
// platform ended it mid-job (a timeout, an OOM kill, a cancellation, a
// delete), and the wait then fails with that reason. [I: NOT_RUNNING for a
// sandbox the control plane still calls RUNNING, PAUSED or starting is
// read as a passing state and polled again; NOT_FOUND for a running
// sandbox, FORBIDDEN and MANAGED are the job's own error.]
func (p *JobPoller) batchError(ctx context.Context, job Job, settle func(Job, JobState, error), e BackgroundJobStatusError, checks *sandboxChecks) {
	jobErr := &JobStatusError{SandboxID: job.SandboxID, JobID: job.ID, Code: e.Code, Message: e.Message}
	if e.Code == BatchCodeNotRunning || e.Code == BatchCodeNotFound {
		ended, status, err := checks.ended(job.SandboxID)
		switch {
		case err != nil:
			p.client.debug(ctx, "Prime job poll: the sandbox's status could not be read; polling goes on", map[string]any{
				"sandbox_id": job.SandboxID, "job_id": job.ID, "code": e.Code, "error": err.Error(),
			})
			return
		case ended != nil:
			settle(job, JobState{}, terminatedMidJob(job, ended))
			return
		case e.Code == BatchCodeNotRunning:
			p.client.debug(ctx, "Prime job poll: the sandbox is not running but not ended; polling goes on", map[string]any{
				"sandbox_id": job.SandboxID, "job_id": job.ID, "status": status, "message": e.Message,
			})
			return
		}
	}
	settle(job, JobState{}, fmt.Errorf("waiting for %s: %w", job, jobErr))
}

// readOne reads a job's exit file: 404, empty or not an integer is "not
// yet", as in the SDK's get_background_job.
func (p *JobPoller) readOne(ctx context.Context, job Job, settle func(Job, JobState, error), checks *sandboxChecks) {
	c := p.client
	code, exited, err := c.readExitCode(ctx, job)
	if err == nil {
		if exited {
			settle(job, JobState{Completed: true, ExitCode: code}, nil)
		}
		return
	}
	if errors.Is(err, ErrSandboxNotRunning) {
		if ended, _, cerr := checks.ended(job.SandboxID); cerr == nil && ended != nil {
			settle(job, JobState{}, terminatedMidJob(job, ended))
			return
		}
	}
	c.debug(ctx, "Prime job poll: reading the exit file failed; polling goes on", map[string]any{
		"sandbox_id": job.SandboxID, "job_id": job.ID, "error": err.Error(),
	})
}

// terminatedMidJob is the error of a job whose sandbox the platform ended
// while the job ran: not a lost poll, an outcome.
func terminatedMidJob(job Job, f *SandboxFailedError) error {
	return fmt.Errorf("waiting for %s: the platform terminated the sandbox mid-job: %w: %w", job, ErrSandboxNotRunning, f)
}

func sandboxVanished(id string) *SandboxFailedError {
	return &SandboxFailedError{SandboxID: id, Status: StatusTerminated, ErrorType: "SANDBOX_NOT_FOUND",
		ErrorMessage: "the platform no longer knows the sandbox"}
}

// sandboxChecks asks error-context at most once per sandbox and round.
type sandboxChecks struct {
	client *Client
	ctx    context.Context
	mu     sync.Mutex
	seen   map[string]*sandboxCheck
}

type sandboxCheck struct {
	once   sync.Once
	ended  *SandboxFailedError
	status string
	err    error
}

// ended reports the sandbox's end (nil while it has not ended) and its
// status, or the error that kept the platform from telling.
func (s *sandboxChecks) ended(id string) (*SandboxFailedError, string, error) {
	s.mu.Lock()
	chk := s.seen[id]
	if chk == nil {
		chk = &sandboxCheck{}
		s.seen[id] = chk
	}
	s.mu.Unlock()
	chk.once.Do(func() {
		ec, err := s.client.GetSandboxErrorContext(s.ctx, id)
		switch {
		case errors.Is(err, ErrNotFound):
			chk.ended = sandboxVanished(id)
		case err != nil:
			chk.err = err
		case IsTerminalStatus(ec.Status):
			chk.ended = &SandboxFailedError{SandboxID: id, Status: ec.Status, ErrorType: deref(ec.ErrorType),
				ErrorMessage: deref(ec.ErrorMessage), ControlPlaneStatus: ec.Status}
		}
		if ec != nil {
			chk.status = ec.Status
		}
	})
	return chk.ended, chk.status, chk.err
}

// compareJobs orders jobs by sandbox, then id: a chunk holds a sandbox's
// jobs together.
func compareJobs(a, b Job) int {
	return cmp.Or(strings.Compare(a.SandboxID, b.SandboxID), strings.Compare(a.ID, b.ID))
}
