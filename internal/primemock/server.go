package primemock

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock/sandboxfs"
)

// Server is the mock. It is safe for concurrent use; one mutex guards all
// state, which keeps the model simple and is plenty for a test double.
type Server struct {
	mux *http.ServeMux

	mu     sync.Mutex
	opts   Options
	clk    clock
	rng    *rand.Rand
	closed bool

	sandboxes map[string]*sandbox
	order     []*sandbox        // creation order, for listing
	idem      map[string]string // owner + "\x00" + idempotency key → sandbox id
	tokens    map[string]gatewayToken

	// res holds checkpoints, volumes, networks, images and SSH sessions.
	res *resources

	events     []Event
	seq        int64
	epoch      int           // bumped by Reset, so event waiters rescan
	eventsWake chan struct{} // closed and replaced on every new event

	stats    Stats
	inFlight int
	rates    *rateBook

	// blobs holds every sandbox's file contents once.
	blobs *sandboxfs.Store
	// cut is closed when a gateway outage begins (and then replaced), so
	// the streams and exchanges in flight end.
	cut chan struct{}

	// sleptHook, when set (by tests), sees every request's latency.
	sleptHook func(time.Duration)
}

// New builds a mock with the given knobs.
func New(o Options) *Server {
	if o.Seed == 0 {
		o.Seed = timeSeed()
	}
	s := &Server{mux: http.NewServeMux(), opts: o, blobs: sandboxfs.NewStore(), cut: make(chan struct{})}
	s.clk = newClock(s.realNow(), o.ClockRate)
	s.rng = newRand(o.Seed)
	s.resetLocked()
	s.routes()
	return s
}

// timeSeed picks a seed when none is given; Options() then reports it, so
// a surprising run can be replayed.
func timeSeed() int64 { return time.Now().UnixNano() }

func newRand(seed int64) *rand.Rand {
	//nolint:gosec // G404: fault injection must be replayable from a seed, not secret
	return rand.New(rand.NewPCG(uint64(seed), uint64(seed)>>1^0x9e3779b97f4a7c15))
}

// apiPrefix is where the REST API lives.
const apiPrefix = "/api/v1"

func (s *Server) routes() {
	const api = apiPrefix
	for _, r := range []struct {
		pattern string
		h       apiFunc
		// gateway: an outage fails it too (it reads the sandboxes' files).
		gateway bool
	}{
		{"POST " + api + "/sandbox", s.handleCreate, false},
		{"GET " + api + "/sandbox", s.handleList, false},
		{"DELETE " + api + "/sandbox", s.handleBulkDelete, false},
		// Literal segments at the {id} depth: ServeMux prefers the more
		// specific pattern, so these win over {id}.
		{"POST " + api + "/sandbox/status:batchGet", s.handleBatchStatus, false},
		{jobBatchRoute, s.handleJobBatch, true},
		{"GET " + api + "/sandbox/{id}", s.handleGet, false},
		{"DELETE " + api + "/sandbox/{id}", s.handleDelete, false},
		{"GET " + api + "/sandbox/{id}/egress-policy", s.handleGetPolicy, false},
		{"PUT " + api + "/sandbox/{id}/egress-policy", s.handlePutPolicy, false},
		{"GET " + api + "/sandbox/{id}/logs", s.handleLogs, false},
		{"GET " + api + "/sandbox/{id}/error-context", s.handleErrorContext, false},
		{"POST " + api + "/sandbox/{id}/auth", s.handleAuth, false},
	} {
		s.mux.Handle(r.pattern, s.api(r.pattern, r.h, r.gateway))
	}
	s.resourceRoutes()
	s.mux.Handle(api+"/", s.api("other "+api+"/...", func(r *http.Request, _ string) reply {
		return errorReply(http.StatusNotFound, "Not Found")
	}, false))
	s.mux.HandleFunc(uploadRoute, s.handleUpload)
	s.mux.HandleFunc(downloadRoute, s.handleDownload)
	s.mux.HandleFunc(readFileRoute, s.handleReadFile)
	s.mux.Handle(connectRoute, s.connectHandler())
	s.mux.HandleFunc("GET /_mock/stats", s.handleStats)
	s.mux.HandleFunc("GET /_mock/events", s.handleEvents)
	s.mux.HandleFunc("POST /_mock/reset", s.handleReset)
	s.mux.HandleFunc("GET /_mock/sandbox/{id}/reachable", s.handleReachable)
	s.mux.HandleFunc("GET /_mock/sandbox/{id}/file", s.handleMockFile)
	s.mux.HandleFunc("GET /_mock/sandbox/{id}/files", s.handleMockFiles)
	s.mux.HandleFunc("POST /_mock/sandbox/{id}/terminate", s.handleMockTerminate)
	s.mux.HandleFunc("GET /_mock/clock", s.handleClock)
	s.mux.HandleFunc("POST /_mock/clock", s.handleClock)
	s.mux.HandleFunc("GET /_mock/config", s.handleConfig)
	s.mux.HandleFunc("POST /_mock/config", s.handleConfig)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, detail("Not Found"))
	})
}

