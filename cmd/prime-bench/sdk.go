package main

// The SDK stand-in: the same job as the fleet path — N sandboxes, each
// RUNNING and answering through its gateway, each locked to the same
// egress policy, enforced — done the way verifiers does it on top of the
// Python SDK (prime-sandboxes 0.2.39), by sdkWorkers concurrent workers,
// against a prime-mock with the same settings. The SDK cannot be installed
// here (no PyPI), so this is an emulation of its request sequence and its
// schedules, written from its source (sandbox.py) and from verifiers'
// prepare_execution (prime-api.md §10.2). It shares no wait, backoff or
// client code with the provider (internal/prime is used for wire types
// only; the Connect stubs are the generated ones), so what it measures is
// the SDK's pacing:
//
//   - AsyncSandboxClient.create: POST /sandbox with an idempotency key
//     (verifiers' create options: vm, 1 CPU, 2 GB, 5 GB, idle timeout 60 min,
//     timeout_minutes -1);
//   - wait_for_creation(max_attempts=180): the first status lookup at once,
//     then sleeps of 1 s × 1.5^k capped at 10 s, ±25 %, every lookup through
//     the coalescing batcher (_AsyncRequestBatcher: a 25 ms window, at most
//     100 ids per status:batchGet, chunks sent one after another); once
//     RUNNING, the reachability probe — execute_command("echo 'sandbox
//     ready'", timeout=10): a gateway token (POST /sandbox/{id}/auth, cached
//     and shared by concurrent callers), is_vm (GET /sandbox/{id}: the auth
//     answer does not say), then CommandSession/Start over Connect; a
//     not_found answer costs GET /sandbox/{id}/error-context and is retried
//     after the same backoff (restarted at 1 s) and another status lookup;
//   - set_network: PUT /sandbox/{id}/egress-policy with the route host and
//     allow list;
//   - verifiers' fail-closed wait: while not applied, sleep 0.1, 0.2, 0.4,
//     0.8, 1.6, then 3, 3, … s, then GET /sandbox/{id}/egress-policy.
//
// The REST client is limited like httpx.AsyncClient's defaults (100
// connections, 20 kept alive); requests are retried as tenacity does it
// (3 attempts, random exponential wait from 0.1 s, at most 2 s) on 429,
// 5xx and connection errors. Not emulated: Python's own CPU cost and event
// loop, the auth cache file, image builds.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"github.com/primeintellect/terraform-provider-prime/internal/commandsession/commandsessionpb"
	"github.com/primeintellect/terraform-provider-prime/internal/commandsession/commandsessionpb/commandsessionpbconnect"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
	"github.com/primeintellect/terraform-provider-prime/internal/soak"
)

// The SDK's constants (sandbox.py, core/client.py) and verifiers'.
const (
	sdkStatusBatchWindow  = 25 * time.Millisecond
	sdkMaxStatusBatch     = 100
	sdkPollInitial        = time.Second
	sdkPollMax            = 10 * time.Second
	sdkPollFactor         = 1.5
	sdkPollJitter         = 0.25
	sdkCreationBudget     = 355 * time.Second // _creation_timeout_seconds(180)
	sdkProbeTimeout       = 10 * time.Second
	sdkRESTTimeout        = 30 * time.Second
	sdkRESTConnections    = 100 // httpx default max_connections
	sdkRESTKeepAlive      = 20  // httpx default max_keepalive_connections
	sdkAttempts           = 3
	verifiersApplyBudget  = 60 * time.Second
	verifiersApplyInitial = 100 * time.Millisecond
	verifiersApplyMax     = 3 * time.Second
)

// sdkPollDelay is _creation_poll_delay.
func sdkPollDelay(i int) time.Duration {
	d := math.Min(float64(sdkPollInitial)*math.Pow(sdkPollFactor, float64(i)), float64(sdkPollMax))
	j := d * sdkPollJitter
	return time.Duration(math.Max(0, d+(2*mrand.Float64()-1)*j)) //nolint:gosec // jitter, as the SDK's random.uniform
}

// verifiersApplyDelays are the sleeps of the fail-closed wait.
func verifiersApplyDelay(i int) time.Duration {
	d := verifiersApplyInitial << min(i, 10)
	return min(d, verifiersApplyMax)
}

