package primemock

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// Event types.
const (
	EventSandboxCreated      = "sandbox_created"
	EventSandboxProvisioning = "sandbox_provisioning"
	EventSandboxRunning      = "sandbox_running"
	EventSandboxError        = "sandbox_error"
	EventSandboxDeleted      = "sandbox_deleted"
	// EventRunningObserved is the first status answer (GET or
	// status:batchGet) that told a client a sandbox was RUNNING;
	// running→observed is how long the client's status rounds took to
	// notice.
	EventRunningObserved = "running_observed"
	// EventSandboxStopped is a sandbox stopped because its start process
	// exited (ExitCode).
	EventSandboxStopped = "sandbox_stopped"
	// EventPolicyPut is an accepted PUT (Generation, Policy).
	EventPolicyPut = "policy_put"
	// EventPolicyApplied is the data plane enforcing Generation.
	EventPolicyApplied = "policy_applied"
	// EventPolicyObserved is the first egress-policy answer that told a
	// client Generation was applied; applied→observed is how long the
	// client took to notice.
	EventPolicyObserved = "policy_observed"
	// EventCommandExecuted is the end of one execution on either gateway
	// transport (Command, Transport, PID for Connect, ExitCode (-1 when it
	// did not finish: timed out on REST, or its sandbox went away),
	// AppliedGeneration when it started, TimedOut, Signalled and Signal).
	// TimedOut on Connect means the stream's deadline passed before the end
	// (the process kept running).
	EventCommandExecuted = "command_executed"
	// EventCommandStarted is an execution starting (Command, Transport, PID
	// for Connect, AppliedGeneration).
	EventCommandStarted = "command_started"
	// EventCommandSignalled is an accepted SendSignal (PID, Signal
	// "SIGTERM" or "SIGKILL", Command).
	EventCommandSignalled = "command_signalled"
	// EventFileUploaded is a gateway upload that wrote a file (Path, Size),
	// also when an injected 503 then replaced its answer.
	EventFileUploaded = "file_uploaded"
	// EventFileDownloaded is a gateway download (Path, Size).
	EventFileDownloaded = "file_downloaded"
	// EventFileRead is a gateway read-file (Path, Size: the bytes answered).
	EventFileRead = "file_read"
	// EventGatewayReady is the gateway learning of a RUNNING sandbox, after
	// the gateway lag; until then both transports answer as if it did not
	// exist.
	EventGatewayReady = "gateway_ready"
	// EventAPIRequest is an /api/v1 request the rate limits counted (with
	// Options.RequestEvents): Route (its pattern, "DELETE /api/v1/sandbox"),
	// SandboxID (the path's sandbox, if any) and Size (the sandbox IDs a
	// batch body names). Windows of them show how close a client came to a
	// published limit.
	EventAPIRequest = "api_request"
)

// Event is one entry of the mock's ordered log. Only the fields relevant to
// the Type are meaningful (and encoded).
type Event struct {
	Seq               int64               `json:"seq"`
	Time              time.Time           `json:"time"`
	Type              string              `json:"type"`
	SandboxID         string              `json:"sandbox_id"`
	Status            string              `json:"status"`
	ErrorType         string              `json:"error_type"`
	Generation        int64               `json:"generation"`
	Policy            *prime.EgressPolicy `json:"policy"`
	Command           string              `json:"command"`
	ExitCode          int                 `json:"exit_code"`
	AppliedGeneration int64               `json:"applied_generation"`
	TimedOut          bool                `json:"timed_out"`
	Transport         string              `json:"transport"`
	PID               uint32              `json:"pid"`
	Signalled         bool                `json:"signalled"`
	Signal            string              `json:"signal"`
	Path              string              `json:"path"`
	Size              int64               `json:"size"`
	// The resource events' fields (resources.go).
	CheckpointID string   `json:"checkpoint_id"`
	State        string   `json:"state"`
	NetworkID    string   `json:"network_id"`
	Peer         string   `json:"peer"`
	Port         int      `json:"port"`
	Allowed      bool     `json:"allowed"`
	Volume       string   `json:"volume"`
	ReadOnly     bool     `json:"read_only"`
	Tags         []string `json:"tags"`
	Image        string   `json:"image"`
	BuildID      string   `json:"build_id"`
	SessionID    string   `json:"session_id"`
	Message      string   `json:"message"`
	Memory       bool     `json:"memory"`
	// Route is an api_request's route pattern.
	Route string `json:"route"`
}

