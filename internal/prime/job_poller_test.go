package prime

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// jobFleet answers the background-jobs status:batchGet from a rule per
// job and its number of appearances so far (1 on the first).
type jobFleet struct {
	mu       sync.Mutex
	seen     map[Job]int
	requests [][]Job
	// answer gives a job's status or error; both nil leaves it out.
	answer func(j Job, n int) (*BackgroundJobStatus, *BackgroundJobStatusError)
	// fail, when set, answers a whole request (by its 0-based number).
	fail func(n int) (status int, ok bool)
}

func (f *jobFleet) handle(n int, req BatchJobStatusRequest) (int, any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.seen == nil {
		f.seen = map[Job]int{}
	}
	var jobs []Job
	for _, r := range req.Jobs {
		jobs = append(jobs, Job{SandboxID: r.SandboxID, ID: r.JobID})
	}
	f.requests = append(f.requests, jobs)
	if f.fail != nil {
		if st, ok := f.fail(n); ok {
			return st, map[string]any{"detail": "Internal Server Error"}
		}
	}
	resp := BatchJobStatusResponse{Statuses: []BackgroundJobStatus{}, Errors: []BackgroundJobStatusError{}}
	for _, j := range jobs {
		f.seen[j]++
		s, e := f.answer(j, f.seen[j])
		if s != nil {
			s.SandboxID, s.JobID = j.SandboxID, j.ID
			resp.Statuses = append(resp.Statuses, *s)
		}
		if e != nil {
			e.SandboxID, e.JobID = j.SandboxID, j.ID
			resp.Errors = append(resp.Errors, *e)
		}
	}
	return 200, resp
}

func exitCode(c int) *int { return &c }

// jobClient is a client on g polling jobs every 10 ms.
func jobClient(g *fakeGateway) (*Client, *logRecorder) {
	return g.client(func(o *Options) { o.JobPollInterval = 10 * time.Millisecond })
}

type jobResult struct {
	state JobState
	err   error
}