type sdkFigures struct {
	n, workers int
	wall       time.Duration // first create sent → last worker done
	W, limit   time.Duration
	requests   map[string]int
	stats      primemock.Stats
	failures   []string
	obs        durStats
	runToPut   durStats
	readyProbe durStats
	span       time.Duration
	// CPU time of the stand-in (this process) and of prime-mock during the
	// run.
	clientCPU, mockCPU time.Duration
}

func (f *sdkFigures) apiTotal() int     { return routeTotal(f.requests, "/api/v1") }
func (f *sdkFigures) gatewayTotal() int { return routeTotal(f.requests, "/gateway/") }
func (f *sdkFigures) ratio() float64    { return f.wall.Seconds() / f.limit.Seconds() }

func sdkRun(c benchConfig, n int) (*sdkFigures, error) {
	ctx := context.Background()
	mock, err := startMock(c)
	if err != nil {
		return nil, err
	}
	defer mock.Close()
	fmt.Printf("prime-mock (pid %d) at %s\n", mock.PID(), mock.URL)
	s := newSDKClient(mock.URL)
	defer s.close()
	policy, _ := prime.ComposeEgressPolicy(prime.EgressPolicySpec{Allow: soak.DefaultAllow, Routes: soak.DefaultRoutes})

	jobs := make(chan int)
	var mu sync.Mutex
	f := &sdkFigures{n: n, workers: c.sdkWorkers, W: chainW(c)}
	f.limit = max(time.Duration(float64(n)*float64(f.W)/float64(c.sdkWorkers)), f.W)
	var wg sync.WaitGroup
	mockBefore, selfBefore := processCPU(mock.PID()), selfCPU()
	start := time.Now()
	for range min(c.sdkWorkers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				if err := s.job(ctx, fmt.Sprintf("sdk-%04d", i), policy.Allowlist); err != nil {
					mu.Lock()
					f.failures = append(f.failures, err.Error())
					mu.Unlock()
				}
			}
		}()
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	f.wall = time.Since(start)
	f.mockCPU, f.clientCPU = processCPU(mock.PID())-mockBefore, selfCPU()-selfBefore
	if f.stats, err = mock.Stats(ctx); err != nil {
		return nil, err
	}
	f.requests = f.stats.Requests
	evs, err := mock.Events(ctx, 0)
	if err != nil {
		return nil, err
	}
	a := analyse(evs)
	f.obs, f.runToPut = a.obs, a.runToPut
	var rp []time.Duration
	for id, gt := range a.ready {
		if pt, ok := a.probed[id]; ok {
			rp = append(rp, pt.Sub(gt))
		}
	}
	f.readyProbe = newDurStats(rp, 0)
	if !a.firstCreated.IsZero() && !a.lastObs.IsZero() {
		f.span = a.lastObs.Sub(a.firstCreated)
	}
	if len(f.failures) > 0 {
		return nil, fmt.Errorf("%d of %d jobs failed: %s", len(f.failures), n, f.failures[0])
	}
	return f, nil
}

func printSDK(f *sdkFigures) {
	fmt.Printf("sdk      %s wall (%d workers); limit %s → ratio %.2f; API span %s\n", secs(f.wall), f.workers, secs(f.limit), f.ratio(), secs(f.span))
	fmt.Printf("         per member: %.2f API requests (%.2f status), %.2f gateway requests; peak in flight %d\n",
		float64(f.apiTotal())/float64(f.n), float64(f.requests[statusRoute])/float64(f.n), float64(f.gatewayTotal())/float64(f.n), f.stats.PeakInFlight)
	fmt.Printf("         policy applied → seen: %s; gateway ready → probe answered: %s\n", f.obs, f.readyProbe)
}

// sdkClient is the emulated AsyncSandboxClient.
type sdkClient struct {
	base    string
	rest    *http.Client
	gateway *http.Client
	batcher *sdkBatcher
	auth    *sdkAuthCache
}

func newSDKClient(base string) *sdkClient {
	rest := &http.Transport{MaxConnsPerHost: sdkRESTConnections, MaxIdleConnsPerHost: sdkRESTKeepAlive, MaxIdleConns: sdkRESTKeepAlive,
		IdleConnTimeout: 5 * time.Second}
	gw := &http.Transport{MaxConnsPerHost: 1000, MaxIdleConnsPerHost: 200, MaxIdleConns: 200, IdleConnTimeout: 5 * time.Second}
	s := &sdkClient{base: strings.TrimRight(base, "/") + prime.APIPrefix, rest: &http.Client{Transport: rest, Timeout: sdkRESTTimeout},
		gateway: &http.Client{Transport: gw}}
	s.batcher = &sdkBatcher{fetch: s.fetchStatuses, pending: map[string][]chan sdkStatusResult{}}
	s.auth = &sdkAuthCache{c: s, entries: map[string]*sdkAuthEntry{}}
	return s
}

