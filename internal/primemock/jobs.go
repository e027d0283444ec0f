package primemock

// The platform's batch status of background jobs, for VM sandboxes: it
// reads each job's canonical exit file, /tmp/job_<id>.exit, as the SDK's
// start_background_job writes it.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// jobBatchRoute is the route template (and stats key).
const jobBatchRoute = "POST " + apiPrefix + "/sandbox/background-jobs/status:batchGet"

// maxJobBatch is the SDK's bound on one batch (MAX_STATUS_BATCH_SIZE).
const maxJobBatch = 100

// jobIDPattern is the SDK's check of a job id (uuid4().hex[:8]).
var jobIDPattern = regexp.MustCompile(`^[0-9A-Fa-f]{8}$`)

// Per-job error codes of the batch (the SDK's
// BackgroundJobStatusLookupError; the mock never produces MANAGED or
// RUNTIME_ERROR, nor NOT_VM: every sandbox is a VM).
const (
	JobCodeNotFound   = "NOT_FOUND"
	JobCodeForbidden  = "FORBIDDEN"
	JobCodeNotRunning = "NOT_RUNNING"
)

type jobRef struct {
	SandboxID *string `json:"sandbox_id"`
	JobID     *string `json:"job_id"`
}

// jobStatus is the SDK's BackgroundJobStatusSnapshot; exit_code is absent
// until the job completed.
type jobStatus struct {
	SandboxID string `json:"sandbox_id"`
	JobID     string `json:"job_id"`
	Completed bool   `json:"completed"`
	ExitCode  *int   `json:"exit_code,omitempty"`
}

type jobStatusError struct {
	SandboxID string `json:"sandbox_id"`
	JobID     string `json:"job_id"`
	Code      string `json:"code"`
	Message   string `json:"message"`
}

type jobBatchResponse struct {
	Statuses []jobStatus      `json:"statuses"`
	Errors   []jobStatusError `json:"errors"`
}

// jobExitFile is where start_background_job's wrapper records the status.
func jobExitFile(jobID string) string { return "/tmp/job_" + jobID + ".exit" }

// handleJobBatch answers every requested job in exactly one of statuses
// and errors. [I: job-batch-422] Requests the SDK's client would refuse (not 1 to 100
// entries, a job id that is not 8 hex digits, repeats) are 422 {"detail"};
// the messages of the per-job errors are the mock's.
func (s *Server) handleJobBatch(r *http.Request, caller string) reply {
	s.mu.Lock()
	unsupported := s.opts.JobBatchUnsupported
	s.mu.Unlock()
	if unsupported {
		// A platform without the endpoint: the SDK falls back to per-job
		// reads and stops trying it.
		return errorReply(http.StatusNotFound, "Not Found")
	}
	raw, err := readBody(r)
	if err != nil {
		return errorReply(http.StatusUnprocessableEntity, "%v", err)
	}
	var req struct {
		Jobs *[]jobRef `json:"jobs"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		return errorReply(http.StatusUnprocessableEntity, "invalid JSON body: %v", err)
	}
	if req.Jobs == nil {
		return errorReply(http.StatusUnprocessableEntity, "jobs is required")
	}
	jobs := *req.Jobs
	if len(jobs) < 1 || len(jobs) > maxJobBatch {
		return errorReply(http.StatusUnprocessableEntity, "jobs must contain between 1 and %d entries", maxJobBatch)
	}
	type key struct{ sandbox, job string }
	seen := map[key]bool{}
	for i, j := range jobs {
		switch {
		case j.SandboxID == nil || *j.SandboxID == "":
			return errorReply(http.StatusUnprocessableEntity, "jobs[%d].sandbox_id is required", i)
		case j.JobID == nil:
			return errorReply(http.StatusUnprocessableEntity, "jobs[%d].job_id is required", i)
		case !jobIDPattern.MatchString(*j.JobID):
			return errorReply(http.StatusUnprocessableEntity, "Invalid background job ID: %s", *j.JobID)
		}
		k := key{*j.SandboxID, *j.JobID}
		if seen[k] {
			return errorReply(http.StatusUnprocessableEntity, "jobs must be unique")
		}
		seen[k] = true
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	out := jobBatchResponse{Statuses: []jobStatus{}, Errors: []jobStatusError{}}
	for _, j := range jobs {
		id, job := *j.SandboxID, *j.JobID
		fail := func(code, format string, args ...any) {
			out.Errors = append(out.Errors, jobStatusError{SandboxID: id, JobID: job, Code: code, Message: fmt.Sprintf(format, args...)})
		}
		sb := s.sandboxes[id]
		switch {
		case sb == nil:
			fail(JobCodeNotFound, "Sandbox not found")
		case !s.mayAct(caller, sb):
			fail(JobCodeForbidden, "Sandbox %s belongs to another user", id)
		case sb.status != prime.StatusRunning:
			fail(JobCodeNotRunning, "Sandbox %s is not running (status %s)", id, sb.status)
		default:
			out.Statuses = append(out.Statuses, readJobStatus(sb, id, job))
		}
	}
	return ok(out)
}

// readJobStatus reads the exit file: missing, empty or not an integer is a
// job still running; an integer is its exit code.
func readJobStatus(sb *sandbox, id, job string) jobStatus {
	st := jobStatus{SandboxID: id, JobID: job}
	data, err := sb.m.FS().ReadFile(jobExitFile(job))
	if err != nil {
		return st
	}
	code, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return st
	}
	st.Completed, st.ExitCode = true, &code
	return st
}