// waitAll waits for every job concurrently.
func waitAll(ctx context.Context, c *Client, jobs []Job) map[Job]jobResult {
	var mu sync.Mutex
	out := map[Job]jobResult{}
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Go(func() {
			st, err := c.WaitJob(ctx, j)
			mu.Lock()
			out[j] = jobResult{st, err}
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

func jobID(n int) string { return fmt.Sprintf("%08x", n) }

// 250 waiting VM jobs cost ⌈N/100⌉ = 3 requests a round, whatever the
// number of sandboxes they are on.
func TestJobPollerBatchesARound(t *testing.T) {
	g := newFakeGateway(t)
	var jobs []Job
	for s := range 25 {
		id := fmt.Sprintf("vm-%02d", s)
		g.add(id, &fakeSandbox{})
		for k := range 10 {
			jobs = append(jobs, Job{SandboxID: id, ID: jobID(s*10 + k)})
		}
	}
	// The jobs end once two rounds carried all of them: waiters join over
	// the first rounds, as they would in an apply.
	var released atomic.Bool
	fleet := &jobFleet{answer: func(j Job, n int) (*BackgroundJobStatus, *BackgroundJobStatusError) {
		if !released.Load() {
			return &BackgroundJobStatus{}, nil
		}
		var k int
		_, _ = fmt.Sscanf(j.ID, "%x", &k)
		return &BackgroundJobStatus{Completed: true, ExitCode: exitCode(k % 7)}, nil
	}}
	g.onJobBatch = fleet.handle
	c, _ := jobClient(g)
	type round struct{ jobs, requests int }
	var mu sync.Mutex
	var rounds []round
	last := 0
	c.JobPoller().roundDone = func(n int) {
		mu.Lock()
		defer mu.Unlock()
		now := g.count("job-batch")
		rounds = append(rounds, round{n, now - last})
		last = now
		full := 0
		for _, r := range rounds {
			if r.jobs == len(jobs) {
				full++
			}
		}
		released.Store(full >= 2)
	}
	res := waitAll(context.Background(), c, jobs)
	for _, j := range jobs {
		var k int
		_, _ = fmt.Sscanf(j.ID, "%x", &k)
		if r := res[j]; r.err != nil || r.state != (JobState{Completed: true, ExitCode: k % 7}) {
			t.Fatalf("%s: %+v", j, r)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	full := 0
	for i, r := range rounds {
		if want := (r.jobs + MaxBatchJobs - 1) / MaxBatchJobs; r.requests != want {
			t.Errorf("round %d over %d jobs sent %d requests, want %d", i, r.jobs, r.requests, want)
		}
		if r.jobs == len(jobs) {
			full++
		}
	}
	if full < 2 {
		t.Errorf("%d rounds carried all %d jobs: %+v", full, len(jobs), rounds)
	}
	for _, req := range fleet.requests {
		if len(req) > MaxBatchJobs {
			t.Errorf("a request carried %d jobs", len(req))
		}
	}
	if n := g.count("read-file"); n != 0 {
		t.Errorf("%d exit-file reads: VM jobs go through the batch", n)
	}
}

// On 404 the poller reads exit files and never asks the endpoint again.
func TestJobPollerFallsBackOn404(t *testing.T) {
	g := newFakeGateway(t)
	g.add("vm-1", &fakeSandbox{})
	jobs := []Job{{SandboxID: "vm-1", ID: jobID(1)}, {SandboxID: "vm-1", ID: jobID(2)}}
	c, _ := jobClient(g)     // onJobBatch nil: 404
	var counted atomic.Int32 // the hook runs after the last waiter is released
	joined := false
	c.JobPoller().roundDone = func(n int) {
		if joined = joined || n == 2; !joined {
			return // rounds count once both wait
		}
		rounds := counted.Add(1)
		if rounds == 3 {
			g.putFile("vm-1", jobs[0].ExitPath(), []byte("5\n"))
			g.putFile("vm-1", jobs[1].ExitPath(), []byte(""))
		}
		if rounds == 5 {
			g.putFile("vm-1", jobs[1].ExitPath(), []byte("0\n"))
		}
	}
	res := waitAll(context.Background(), c, jobs)
	rounds := int(counted.Load())
	if r := res[jobs[0]]; r.err != nil || r.state.ExitCode != 5 {
		t.Errorf("job 1: %+v", r)
	}
	if r := res[jobs[1]]; r.err != nil || r.state.ExitCode != 0 || rounds < 5 {
		t.Errorf("job 2: %+v after %d rounds; an empty exit file is not an end", r, rounds)
	}
	if n := g.count("job-batch"); n != 1 {
		t.Errorf("the batch endpoint was asked %d times, want once (then never again)", n)
	}
	// Both jobs are read in every round while they wait (a round before
	// both had joined may carry one).
	if n := g.count("read-file"); n < rounds+3 {
		t.Errorf("%d exit-file reads over %d rounds, want at least %d", n, rounds, rounds+3)
	}
}

// A per-job error fails that job only, with the platform's message;
// NOT_VM moves a job to exit-file reads.
func TestJobPollerPerJobErrors(t *testing.T) {
	g := newFakeGateway(t)
	g.add("vm-1", &fakeSandbox{})
	forbidden, ok, late, notVM, omitted, noCode := Job{"vm-1", jobID(1)}, Job{"vm-1", jobID(2)}, Job{"vm-1", jobID(3)}, Job{"vm-1", jobID(4)}, Job{"vm-1", jobID(5)}, Job{"vm-1", jobID(6)}
	g.putFile("vm-1", notVM.ExitPath(), []byte("9\n"))
	fleet := &jobFleet{answer: func(j Job, n int) (*BackgroundJobStatus, *BackgroundJobStatusError) {
		switch j {
		case forbidden:
			return nil, &BackgroundJobStatusError{Code: BatchCodeForbidden, Message: "Sandbox belongs to another team"}
		case ok:
			return &BackgroundJobStatus{Completed: true, ExitCode: exitCode(0)}, nil
		case late:
			return &BackgroundJobStatus{Completed: n >= 3, ExitCode: exitCode(2)}, nil
		case notVM:
			return nil, &BackgroundJobStatusError{Code: BatchCodeNotVM, Message: "not a VM"}
		case noCode:
			return &BackgroundJobStatus{Completed: true}, nil
		}
		return nil, nil // omitted
	}}
	g.onJobBatch = fleet.handle
	c, _ := jobClient(g)
	res := waitAll(context.Background(), c, []Job{forbidden, ok, late, notVM, omitted, noCode})

	var jse *JobStatusError
	if r := res[forbidden]; !errors.As(r.err, &jse) || jse.Code != BatchCodeForbidden || !strings.Contains(r.err.Error(), "Sandbox belongs to another team") {
		t.Errorf("forbidden: %+v", r)
	}
	if r := res[ok]; r.err != nil || r.state != (JobState{Completed: true, ExitCode: 0}) {
		t.Errorf("ok: %+v", r)
	}
	if r := res[late]; r.err != nil || r.state != (JobState{Completed: true, ExitCode: 2}) {
		t.Errorf("late: %+v", r)
	}
	if r := res[notVM]; r.err != nil || r.state.ExitCode != 9 {
		t.Errorf("NOT_VM: %+v; want its exit file read", r)
	}
	if r := res[omitted]; !errors.As(r.err, &jse) || !strings.Contains(r.err.Error(), "missing from the status:batchGet answer") {
		t.Errorf("omitted: %+v", r)
	}
	if r := res[noCode]; !errors.As(r.err, &jse) || !strings.Contains(r.err.Error(), "without an exit_code") {
		t.Errorf("no exit code: %+v", r)
	}
	fleet.mu.Lock()
	defer fleet.mu.Unlock()
	if fleet.seen[notVM] != 1 {
		t.Errorf("the NOT_VM job was batched %d times, want once", fleet.seen[notVM])
	}
}

// A sandbox the platform ended fails its jobs as terminated mid-job,
// through the batch (NOT_RUNNING) or an exit-file read (409).
func TestJobPollerSandboxTerminatedMidJob(t *testing.T) {
	g := newFakeGateway(t)
	g.add("vm-1", &fakeSandbox{})
	g.add("ct-1", &fakeSandbox{})
	vmJob, ctJob := Job{"vm-1", jobID(1)}, Job{"ct-1", jobID(2)}
	fleet := &jobFleet{answer: func(j Job, n int) (*BackgroundJobStatus, *BackgroundJobStatusError) {
		if n < 2 {
			return &BackgroundJobStatus{}, nil
		}
		return nil, &BackgroundJobStatusError{Code: BatchCodeNotRunning, Message: "Sandbox is not running"}
	}}
	g.onJobBatch = fleet.handle
	g.onFile = func(n int, _ string, w http.ResponseWriter, _ *http.Request) bool {
		if n < 2 {
			return false // 404: not yet
		}
		writeJSON(w, http.StatusConflict, map[string]any{"error": "conflict"})
		return true
	}
	c, _ := jobClient(g)
	rounds := 0
	c.JobPoller().roundDone = func(int) {
		if rounds++; rounds == 1 {
			g.setStatus("vm-1", StatusTimeout, "TIMEOUT", "Sandbox exceeded its timeout")
			g.setStatus("ct-1", StatusError, "OOM_KILLED", "Out of memory")
		}
	}
	res := waitAll(context.Background(), c, []Job{vmJob, ctJob})
	for j, want := range map[Job]SandboxFailedError{
		vmJob: {SandboxID: "vm-1", Status: StatusTimeout, ErrorType: "TIMEOUT", ErrorMessage: "Sandbox exceeded its timeout", ControlPlaneStatus: StatusTimeout},
		ctJob: {SandboxID: "ct-1", Status: StatusError, ErrorType: "OOM_KILLED", ErrorMessage: "Out of memory", ControlPlaneStatus: StatusError},
	} {
		r := res[j]
		var f *SandboxFailedError
		if !errors.Is(r.err, ErrSandboxNotRunning) || !errors.As(r.err, &f) || *f != want || !strings.Contains(r.err.Error(), "terminated the sandbox mid-job") {
			t.Errorf("%s: %v; want terminated mid-job with %+v", j, r.err, want)
		}
	}
}

// A failing batch request is not a job's end: the wait goes on.
func TestJobPollerRidesOutBatchFailures(t *testing.T) {
	g := newFakeGateway(t)
	g.add("vm-1", &fakeSandbox{})
	job := Job{"vm-1", jobID(1)}
	fleet := &jobFleet{
		answer: func(Job, int) (*BackgroundJobStatus, *BackgroundJobStatusError) {
			return &BackgroundJobStatus{Completed: true, ExitCode: exitCode(4)}, nil
		},
		fail: func(n int) (int, bool) { return http.StatusInternalServerError, n < 3 },
	}
	g.onJobBatch = fleet.handle
	c, rec := jobClient(g)
	st, err := c.WaitJob(context.Background(), job)
	if err != nil || st.ExitCode != 4 {
		t.Fatalf("state %+v, err %v", st, err)
	}
	if n := g.count("job-batch"); n != 4 {
		t.Errorf("%d batch requests, want 3 failed and 1 answered", n)
	}
	if !strings.Contains(rec.all(), "polling goes on") {
		t.Errorf("the failures were not logged:\n%s", rec.all())
	}
}

func TestJobPollerHonoursContext(t *testing.T) {
	g := newFakeGateway(t)
	g.add("vm-1", &fakeSandbox{})
	fleet := &jobFleet{answer: func(Job, int) (*BackgroundJobStatus, *BackgroundJobStatusError) {
		return &BackgroundJobStatus{}, nil
	}}
	g.onJobBatch = fleet.handle
	c, _ := jobClient(g)
	cause := errors.New("apply interrupted")
	ctx, cancel := context.WithCancelCause(context.Background())
	rounds := 0
	c.JobPoller().roundDone = func(int) {
		if rounds++; rounds == 2 {
			cancel(cause)
		}
	}
	_, err := c.WaitJob(ctx, Job{"vm-1", jobID(1)})
	if !errors.Is(err, cause) {
		t.Fatalf("err = %v, want the context's cause", err)
	}
	// The poller stops when nobody waits: a new wait starts it again.
	fleet.answer = func(Job, int) (*BackgroundJobStatus, *BackgroundJobStatusError) {
		return &BackgroundJobStatus{Completed: true, ExitCode: exitCode(1)}, nil
	}
	if st, err := c.WaitJob(context.Background(), Job{"vm-1", jobID(2)}); err != nil || st.ExitCode != 1 {
		t.Fatalf("second wait: %+v, %v", st, err)
	}
}

// Container jobs are read one by one; the batch endpoint is for VMs.
func TestBatchJobStatusValidates(t *testing.T) {
	g := newFakeGateway(t)
	c, _ := g.client(nil)
	many := make([]Job, 101)
	for i := range many {
		many[i] = Job{"vm", jobID(i)}
	}
	for name, jobs := range map[string][]Job{
		"none": nil, "too many": many, "duplicate": {{"vm", jobID(1)}, {"vm", jobID(1)}}, "bad id": {{"vm", "xyz"}},
	} {
		if _, err := c.BatchJobStatus(context.Background(), jobs); !errors.Is(err, ErrInvalidRequest) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	if n := g.count("job-batch"); n != 0 {
		t.Errorf("%d requests sent for invalid batches", n)
	}
}

// RUNTIME_ERROR is the platform failing to read a job's exit file, not the
// job's end: that round the poller reads the exit file itself, and the job
// ends with the code it recorded. (The SDK fails its waiter instead.)
func TestJobPollerReadsTheExitFileOnRuntimeError(t *testing.T) {
	g := newFakeGateway(t)
	g.add("vm-1", &fakeSandbox{})
	job := Job{"vm-1", jobID(1)}
	g.putFile("vm-1", job.ExitPath(), []byte("5\n"))
	fleet := &jobFleet{answer: func(Job, int) (*BackgroundJobStatus, *BackgroundJobStatusError) {
		return nil, &BackgroundJobStatusError{Code: BatchCodeRuntimeError, Message: "Runtime lookup failed"}
	}}
	g.onJobBatch = fleet.handle
	c, rec := jobClient(g)
	st, err := c.WaitJob(testContext(t), job)
	if err != nil || !st.Completed || st.ExitCode != 5 {
		t.Fatalf("state %+v, err %v; want exit 5 from the exit file", st, err)
	}
	if !strings.Contains(rec.all(), "RUNTIME_ERROR") {
		t.Errorf("the runtime error was not logged:\n%s", rec.all())
	}
}

// Jobs that join at different times share one round an interval: the
// poller runs on one clock, so no job is read sooner than an interval after
// its last read (each read counts against its sandbox's lookups a minute).
// Per-waiter schedules would send a round per join time, each carrying
// every job.
func TestJobPollerReadsStaggeredJobsOnOneClock(t *testing.T) {
	const interval = 200 * time.Millisecond
	g := newFakeGateway(t)
	g.add("vm-1", &fakeSandbox{})
	first, second := Job{"vm-1", jobID(1)}, Job{"vm-1", jobID(2)}
	var mu sync.Mutex
	reads := map[Job][]time.Time{}
	var released atomic.Bool
	g.onJobBatch = func(_ int, req BatchJobStatusRequest) (int, any) {
		mu.Lock()
		defer mu.Unlock()
		resp := BatchJobStatusResponse{Statuses: []BackgroundJobStatus{}, Errors: []BackgroundJobStatusError{}}
		for _, r := range req.Jobs {
			j := Job{SandboxID: r.SandboxID, ID: r.JobID}
			reads[j] = append(reads[j], time.Now())
			s := BackgroundJobStatus{SandboxID: r.SandboxID, JobID: r.JobID}
			if released.Load() {
				s.Completed, s.ExitCode = true, exitCode(0)
			}
			resp.Statuses = append(resp.Statuses, s)
		}
		// Release both once the second job has been read four times.
		released.Store(len(reads[second]) >= 4)
		return 200, resp
	}
	c, _ := g.client(func(o *Options) { o.JobPollInterval = interval })
	var joined sync.Once
	var wg sync.WaitGroup
	results := make(chan error, 2)
	c.JobPoller().roundDone = func(int) {
		// The second job joins half an interval after the first round:
		// its own schedule would fall between the first job's rounds.
		joined.Do(func() {
			wg.Add(1)
			time.AfterFunc(interval/2, func() {
				defer wg.Done()
				_, err := c.WaitJob(testContext(t), second)
				results <- err
			})
		})
	}
	_, err := c.WaitJob(testContext(t), first)
	results <- err
	wg.Wait()
	for range 2 {
		if err := <-results; err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, j := range []Job{first, second} {
		for i := 1; i < len(reads[j]); i++ {
			// Timers fire late, never early: only a second round inside
			// the interval makes a gap well under it.
			if gap := reads[j][i].Sub(reads[j][i-1]); gap < interval*3/4 {
				t.Errorf("%s read twice within %v (reads %d and %d); want one round an interval", j, gap, i, i+1)
			}
		}
	}
}

// BenchmarkJobPollerWaits: 500 jobs on 5 sandboxes wait together, each
// completing on its third read (about three rounds at a 1 ms interval).
func BenchmarkJobPollerWaits(b *testing.B) {
	g := newFakeGateway(b)
	var jobs []Job
	for s := range 5 {
		id := fmt.Sprintf("vm-%d", s)
		g.add(id, &fakeSandbox{})
		for k := range 100 {
			jobs = append(jobs, Job{SandboxID: id, ID: jobID(s*100 + k)})
		}
	}
	fleet := &jobFleet{answer: func(_ Job, n int) (*BackgroundJobStatus, *BackgroundJobStatusError) {
		return &BackgroundJobStatus{Completed: n%3 == 0, ExitCode: exitCode(0)}, nil
	}}
	g.onJobBatch = fleet.handle
	c, _ := g.client(func(o *Options) { o.JobPollInterval = time.Millisecond })
	for b.Loop() {
		for j, r := range waitAll(context.Background(), c, jobs) {
			if r.err != nil {
				b.Fatalf("%s: %v", j, r.err)
			}
		}
	}
}