func (s *sdkClient) close() {
	s.rest.CloseIdleConnections()
	s.gateway.CloseIdleConnections()
}

// httpStatusError is a non-2xx answer.
type httpStatusError struct {
	code int
	body string
}

func (e *httpStatusError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.code, e.body) }

// request is APIClient.request: JSON in and out, tenacity's retries.
func (s *sdkClient) request(ctx context.Context, method, path string, body, out any) error {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return err
		}
	}
	var last error
	for attempt := range sdkAttempts {
		if attempt > 0 {
			// wait_random_exponential(multiplier=0.1, max=2)
			hi := math.Min(2, 0.1*math.Pow(2, float64(attempt)))
			if err := prime.Sleep(ctx, time.Duration(mrand.Float64()*hi*float64(time.Second))); err != nil { //nolint:gosec // jitter
				return err
			}
		}
		req, err := http.NewRequestWithContext(ctx, method, s.base+path, bytes.NewReader(payload))
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+soak.APIKey)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", "prime-bench-sdk-standin")
		resp, err := s.rest.Do(req)
		if err != nil {
			last = err
			continue
		}
		b, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			last = err
			continue
		}
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
			last = &httpStatusError{resp.StatusCode, string(b)}
			continue
		}
		if resp.StatusCode >= 300 {
			return &httpStatusError{resp.StatusCode, string(b)}
		}
		if out != nil {
			return json.Unmarshal(b, out)
		}
		return nil
	}
	return fmt.Errorf("%s %s: %w", method, path, last)
}

// job is one verifiers rollout's sandbox part: create, wait_for_creation,
// set_network and the fail-closed applied wait.
func (s *sdkClient) job(ctx context.Context, name string, allow []string) error {
	var key [16]byte
	_, _ = rand.Read(key[:])
	create := map[string]any{
		"name": name, "docker_image": "python:3.12-slim", "cpu_cores": 1.0, "memory_gb": 2.0, "disk_size_gb": 5.0,
		"gpu_count": 0, "vm": true, "timeout_minutes": -1, "idle_timeout_minutes": 60, "environment_vars": map[string]string{},
		"labels": []string{}, "guaranteed": false, "idempotency_key": hex.EncodeToString(key[:]),
	}
	var sb struct {
		ID string `json:"id"`
	}
	if err := s.request(ctx, http.MethodPost, "/sandbox", create, &sb); err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	if err := s.waitForCreation(ctx, sb.ID); err != nil {
		return err
	}
	var st prime.EgressPolicyStatus
	if err := s.request(ctx, http.MethodPut, "/sandbox/"+sb.ID+"/egress-policy",
		map[string]any{"allowlist": allow, "denylist": nil}, &st); err != nil {
		return fmt.Errorf("set_network %s: %w", sb.ID, err)
	}
	deadline := time.Now().Add(verifiersApplyBudget)
	for i := 0; !st.Applied; i++ {
		if time.Now().After(deadline) {
			return fmt.Errorf("sandbox %s: egress policy not applied within %s", sb.ID, verifiersApplyBudget)
		}
		if err := prime.Sleep(ctx, verifiersApplyDelay(i)); err != nil {
			return err
		}
		if err := s.request(ctx, http.MethodGet, "/sandbox/"+sb.ID+"/egress-policy", nil, &st); err != nil {
			return fmt.Errorf("get_network %s: %w", sb.ID, err)
		}
	}
	return nil
}

// waitForCreation is AsyncSandboxClient.wait_for_creation(max_attempts=180,
// stability_checks=1) without the image-build branch.
func (s *sdkClient) waitForCreation(ctx context.Context, id string) error {
	deadline := time.Now().Add(sdkCreationBudget)
	poll, reachability := 0, false
	lastErr := errors.New("sandbox never reported RUNNING")
	for time.Now().Before(deadline) {
		st, err := s.batcher.get(ctx, id)
		if err != nil {
			return err
		}
		switch st.Status {
		case prime.StatusRunning:
			if !reachability {
				reachability = true
				deadline = time.Now().Add(sdkCreationBudget)
				poll = 0
			}
			err := s.probe(ctx, id)
			if err == nil {
				return nil
			}
			if !errors.Is(err, errSDKRetryableProbe) {
				return err
			}
			lastErr = err
		case "ERROR", "TERMINATED", "TIMEOUT":
			return fmt.Errorf("sandbox %s is %s", id, st.Status)
		}
		remaining := time.Until(deadline)
		if remaining <= 0 {
			break
		}
		if err := prime.Sleep(ctx, min(sdkPollDelay(poll), remaining)); err != nil {
			return err
		}
		poll++
	}
	return fmt.Errorf("sandbox %s not ready within %s (last error: %w)", id, sdkCreationBudget, lastErr)
}