// ServeHTTP serves the mock API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Close stops every timer; the mock keeps answering but nothing progresses.
func (s *Server) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for _, sb := range s.sandboxes {
		sb.stopTimers()
		stopExecutionsLocked(sb)
	}
	s.res.stopTimers()
}

// Reset forgets every sandbox, idempotency key, token, event and counter.
// Knobs are kept.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resetLocked()
}

func (s *Server) resetLocked() {
	for _, sb := range s.sandboxes {
		sb.stopTimers()
		stopExecutionsLocked(sb)
		sb.m.FS().Release()
	}
	if s.res != nil {
		s.res.release()
	}
	s.res = newResources()
	s.sandboxes = map[string]*sandbox{}
	s.order = nil
	s.idem = map[string]string{}
	s.tokens = map[string]gatewayToken{}
	s.events = nil
	s.seq = 0
	s.epoch++
	s.stats = Stats{Requests: map[string]int{}}
	s.rates = newRateBook()
	s.inFlight = 0
	s.wakeEventWaiters()
}

// Options returns the current knobs (zero durations are not resolved to
// their defaults).
func (s *Server) Options() Options {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opts
}

// Configure changes knobs at runtime. Pending policy applications and
// gateway registrations are re-planned, so turning NeverApply off lets the
// data plane catch up (as when the platform's policy agent ships) and a
// shorter GatewayLag applies to sandboxes still waiting for the gateway.
func (s *Server) Configure(f func(*Options)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, oldRate := s.opts.Seed, s.opts.ClockRate
	wasOut := s.opts.inOutage(time.Now())
	f(&s.opts)
	if s.opts.ClockRate != oldRate {
		s.setClockRate(s.opts.ClockRate)
	}
	if !wasOut && s.opts.inOutage(time.Now()) {
		close(s.cut)
		s.cut = make(chan struct{})
	}
	if s.opts.Seed == 0 {
		s.opts.Seed = timeSeed()
	}
	if s.opts.Seed != old {
		s.rng = newRand(s.opts.Seed)
	}
	for _, sb := range s.sandboxes {
		s.armApply(sb)
		s.armGateway(sb)
	}
	s.armLifetimes()
}

// SetNeverApply switches the never-applying data plane on or off.
func (s *Server) SetNeverApply(v bool) { s.Configure(func(o *Options) { o.NeverApply = v }) }

// SetFailRate sets the probability of injected 503s.
func (s *Server) SetFailRate(p float64) { s.Configure(func(o *Options) { o.FailRate = p }) }

// SetThrottleRate sets the probability of injected 429s.
func (s *Server) SetThrottleRate(p float64) { s.Configure(func(o *Options) { o.ThrottleRate = p }) }

// SetApplyDelay sets how long the data plane takes to apply a policy.
func (s *Server) SetApplyDelay(d time.Duration) { s.Configure(func(o *Options) { o.ApplyDelay = d }) }

// reply is what an /api/v1 handler produces. The middleware decides whether
// it is delivered or replaced by an injected fault.
type reply struct {
	status int
	body   any
	// onSend runs under the lock only if the reply is delivered (it records
	// what the client has actually been told, e.g. policy_observed).
	onSend func()
	// plain keeps a 422's {"detail": "<message>"}: a handler's refusal, not
	// request validation (validation.go).
	plain bool
}

// apiFunc handles an authenticated /api/v1 request; caller is the API key.
type apiFunc func(r *http.Request, caller string) reply

func ok(body any) reply { return reply{status: http.StatusOK, body: body} }

func detail(msg string) map[string]any { return map[string]any{"detail": msg} }

func errorReply(status int, format string, args ...any) reply {
	return reply{status: status, body: detail(fmt.Sprintf(format, args...))}
}

type fault int

const (
	noFault fault = iota
	throttled
	failBefore
	failAfter
)

