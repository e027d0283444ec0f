package primemock

// The platform's published rate limits, counted per sandbox (or per API
// key for creates, lists and deletes) in a sliding 60-second window. The
// mock always measures them (Stats.RatePeaks: the most requests one
// sandbox made in any window); with Options.RateLimits it also enforces
// them with 429s.

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strings"
	"time"
)

// rateWindow is the published limits' window.
const rateWindow = 60 * time.Second

// rateClass is one published limit: requests per rateWindow, counted per
// sandbox (the path's {id}, or each id a batch body names) or per caller.
type rateClass struct {
	name       string
	limit      int
	perSandbox bool
	// batch: the sandboxes are the body's (sandbox_ids, or jobs[].sandbox_id).
	batch bool
}

// rateClasses maps route patterns to their published limit [OA: the
// current API reference's per-operation rate limits].
var rateClasses = map[string]rateClass{
	"POST " + apiPrefix + "/sandbox":                   {name: "create", limit: 15000},
	"GET " + apiPrefix + "/sandbox":                    {name: "list", limit: 1000},
	"DELETE " + apiPrefix + "/sandbox/{id}":            {name: "delete", limit: 500},
	"GET " + apiPrefix + "/sandbox/{id}":               {name: "sandbox GET", limit: 300, perSandbox: true},
	"GET " + apiPrefix + "/sandbox/{id}/logs":          {name: "logs", limit: 300, perSandbox: true},
	"GET " + apiPrefix + "/sandbox/{id}/error-context": {name: "error-context", limit: 600, perSandbox: true},
	"POST " + apiPrefix + "/sandbox/{id}/auth":         {name: "gateway auth", limit: 120, perSandbox: true},
	"GET " + apiPrefix + "/sandbox/{id}/egress-policy": {name: "egress GET", limit: 300, perSandbox: true},
	"PUT " + apiPrefix + "/sandbox/{id}/egress-policy": {name: "egress PUT", limit: 120, perSandbox: true},
	"POST " + apiPrefix + "/sandbox/{id}/pause":        {name: "pause/resume", limit: 60, perSandbox: true},
	"POST " + apiPrefix + "/sandbox/{id}/resume":       {name: "pause/resume", limit: 60, perSandbox: true},
	"POST " + apiPrefix + "/sandbox/status:batchGet":   {name: "status batchGet", limit: 300, perSandbox: true, batch: true},
	jobBatchRoute: {name: "job status batchGet", limit: 300, perSandbox: true, batch: true},
}

// rateBook is the windows of every (class, sandbox or caller).
type rateBook struct {
	windows map[string][]int64 // key → request times (unix nanos), oldest first
	peaks   map[string]int     // class name → most requests in one window
}

func newRateBook() *rateBook {
	return &rateBook{windows: map[string][]int64{}, peaks: map[string]int{}}
}

// batchSandboxes reads the sandbox ids of a batch body and restores the
// body for the handler.
func batchSandboxes(r *http.Request) []string {
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	r.Body = io.NopCloser(bytes.NewReader(raw))
	if err != nil {
		return nil
	}
	var body struct {
		SandboxIDs []string `json:"sandbox_ids"`
		Jobs       []struct {
			SandboxID string `json:"sandbox_id"`
		} `json:"jobs"`
	}
	_ = json.Unmarshal(raw, &body)
	ids := body.SandboxIDs
	seen := map[string]bool{}
	for _, j := range body.Jobs {
		if !seen[j.SandboxID] {
			seen[j.SandboxID] = true
			ids = append(ids, j.SandboxID)
		}
	}
	return ids
}

// rateCheck counts a request of route pattern against its limits and, with
// RateLimits on, refuses it when one of its windows is full: it then
// returns the Retry-After in whole seconds ([guess] the platform's 429
// shape: the contract documents no rate-limit headers) and the request
// counts nowhere.
func (s *Server) rateCheck(pattern string, r *http.Request, caller string) (retryAfter int, limited bool) {
	class, found := rateClasses[pattern]
	if !found {
		return 0, false
	}
	var keys []string
	switch {
	case class.batch:
		for _, id := range batchSandboxes(r) {
			keys = append(keys, class.name+"\x00"+id)
		}
	case class.perSandbox:
		keys = []string{class.name + "\x00" + r.PathValue("id")}
	default:
		keys = []string{class.name + "\x00key:" + caller}
	}
	now := time.Now().UnixNano()
	s.mu.Lock()
	defer s.mu.Unlock()
	limit := class.limit
	if s.opts.RateLimitScale > 0 {
		limit = max(1, int(math.Floor(float64(limit)*s.opts.RateLimitScale)))
	}
	var wait int64
	for _, k := range keys {
		w := s.rates.windows[k]
		for len(w) > 0 && w[0] <= now-int64(rateWindow) {
			w = w[1:]
		}
		s.rates.windows[k] = w
		if len(w) >= limit {
			wait = max(wait, w[len(w)-limit]+int64(rateWindow)-now)
		}
	}
	if s.opts.RateLimits && wait > 0 {
		s.stats.RateLimited429++
		return max(1, int((wait+int64(time.Second)-1)/int64(time.Second))), true
	}
	for _, k := range keys {
		s.rates.windows[k] = append(s.rates.windows[k], now)
		if n := len(s.rates.windows[k]); n > s.rates.peaks[class.name] {
			s.rates.peaks[class.name] = n
		}
	}
	return 0, false
}

// requestEvent logs a counted request (Options.RequestEvents).
func (s *Server) requestEvent(pattern string, r *http.Request) {
	s.mu.Lock()
	on := s.opts.RequestEvents
	s.mu.Unlock()
	if !on {
		return
	}
	var ids int64
	if r.Method == http.MethodPost && strings.HasSuffix(pattern, ":batchGet") || pattern == "DELETE "+apiPrefix+"/sandbox" {
		ids = int64(len(batchSandboxes(r)))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.emit(Event{Type: EventAPIRequest, Route: pattern, SandboxID: r.PathValue("id"), Size: ids})
}
