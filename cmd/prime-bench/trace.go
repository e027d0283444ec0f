package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// tracer is an optional reverse proxy between the provider and the mock
// (-trace) that records every API request's timing, so an apply can be
// broken down per sandbox: when its RUNNING status was first answered,
// when the policy's requests were sent. It adds one loopback hop, so traced
// runs are for analysis, not for the headline figures.
type tracer struct {
	URL  string
	srv  *http.Server
	mu   sync.Mutex
	recs []traceRec
}

type traceRec struct {
	Method, Path string
	IDs          []string // the sandbox in the path, or a batch's ids
	Start, End   time.Time
	Status       int
	// Jobs and Done, for the background-jobs status:batchGet: the jobs
	// asked about and those the answer reported completed, as jobKey.
	Jobs, Done []string
}

type statusRecorder struct {
	http.ResponseWriter
	status int
	// body, when set, receives a copy of what is written.
	body *bytes.Buffer
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(p []byte) (int, error) {
	if s.body != nil {
		s.body.Write(p)
	}
	return s.ResponseWriter.Write(p)
}

// jobBatchPath is the background-jobs status:batchGet's path.
const jobBatchPath = "/api/v1/sandbox/background-jobs/status:batchGet"

// jobKey names a job in a sandbox.
func jobKey(sandboxID, jobID string) string { return sandboxID + "/" + jobID }

// parseJobBatch reads a background-jobs status:batchGet's request and
// answer: the jobs asked about and those reported completed.
func parseJobBatch(req, resp []byte) (jobs, done []string) {
	var q prime.BatchJobStatusRequest
	if json.Unmarshal(req, &q) == nil {
		for _, j := range q.Jobs {
			jobs = append(jobs, jobKey(j.SandboxID, j.JobID))
		}
	}
	var a prime.BatchJobStatusResponse
	if json.Unmarshal(resp, &a) == nil {
		for _, s := range a.Statuses {
			if s.Completed {
				done = append(done, jobKey(s.SandboxID, s.JobID))
			}
		}
	}
	return jobs, done
}

// startTracer starts the proxy in front of target. With apiOnly, requests
// reach the mock under its own Host, so the gateway URLs it hands out
// (derived from the Host) point at the mock itself: only /api/v1 goes
// through the proxy, and the gateway's streams do not take the extra hop.
func startTracer(target string, apiOnly bool) (*tracer, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	if apiOnly {
		rp = &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(u) }}
	}
	rp.Transport = &http.Transport{MaxIdleConns: 512, MaxIdleConnsPerHost: 512, IdleConnTimeout: time.Minute}
	t := &tracer{URL: "http://" + ln.Addr().String()}
	t.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := traceRec{Method: r.Method, Path: r.URL.Path, Start: time.Now()}
		sr := &statusRecorder{ResponseWriter: w, status: 200}
		var reqBody []byte
		if r.URL.Path == jobBatchPath {
			reqBody, _ = io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(reqBody))
			sr.body = &bytes.Buffer{}
		} else if strings.HasSuffix(r.URL.Path, "status:batchGet") {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var req struct {
				IDs []string `json:"sandbox_ids"`
			}
			_ = json.Unmarshal(body, &req)
			rec.IDs = req.IDs
		} else if rest, ok := strings.CutPrefix(r.URL.Path, "/api/v1/sandbox/"); ok {
			rec.IDs = []string{strings.SplitN(rest, "/", 2)[0]}
		}
		rp.ServeHTTP(sr, r)
		rec.End, rec.Status = time.Now(), sr.status
		if sr.body != nil && sr.status == http.StatusOK {
			rec.Jobs, rec.Done = parseJobBatch(reqBody, sr.body.Bytes())
		}
		t.mu.Lock()
		t.recs = append(t.recs, rec)
		t.mu.Unlock()
	})}
	go func() { _ = t.srv.Serve(ln) }()
	return t, nil
}

func (t *tracer) Close() { _ = t.srv.Close() }

// since returns the records of requests started at or after from.
func (t *tracer) since(from time.Time) []traceRec {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []traceRec
	for _, r := range t.recs {
		if !r.Start.Before(from) {
			out = append(out, r)
		}
	}
	return out
}