// MarshalJSON writes the common keys and those of the event's type, so a
// generation 0 or an exit code 0 is present where it means something and
// absent where it does not. Time is RFC 3339 with nanoseconds.
func (e Event) MarshalJSON() ([]byte, error) {
	type wire struct {
		Seq               int64               `json:"seq"`
		Time              string              `json:"time"`
		Type              string              `json:"type"`
		SandboxID         string              `json:"sandbox_id,omitempty"`
		Status            string              `json:"status,omitempty"`
		ErrorType         string              `json:"error_type,omitempty"`
		Generation        *int64              `json:"generation,omitempty"`
		Policy            *prime.EgressPolicy `json:"policy,omitempty"`
		Command           *string             `json:"command,omitempty"`
		ExitCode          *int                `json:"exit_code,omitempty"`
		AppliedGeneration *int64              `json:"applied_generation,omitempty"`
		TimedOut          *bool               `json:"timed_out,omitempty"`
		Transport         string              `json:"transport,omitempty"`
		PID               uint32              `json:"pid,omitempty"`
		Signalled         *bool               `json:"signalled,omitempty"`
		Signal            string              `json:"signal,omitempty"`
		Path              string              `json:"path,omitempty"`
		Size              *int64              `json:"size,omitempty"`
		Route             string              `json:"route,omitempty"`
	}
	w := wire{Seq: e.Seq, Time: e.Time.Format(time.RFC3339Nano), Type: e.Type, SandboxID: e.SandboxID}
	switch e.Type {
	case EventSandboxCreated, EventSandboxProvisioning, EventSandboxRunning, EventSandboxDeleted, EventGatewayReady, EventRunningObserved:
		w.Status, w.Policy = e.Status, e.Policy
	case EventSandboxError, EventSandboxEnded:
		w.Status, w.ErrorType = e.Status, e.ErrorType
	case EventPolicyPut:
		w.Generation, w.Policy = &e.Generation, e.Policy
	case EventPolicyApplied, EventPolicyObserved:
		w.Generation = &e.Generation
	case EventCommandExecuted:
		w.Command, w.ExitCode, w.AppliedGeneration, w.TimedOut = &e.Command, &e.ExitCode, &e.AppliedGeneration, &e.TimedOut
		w.Transport, w.PID, w.Signalled, w.Signal = e.Transport, e.PID, &e.Signalled, e.Signal
	case EventCommandStarted:
		w.Command, w.AppliedGeneration, w.Transport, w.PID = &e.Command, &e.AppliedGeneration, e.Transport, e.PID
	case EventCommandSignalled:
		w.Command, w.Transport, w.PID, w.Signal = &e.Command, e.Transport, e.PID, e.Signal
	case EventFileUploaded, EventFileDownloaded, EventFileRead:
		w.Path, w.Size = e.Path, &e.Size
	case EventAPIRequest:
		w.Route, w.Size = e.Route, &e.Size
	}
	return e.withResourceKeys(json.Marshal(w))
}

// Stats are the mock's counters (GET /_mock/stats).
type Stats struct {
	// Requests counts requests per route template, e.g.
	// "GET /api/v1/sandbox/{id}" (injected faults and 401s included).
	Requests map[string]int `json:"requests"`
	// SandboxesCreated excludes idempotent replays.
	SandboxesCreated  int `json:"sandboxes_created"`
	IdempotentReplays int `json:"idempotent_replays"`
	// LiveSandboxes are the non-terminal ones.
	LiveSandboxes int `json:"live_sandboxes"`
	// PeakInFlight is the most /api/v1 requests served at once.
	PeakInFlight int `json:"peak_in_flight"`
	Injected503  int `json:"injected_503"`
	Injected429  int `json:"injected_429"`
	// InjectedGateway503 counts the 503s of upload_fail_rate and
	// download_fail_rate.
	InjectedGateway503 int `json:"injected_gateway_503"`
	// OutageRefusals counts gateway requests (and job batch requests)
	// refused during a gateway_outage.
	OutageRefusals int `json:"outage_refusals"`
	// FileBlobs and FileBlobBytes are the distinct file contents every
	// sandbox's files share, and their total size.
	FileBlobs     int   `json:"file_blobs"`
	FileBlobBytes int64 `json:"file_blob_bytes"`
	// RatePeaks maps each published rate limit ("egress GET", "status
	// batchGet", "create", ...) to the most requests one sandbox (or, for
	// create, list and delete, one API key) made in any 60-second window:
	// how close a client came to the limit, measured whether or not
	// RateLimits enforces it.
	RatePeaks map[string]int `json:"rate_peaks"`
	// RateLimited429 counts the 429s RateLimits answered.
	RateLimited429 int `json:"rate_limited_429"`
}