var errSDKRetryableProbe = errors.New("reachability probe failed (retryable)")

// probe is _is_sandbox_reachable: execute_command over Connect for a VM.
func (s *sdkClient) probe(ctx context.Context, id string) error {
	auth, err := s.auth.get(ctx, id)
	if err != nil {
		return err
	}
	if _, err := s.auth.isVM(ctx, id); err != nil {
		return err
	}
	for reauthed := false; ; reauthed = true {
		auth, err = s.auth.get(ctx, id)
		if err != nil {
			return err
		}
		base := strings.TrimRight(auth.GatewayURL, "/") + "/" + url.PathEscape(auth.UserNS) + "/" + url.PathEscape(auth.JobID)
		client := commandsessionpbconnect.NewCommandSessionClient(s.gateway, base)
		req := connect.NewRequest(&commandsessionpb.StartRequest{
			Command: &commandsessionpb.CommandSpec{Cmd: "/bin/bash", Args: []string{"-c", gatewayProbe}},
			Stdin:   proto.Bool(false),
		})
		req.Header().Set("Authorization", "Bearer "+auth.Token)
		cctx, cancel := context.WithTimeout(ctx, sdkProbeTimeout)
		started, exited, err := readStream(cctx, client, req)
		cancel()
		if err == nil {
			if !exited {
				return errors.New("command stream ended without exit code")
			}
			return nil
		}
		code := connect.CodeOf(err)
		switch {
		case code == connect.CodeUnauthenticated && !started && !reauthed:
			s.auth.invalidate(id)
			continue
		case code == connect.CodeNotFound, code == connect.CodeDeadlineExceeded:
			// _get_sandbox_error_context, then SandboxNotRunningError
			// (not_found) or CommandTimeoutError: both retried by the
			// reachability wait while the control plane says RUNNING.
			var ec prime.SandboxErrorContext
			_ = s.request(ctx, http.MethodGet, "/sandbox/"+id+"/error-context", nil, &ec)
			if ec.Status == "ERROR" || ec.Status == "TIMEOUT" {
				return fmt.Errorf("sandbox %s is %s", id, ec.Status)
			}
			return fmt.Errorf("%w: %w", errSDKRetryableProbe, err)
		case code == connect.CodeUnavailable, code == connect.CodeAborted:
			return fmt.Errorf("%w: %w", errSDKRetryableProbe, err)
		}
		return err
	}
}

func readStream(ctx context.Context, client commandsessionpbconnect.CommandSessionClient, req *connect.Request[commandsessionpb.StartRequest]) (started, exited bool, err error) {
	stream, err := client.Start(ctx, req)
	if err != nil {
		return false, false, err
	}
	defer func() { _ = stream.Close() }()
	for stream.Receive() {
		started = true
		if _, ok := stream.Msg().GetEvent().GetEvent().(*commandsessionpb.CommandSessionEvent_End); ok {
			exited = true
		}
	}
	return started, exited, stream.Err()
}

// sdkAuthCache is AsyncSandboxAuthCache without the file: one POST /auth
// per sandbox, shared by concurrent callers; is_vm from GET /sandbox/{id},
// remembered with the token.
type sdkAuthCache struct {
	c       *sdkClient
	mu      sync.Mutex
	entries map[string]*sdkAuthEntry
}

type sdkAuthEntry struct {
	ready chan struct{}
	auth  prime.GatewayAuth
	err   error
	isVM  *bool
}

