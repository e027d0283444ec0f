package primemock

// The platform's published rate limits, counted per sandbox (or per API
// key for creates, lists and deletes) in a sliding 60-second window of the
// mock clock. The mock always measures them (Stats.RatePeaks: the most
// requests one sandbox made in any window) and, unless Options.NoRateLimits,
// enforces them with 429s.

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
	// perID: a per-caller limit a batch counts once for each id it names.
	perID bool
}

// The limits [OA: the current API reference's per-operation rate limits,
// "per IP and token" or "per token per sandbox"]. [I: rate-scope] The mock
// counts per API key (every client of a test shares one IP) and does not
// enforce the per-IP ceilings (30,000 requests per 60 s).
var (
	rateLookups = rateClass{name: "sandbox lookups", limit: 30000, perID: true}
	rateSSH     = rateClass{name: "ssh session", limit: 20, perSandbox: true}
)

// rateClasses maps route patterns to their limits. The SSH create and close
// share one window per sandbox [I: ssh-window], as their pages state one
// limit. The bulk delete's limit is the older reference's [OLD: 50 per
// 60 s]; the current page shows none.
var rateClasses = map[string][]rateClass{
	"POST " + apiPrefix + "/sandbox":                                 {{name: "create", limit: 15000}},
	"GET " + apiPrefix + "/sandbox":                                  {{name: "list", limit: 1000}},
	"DELETE " + apiPrefix + "/sandbox":                               {{name: "bulk delete", limit: 50}},
	"DELETE " + apiPrefix + "/sandbox/{id}":                          {{name: "delete", limit: 500}},
	"GET " + apiPrefix + "/sandbox/{id}":                             {{name: "sandbox GET", limit: 300, perSandbox: true}, rateLookups},
	"GET " + apiPrefix + "/sandbox/{id}/logs":                        {{name: "logs", limit: 300, perSandbox: true}},
	"GET " + apiPrefix + "/sandbox/{id}/error-context":               {{name: "error-context", limit: 600, perSandbox: true}},
	"POST " + apiPrefix + "/sandbox/{id}/auth":                       {{name: "gateway auth", limit: 120, perSandbox: true}},
	"GET " + apiPrefix + "/sandbox/{id}/egress-policy":               {{name: "egress GET", limit: 300, perSandbox: true}},
	"PUT " + apiPrefix + "/sandbox/{id}/egress-policy":               {{name: "egress PUT", limit: 120, perSandbox: true}},
	"POST " + apiPrefix + "/sandbox/{id}/pause":                      {{name: "pause/resume", limit: 60, perSandbox: true}},
	"POST " + apiPrefix + "/sandbox/{id}/resume":                     {{name: "pause/resume", limit: 60, perSandbox: true}},
	"POST " + apiPrefix + "/sandbox/{id}/ssh-session":                {rateSSH},
	"DELETE " + apiPrefix + "/sandbox/{id}/ssh-session/{session_id}": {rateSSH},
	"POST " + apiPrefix + "/sandbox/status:batchGet": {{name: "status batchGet", limit: 300, perSandbox: true, batch: true},
		rateLookups},
	jobBatchRoute:                  {{name: "job status batchGet", limit: 300, perSandbox: true, batch: true}},
	"GET " + apiPrefix + "/images": {{name: "images list", limit: 300}},
	"POST " + apiPrefix + "/images/{image_name}/{image_tag}/vm-build": {{name: "vm-build", limit: 50}},
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

// rateCheck counts a request of route pattern against its limits and,
// unless NoRateLimits, refuses it when one of its windows is full: it then
// returns the Retry-After in whole seconds ([I: rate-429] the platform's
// 429 shape: the contract documents no rate-limit headers) and the request
// counts nowhere.
func (s *Server) rateCheck(pattern string, r *http.Request, caller string) (retryAfter int, limited bool) {
	classes := rateClasses[pattern]
	if len(classes) == 0 {
		return 0, false
	}
	var batchIDs []string
	for _, c := range classes {
		if c.batch || c.perID {
			batchIDs = batchSandboxes(r)
			break
		}
	}
	// keys: each window this request counts in, with its class.
	type count struct {
		class rateClass
		key   string
		n     int
	}
	var counts []count
	for _, c := range classes {
		switch {
		case c.batch:
			for _, id := range batchIDs {
				counts = append(counts, count{c, c.name + "\x00" + id, 1})
			}
		case c.perSandbox:
			counts = append(counts, count{c, c.name + "\x00" + r.PathValue("id"), 1})
		case c.perID && len(batchIDs) > 0:
			counts = append(counts, count{c, c.name + "\x00key:" + caller, len(batchIDs)})
		default:
			counts = append(counts, count{c, c.name + "\x00key:" + caller, 1})
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// The windows are 60 s of the mock clock: at a ClockRate of 60 one
	// lasts a real second, and Retry-After is real seconds.
	now := s.now().UnixNano()
	var wait int64
	for _, c := range counts {
		limit := c.class.limit
		if s.opts.RateLimitScale > 0 {
			limit = max(1, int(math.Floor(float64(limit)*s.opts.RateLimitScale)))
		}
		w := s.rates.windows[c.key]
		for len(w) > 0 && w[0] <= now-int64(rateWindow) {
			w = w[1:]
		}
		s.rates.windows[c.key] = w
		switch over := len(w) + c.n - limit; {
		case over > len(w): // more at once than the window ever holds
			wait = max(wait, int64(rateWindow))
		case over > 0: // room once the over oldest have left the window
			wait = max(wait, w[over-1]+int64(rateWindow)-now)
		}
	}
	if !s.opts.NoRateLimits && wait > 0 {
		s.stats.RateLimited429++
		wall := int64(s.clk.realWait(time.Duration(wait)))
		return max(1, int((wall+int64(time.Second)-1)/int64(time.Second))), true
	}
	for _, c := range counts {
		for range c.n {
			s.rates.windows[c.key] = append(s.rates.windows[c.key], now)
		}
		if n := len(s.rates.windows[c.key]); n > s.rates.peaks[c.class.name] {
			s.rates.peaks[c.class.name] = n
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