// traceBreakdown prints, per sandbox, where its chain's time went:
// boot (mock), RUNNING → first status answer saying so (poll cadence),
// → the sandbox's GET ending (the provider's read after RUNNING), → the
// policy's first request (Terraform completing the sandbox, scheduling the
// policy, a free -parallelism slot), → the PUT, → applied (mock), →
// observed (egress wait cadence).
func traceBreakdown(recs []traceRec, evs []primemock.Event) string {
	running, created := map[string]time.Time{}, map[string]time.Time{}
	firstPut, applied, observed := map[string]time.Time{}, map[string]time.Time{}, map[string]time.Time{}
	for _, e := range evs {
		switch e.Type {
		case primemock.EventSandboxCreated:
			created[e.SandboxID] = e.Time
		case primemock.EventSandboxRunning:
			running[e.SandboxID] = e.Time
		case primemock.EventPolicyPut:
			if _, ok := firstPut[e.SandboxID]; !ok {
				firstPut[e.SandboxID] = e.Time
			}
		case primemock.EventPolicyApplied:
			if e.Generation >= 1 {
				applied[e.SandboxID] = e.Time
			}
		case primemock.EventPolicyObserved:
			if e.Generation >= 1 {
				observed[e.SandboxID] = e.Time
			}
		}
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].Start.Before(recs[j].Start) })
	var polls []time.Time
	var pollSizes []int
	noticed := map[string]time.Time{}
	getAfter := map[string]time.Time{}    // end of the first GET /sandbox/{id} after noticed
	policyFirst := map[string]time.Time{} // start of the second GET /sandbox/{id} (policy's check)
	putStart := map[string]time.Time{}
	gets := map[string]int{}
	for _, r := range recs {
		switch {
		case r.Path == jobBatchPath:
		case strings.HasSuffix(r.Path, "status:batchGet"):
			polls = append(polls, r.Start)
			pollSizes = append(pollSizes, len(r.IDs))
			if r.Status != 200 {
				continue
			}
			for _, id := range r.IDs {
				if rt, ok := running[id]; ok && !r.End.Before(rt) {
					if _, done := noticed[id]; !done {
						noticed[id] = r.End
					}
				}
			}
		case r.Method == http.MethodGet && len(r.IDs) == 1 && strings.Count(r.Path, "/") == 4 && r.Status == 200:
			id := r.IDs[0]
			gets[id]++
			if _, ok := noticed[id]; ok {
				if _, done := getAfter[id]; !done {
					getAfter[id] = r.End
				} else if _, done := policyFirst[id]; !done {
					policyFirst[id] = r.Start
				}
			}
		case r.Method == http.MethodPut && len(r.IDs) == 1:
			if _, done := putStart[r.IDs[0]]; !done {
				putStart[r.IDs[0]] = r.Start
			}
		}
	}
	type seg struct {
		name string
		ds   []time.Duration
	}
	segs := []*seg{{name: "created → RUNNING (mock boot)"}, {name: "RUNNING → status answer saying so (poll cadence)"},
		{name: "→ sandbox GET after RUNNING done"}, {name: "→ policy's first request (Terraform + free slot)"},
		{name: "→ PUT sent (policy's sandbox check)"}, {name: "PUT sent → applied (mock apply delay)"},
		{name: "applied → seen (egress wait cadence)"}}
	add := func(i int, a, b time.Time) {
		if !a.IsZero() && !b.IsZero() {
			segs[i].ds = append(segs[i].ds, b.Sub(a))
		}
	}
	for id, c := range created {
		add(0, c, running[id])
		add(1, running[id], noticed[id])
		add(2, noticed[id], getAfter[id])
		add(3, getAfter[id], policyFirst[id])
		add(4, policyFirst[id], putStart[id])
		add(5, putStart[id], applied[id])
		add(6, applied[id], observed[id])
	}
	var b strings.Builder
	fmt.Fprintf(&b, "trace: per-sandbox chain (median / p95 / max over %d sandboxes)\n", len(created))
	for _, s := range segs {
		fmt.Fprintf(&b, "  %-52s %s\n", s.name, newDurStats(s.ds, 0))
	}
	// Slot occupancy: a sandbox's create holds a Terraform slot from its
	// POST (≈ created) until its GET after RUNNING returns; a policy's from
	// its sandbox check until it sees the policy applied. The busy slot-time
	// divided by the span is the average number of slots in use.
	type iv struct{ a, b time.Time }
	var ivs []iv
	var first, last time.Time
	for id, c := range created {
		if e := getAfter[id]; !e.IsZero() {
			ivs = append(ivs, iv{c, e})
		}
		if a, e := policyFirst[id], observed[id]; !a.IsZero() && !e.IsZero() {
			ivs = append(ivs, iv{a, e})
		}
	}
	var busy time.Duration
	type edge struct {
		t time.Time
		d int
	}
	var edges []edge
	for _, x := range ivs {
		busy += x.b.Sub(x.a)
		edges = append(edges, edge{x.a, 1}, edge{x.b, -1})
		if first.IsZero() || x.a.Before(first) {
			first = x.a
		}
		if x.b.After(last) {
			last = x.b
		}
	}
	sort.Slice(edges, func(i, j int) bool { return edges[i].t.Before(edges[j].t) })
	cur, peak := 0, 0
	for _, e := range edges {
		cur += e.d
		peak = max(peak, cur)
	}
	if span := last.Sub(first); span > 0 {
		fmt.Fprintf(&b, "  Terraform slots in use: %.1f on average over the %s span, at most %d (busy slot-time %s, %.2f s per sandbox)\n",
			busy.Seconds()/span.Seconds(), secs(span), peak, secs(busy), busy.Seconds()/float64(max(1, len(created))))
	}
	var gaps []time.Duration
	for i := 1; i < len(polls); i++ {
		gaps = append(gaps, polls[i].Sub(polls[i-1]))
	}
	sizes := 0
	for _, s := range pollSizes {
		sizes += s
	}
	if len(polls) > 0 {
		fmt.Fprintf(&b, "  status:batchGet: %d requests, %.1f ids per request on average; interval between polls %s\n",
			len(polls), float64(sizes)/float64(len(polls)), newDurStats(gaps, 0))
	}
	return b.String()
}