// api wraps a handler with what every /api/v1 request gets: counting,
// latency, authentication and fault injection; a gateway route also fails
// during a gateway outage.
func (s *Server) api(pattern string, h apiFunc, gateway bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.begin(pattern)
		defer s.end()
		if !s.delay(r.Context()) {
			return // the client gave up; nobody reads an answer
		}
		if gateway && s.inOutage() {
			writeEdgeUnavailable(w)
			return
		}
		caller, authed := s.authenticate(r)
		if !authed {
			writeJSON(w, http.StatusUnauthorized, detail("Invalid or missing API key"))
			return
		}
		if retryAfter, limited := s.rateCheck(pattern, r, caller); limited {
			w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
			writeJSON(w, http.StatusTooManyRequests, detail("Rate limit exceeded"))
			return
		}
		s.requestEvent(pattern, r)
		f, retryAfter := s.decideFault(r.Method)
		switch f {
		case throttled:
			w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
			writeJSON(w, http.StatusTooManyRequests, detail("Too Many Requests"))
			return
		case failBefore:
			writeJSON(w, http.StatusServiceUnavailable, detail("Service Unavailable (injected by prime-mock)"))
			return
		}
		rep := s.asValidation(r, h(r, caller))
		if f == failAfter {
			// The action happened; the client just never hears about it.
			writeJSON(w, http.StatusServiceUnavailable, detail("Service Unavailable (injected by prime-mock after the action)"))
			return
		}
		if rep.onSend != nil {
			s.mu.Lock()
			rep.onSend()
			s.mu.Unlock()
		}
		if rep.body == nil {
			w.Header().Set("Content-Length", "0")
			w.WriteHeader(rep.status)
			return
		}
		writeJSON(w, rep.status, rep.body)
	})
}

// count counts a gateway request under its route.
func (s *Server) count(route string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Requests[route]++
}

func (s *Server) begin(pattern string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Requests[pattern]++
	s.inFlight++
	s.stats.PeakInFlight = max(s.stats.PeakInFlight, s.inFlight)
}

func (s *Server) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inFlight > 0 { // a Reset during the request zeroed it
		s.inFlight--
	}
}

// inOutage reports whether the gateway is out now; every caller refuses
// its request when it is, which Stats counts.
func (s *Server) inOutage() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.opts.inOutage(time.Now())
	if out {
		s.stats.OutageRefusals++
	}
	return out
}

// outageCut is closed when the next outage begins.
func (s *Server) outageCut() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cut
}

// delay sleeps the configured latency; false if the request context ended.
func (s *Server) delay(ctx context.Context) bool {
	d := s.drawDelay()
	if s.sleptHook != nil {
		s.sleptHook(d)
	}
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// drawDelay is one request's latency: Latency plus a uniform draw in
// [0, LatencyJitter) from the seeded source.
func (s *Server) drawDelay() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.opts.Latency
	if j := s.opts.LatencyJitter; j > 0 {
		d += time.Duration(s.rng.Int64N(int64(j)))
	}
	return d
}

// authenticate checks "Authorization: Bearer <key>".
func (s *Server) authenticate(r *http.Request) (string, bool) {
	key, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	key = strings.TrimSpace(key)
	if !found || key == "" {
		return "", false
	}
	s.mu.Lock()
	want := s.opts.APIKey
	s.mu.Unlock()
	if want != "" && key != want {
		return "", false
	}
	return key, true
}

// decideFault draws the request's fault, if any.
func (s *Server) decideFault(method string) (fault, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.opts.ThrottleRate; p > 0 && s.rng.Float64() < p {
		s.stats.Injected429++
		return throttled, s.opts.retryAfterSeconds()
	}
	if p := s.opts.FailRate; p > 0 && s.rng.Float64() < p {
		s.stats.Injected503++
		switch method {
		case http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch:
			if s.rng.IntN(2) == 0 {
				return failAfter, 0
			}
		}
		return failBefore, 0
	}
	return noFault, 0
}

// writeJSON writes a JSON answer. Every body is a JSON object: the SDK fails
// on anything else, empty DELETE answers included; only a 204 (a few of the
// 2026 contract's DELETEs) has none.
func writeJSON(w http.ResponseWriter, status int, body any) {
	if status == http.StatusNoContent { // the 2026 contract's bodiless DELETEs
		w.WriteHeader(status)
		return
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // commands such as "a && b" stay readable
	if err := enc.Encode(body); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		_ = enc.Encode(detail("prime-mock: encoding the answer: " + err.Error()))
	}
	b := buf.Bytes()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// maxBodyBytes bounds request bodies.
const maxBodyBytes = 8 << 20

// readBody reads a request body that must be present and not too large.
func readBody(r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the body: %w", err)
	}
	if len(b) > maxBodyBytes {
		return nil, errors.New("the body is too large")
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		return nil, errors.New("a JSON body is required")
	}
	return b, nil
}

// decodeBody reads a JSON body into v. Unknown keys are ignored, as the
// platform's pydantic models do; malformed JSON or wrong types are 422.
func decodeBody(r *http.Request, v any) error {
	b, err := readBody(r)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("invalid JSON body: %w", err)
	}
	return nil
}

// userIDOf derives a stable user id from an API key, so user_id filters and
// gateway namespaces have something to work with.
func userIDOf(key string) string {
	sum := sha256.Sum256([]byte("prime-mock user " + key))
	return "u" + hex.EncodeToString(sum[:])[:24]
}