func (a *sdkAuthCache) get(ctx context.Context, id string) (prime.GatewayAuth, error) {
	for {
		a.mu.Lock()
		e, ok := a.entries[id]
		if !ok {
			e = &sdkAuthEntry{ready: make(chan struct{})}
			a.entries[id] = e
			a.mu.Unlock()
			e.err = a.c.request(ctx, http.MethodPost, "/sandbox/"+id+"/auth", nil, &e.auth)
			close(e.ready)
			if e.err != nil {
				a.invalidate(id)
			}
			return e.auth, e.err
		}
		a.mu.Unlock()
		select {
		case <-e.ready:
		case <-ctx.Done():
			return prime.GatewayAuth{}, ctx.Err()
		}
		if e.err == nil {
			return e.auth, nil
		}
	}
}

func (a *sdkAuthCache) isVM(ctx context.Context, id string) (bool, error) {
	a.mu.Lock()
	e := a.entries[id]
	if e != nil && e.isVM != nil {
		v := *e.isVM
		a.mu.Unlock()
		return v, nil
	}
	a.mu.Unlock()
	var sb struct {
		VM bool `json:"vm"`
	}
	if err := a.c.request(ctx, http.MethodGet, "/sandbox/"+id, nil, &sb); err != nil {
		return false, err
	}
	a.mu.Lock()
	if e := a.entries[id]; e != nil {
		e.isVM = &sb.VM
	}
	a.mu.Unlock()
	return sb.VM, nil
}

func (a *sdkAuthCache) invalidate(id string) {
	a.mu.Lock()
	delete(a.entries, id)
	a.mu.Unlock()
}

// sdkBatcher is _AsyncRequestBatcher: lookups that arrive while no dispatch
// runs start one, which waits the 25 ms window and then drains everything
// pending in chunks of at most 100, one request after another; lookups that
// arrive during a request wait for the next chunk.
type sdkBatcher struct {
	fetch func(ctx context.Context, ids []string) (map[string]sdkStatusResult, error)

	mu          sync.Mutex
	order       []string
	pending     map[string][]chan sdkStatusResult
	dispatching bool
}

type sdkStatusResult struct {
	prime.SandboxStatus
	err error
}

func (b *sdkBatcher) get(ctx context.Context, id string) (prime.SandboxStatus, error) {
	ch := make(chan sdkStatusResult, 1)
	b.mu.Lock()
	if _, ok := b.pending[id]; !ok {
		b.order = append(b.order, id)
	}
	b.pending[id] = append(b.pending[id], ch)
	if !b.dispatching {
		b.dispatching = true
		// The batch serves every waiter, so it must outlive the caller that
		// happened to start it: dispatch uses its own context.
		go b.dispatch() //nolint:gosec // G118: see above
	}
	b.mu.Unlock()
	select {
	case r := <-ch:
		return r.SandboxStatus, r.err
	case <-ctx.Done():
		return prime.SandboxStatus{}, ctx.Err()
	}
}

func (b *sdkBatcher) dispatch() {
	time.Sleep(sdkStatusBatchWindow)
	ctx := context.Background()
	for {
		b.mu.Lock()
		if len(b.order) == 0 {
			b.dispatching = false
			b.mu.Unlock()
			return
		}
		keys := b.order[:min(sdkMaxStatusBatch, len(b.order))]
		b.order = append([]string(nil), b.order[len(keys):]...)
		waiters := make(map[string][]chan sdkStatusResult, len(keys))
		for _, k := range keys {
			waiters[k] = b.pending[k]
			delete(b.pending, k)
		}
		b.mu.Unlock()
		results, err := b.fetch(ctx, keys)
		for k, ws := range waiters {
			r, ok := results[k]
			switch {
			case err != nil:
				r = sdkStatusResult{err: err}
			case !ok:
				r = sdkStatusResult{err: fmt.Errorf("batch status response omitted %q", k)}
			}
			for _, w := range ws {
				w <- r
			}
		}
	}
}

func (s *sdkClient) fetchStatuses(ctx context.Context, ids []string) (map[string]sdkStatusResult, error) {
	var resp prime.BatchStatusResponse
	if err := s.request(ctx, http.MethodPost, "/sandbox/status:batchGet", map[string]any{"sandbox_ids": ids}, &resp); err != nil {
		return nil, err
	}
	out := make(map[string]sdkStatusResult, len(ids))
	for _, st := range resp.Statuses {
		out[st.SandboxID] = sdkStatusResult{SandboxStatus: st}
	}
	for _, e := range resp.Errors {
		out[e.SandboxID] = sdkStatusResult{err: fmt.Errorf("sandbox status lookup failed for %s: %s: %s", e.SandboxID, e.Code, e.Message)}
	}
	return out, nil
}