// emit appends an event (under the lock) and wakes waiters.
func (s *Server) emit(e Event) {
	s.seq++
	e.Seq = s.seq
	e.Time = s.now()
	s.events = append(s.events, e)
	s.wakeEventWaiters()
}

func (s *Server) wakeEventWaiters() {
	if s.eventsWake != nil {
		close(s.eventsWake)
	}
	s.eventsWake = make(chan struct{})
}

// Events returns a copy of the event log, oldest first.
func (s *Server) Events() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.events)
}

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Requests = maps.Clone(s.stats.Requests)
	st.RatePeaks = maps.Clone(s.rates.peaks)
	st.FileBlobs, st.FileBlobBytes = s.blobs.Usage()
	for _, sb := range s.sandboxes {
		if !isTerminal(sb.status) {
			st.LiveSandboxes++
		}
	}
	return st
}

// WaitForEvent returns the first event, past or future, for which match is
// true, or the context's cause. It lets tests synchronise without sleeping.
func (s *Server) WaitForEvent(ctx context.Context, match func(Event) bool) (Event, error) {
	next, epoch := 0, -1
	for {
		s.mu.Lock()
		if epoch != s.epoch { // first pass, or a Reset emptied the log
			next, epoch = 0, s.epoch
		}
		for ; next < len(s.events); next++ {
			if e := s.events[next]; match(e) {
				s.mu.Unlock()
				return e, nil
			}
		}
		wake := s.eventsWake
		s.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return Event{}, context.Cause(ctx)
		}
	}
}

func (s *Server) handleStats(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.Stats())
}

// handleEvents serves the log; since is a sequence number (events after it)
// or an RFC 3339 time (events at or after it).
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	id := q.Get("sandbox_id")
	var afterSeq int64 = -1
	var from time.Time
	if v := q.Get("since"); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			afterSeq = n
		} else if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			from = t
		} else {
			writeJSON(w, http.StatusUnprocessableEntity, detail("since must be a sequence number or an RFC 3339 time"))
			return
		}
	}
	out := []Event{}
	for _, e := range s.Events() {
		if (id == "" || e.SandboxID == id) && e.Seq > afterSeq && !e.Time.Before(from) {
			out = append(out, e)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"events": out})
}

func (s *Server) handleReset(w http.ResponseWriter, _ *http.Request) {
	s.Reset()
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "message": "mock state reset"})
}

// Reachable reports whether sandbox id can reach host under its applied
// policy; found is false for an unknown id.
func (s *Server) Reachable(id, host string) (reachable, found bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb := s.sandboxes[id]
	if sb == nil {
		return false, false
	}
	return s.reachable(sb, host), true
}

func (s *Server) handleReachable(w http.ResponseWriter, r *http.Request) {
	host := strings.TrimSpace(r.URL.Query().Get("host"))
	if host == "" {
		writeJSON(w, http.StatusUnprocessableEntity, detail("the host query parameter is required"))
		return
	}
	s.mu.Lock()
	sb := s.sandboxes[r.PathValue("id")]
	if sb == nil {
		s.mu.Unlock()
		writeJSON(w, http.StatusNotFound, detail("Sandbox not found"))
		return
	}
	out := map[string]any{
		"sandbox_id": sb.id, "host": host, "reachable": s.reachable(sb, host),
		"status": sb.status, "applied_generation": sb.appliedGen,
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleConfig(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		var p ConfigPatch
		if err := decodeBody(r, &p); err != nil {
			writeJSON(w, http.StatusUnprocessableEntity, detail(err.Error()))
			return
		}
		var applyErr error
		s.Configure(func(o *Options) {
			next := *o
			if applyErr = p.apply(&next, time.Now()); applyErr == nil {
				*o = next
			}
		})
		if applyErr != nil {
			writeJSON(w, http.StatusUnprocessableEntity, detail(applyErr.Error()))
			return
		}
	}
	writeJSON(w, http.StatusOK, patchOf(s.Options(), time.Now()))
}
