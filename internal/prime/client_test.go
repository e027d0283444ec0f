package prime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fastRetry keeps retry tests quick; Retry-After still dominates where sent.
var fastRetry = Backoff{Initial: 5 * time.Millisecond, Factor: 2, Max: 20 * time.Millisecond}

type logRecorder struct {
	mu      sync.Mutex
	records []string
}

func (l *logRecorder) log(_ context.Context, msg string, fields map[string]any) {
	b, _ := json.Marshal(fields)
	l.mu.Lock()
	l.records = append(l.records, msg+" "+string(b))
	l.mu.Unlock()
}

func (l *logRecorder) all() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.records, "\n")
}

func newTestClient(t *testing.T, h http.Handler, mod func(*Options)) (*Client, *logRecorder) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	rec := &logRecorder{}
	o := Options{Config: Config{APIKey: "sk-test-secret-key", BaseURL: srv.URL}, Version: "1.2.3", Retry: fastRetry, Log: rec.log}
	if mod != nil {
		mod(&o)
	}
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c, rec
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func sandboxJSON(id string) map[string]any {
	return map[string]any{
		"id": id, "name": "n", "dockerImage": "img", "cpuCores": 1, "memoryGB": 1, "diskSizeGB": 5,
		"diskMountPath": "/sandbox-workspace", "gpuCount": 0, "vm": true, "status": "PENDING",
		"timeoutMinutes": 60, "labels": []string{}, "createdAt": "2026-07-17T00:00:00Z", "updatedAt": "2026-07-17T00:00:00Z",
	}
}

func TestNewRequiresAPIKey(t *testing.T) {
	if _, err := New(Options{}); !errors.Is(err, ErrMissingAPIKey) {
		t.Fatalf("err = %v, want ErrMissingAPIKey", err)
	}
}

func TestRequestHeaders(t *testing.T) {
	var got http.Header
	var path string
	c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, path = r.Header.Clone(), r.URL.Path
		writeJSON(w, 200, sandboxJSON("sbx-1"))
	}), nil)
	if _, err := c.GetSandbox(context.Background(), "sbx-1"); err != nil {
		t.Fatal(err)
	}
	if path != "/api/v1/sandbox/sbx-1" {
		t.Errorf("path = %q", path)
	}
	if got.Get("Authorization") != "Bearer sk-test-secret-key" {
		t.Errorf("Authorization = %q", got.Get("Authorization"))
	}
	if got.Get("User-Agent") != "terraform-provider-prime/1.2.3" {
		t.Errorf("User-Agent = %q", got.Get("User-Agent"))
	}
}

// A create that fails with 503 is retried with the same idempotency key, so
// a server that deduplicates on the key creates exactly one sandbox.
func TestCreateRetriedAfter503ReusesIdempotencyKey(t *testing.T) {
	var mu sync.Mutex
	keys := []string{}
	created := map[string]string{} // idempotency key -> sandbox id
	c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		key, _ := body["idempotency_key"].(string)
		mu.Lock()
		defer mu.Unlock()
		keys = append(keys, key)
		id, ok := created[key]
		if !ok {
			id = fmt.Sprintf("sbx-%d", len(created)+1)
			created[key] = id
		}
		if len(keys) == 1 {
			// The server acted, then the answer was lost.
			writeJSON(w, http.StatusServiceUnavailable, map[string]any{"detail": "upstream unavailable"})
			return
		}
		writeJSON(w, 200, sandboxJSON(id))
	}), nil)
	sb, err := c.CreateSandbox(context.Background(), CreateSandboxRequest{Name: "n", DockerImage: "img"})
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 {
		t.Fatalf("requests = %d, want 2", len(keys))
	}
	if keys[0] == "" || keys[0] != keys[1] || len(keys[0]) != 32 {
		t.Fatalf("idempotency keys = %q, want one 32-hex key reused", keys)
	}
	if len(created) != 1 || sb.ID != "sbx-1" {
		t.Fatalf("created %d sandboxes (got id %s), want exactly one", len(created), sb.ID)
	}
	// A second logical create gets a fresh key.
	if _, err := c.CreateSandbox(context.Background(), CreateSandboxRequest{Name: "n", DockerImage: "img"}); err != nil {
		t.Fatal(err)
	}
	if keys[2] == keys[0] {
		t.Fatal("a second create reused the first create's idempotency key")
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	var mu sync.Mutex
	var times []time.Time
	c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		times = append(times, time.Now())
		n := len(times)
		mu.Unlock()
		if n == 1 {
			w.Header().Set("Retry-After", "1")
			writeJSON(w, http.StatusTooManyRequests, map[string]any{"detail": "slow down"})
			return
		}
		writeJSON(w, 200, sandboxJSON("sbx-1"))
	}), nil)
	if _, err := c.GetSandbox(context.Background(), "sbx-1"); err != nil {
		t.Fatal(err)
	}
	if len(times) != 2 {
		t.Fatalf("requests = %d, want 2", len(times))
	}
	if gap := times[1].Sub(times[0]); gap < time.Second {
		t.Fatalf("retried after %s, want at least the Retry-After of 1s", gap)
	}
}

// One 429 pauses every caller sharing the throttle, not only the one that
// received it.
// A 429 on a route with account-wide limits (create: 15,000 a minute per
// key) holds every caller; per-sandbox routes are TestPerSandbox429DoesNotPauseTheFleet's.
func TestRateLimitPausesTheWholeFleet(t *testing.T) {
	var mu sync.Mutex
	var firstThrottled time.Time
	var otherAt time.Time
	var n atomic.Int32
	throttle := NewThrottle(ThrottleOptions{})
	c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/api/v1/sandbox" && n.Add(1) == 1 {
			mu.Lock()
			firstThrottled = time.Now()
			mu.Unlock()
			w.Header().Set("Retry-After", "1")
			writeJSON(w, http.StatusTooManyRequests, map[string]any{"detail": "slow down"})
			return
		}
		if strings.HasSuffix(r.URL.Path, "/b") {
			mu.Lock()
			otherAt = time.Now()
			mu.Unlock()
		}
		writeJSON(w, 200, sandboxJSON("x"))
	}), func(o *Options) { o.Throttle = throttle })
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if _, err := c.CreateSandbox(context.Background(), CreateSandboxRequest{Name: "a", DockerImage: "img"}); err != nil {
			t.Error(err)
		}
	}()
	// Wait until the client has taken in the 429 and paused the fleet.
	if err := Poll(context.Background(), Backoff{Initial: time.Millisecond}, func(context.Context) (bool, error) {
		throttle.mu.Lock()
		defer throttle.mu.Unlock()
		return !throttle.pauseUntil.IsZero(), nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetSandbox(context.Background(), "b"); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if gap := otherAt.Sub(firstThrottled); gap < 900*time.Millisecond {
		t.Fatalf("another caller's request went out %s after the 429, want it held for the Retry-After", gap)
	}
}

func TestCancelledContextStopsBackoffAtOnce(t *testing.T) {
	var calls atomic.Int32
	c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		// A pause no test run outlasts: only the cancellation can end it.
		w.Header().Set("Retry-After", "3600")
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"detail": "down"})
	}), nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := c.GetSandbox(ctx, "sbx-1"); done <- err }()
	// Wait until the first answer arrived and the client is backing off.
	if err := Poll(context.Background(), Backoff{Initial: time.Millisecond}, func(context.Context) (bool, error) {
		return calls.Load() >= 1, nil
	}); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	case <-testContext(t).Done():
		t.Fatal("the cancelled request kept backing off through the hour-long Retry-After")
	}
	if calls.Load() != 1 {
		t.Fatalf("requests = %d, want 1", calls.Load())
	}
}

func TestRetryClasses(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		call      func(*Client) error
		wantCalls int32
	}{
		{"GET retried on 502", 502, func(c *Client) error { _, err := c.GetSandbox(context.Background(), "x"); return err }, 3},
		{"PUT retried on 504", 504, func(c *Client) error {
			_, err := c.PutEgressPolicy(context.Background(), "x", EgressPolicy{Allowlist: []string{"a.com"}})
			return err
		}, 3},
		{"DELETE retried on 503", 503, func(c *Client) error { return c.DeleteSandbox(context.Background(), "x") }, 3},
		{"GET not retried on 500", 500, func(c *Client) error { _, err := c.GetSandbox(context.Background(), "x"); return err }, 1},
		{"GET not retried on 422", 422, func(c *Client) error { _, err := c.GetSandbox(context.Background(), "x"); return err }, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				writeJSON(w, tt.status, map[string]any{"detail": "nope"})
			}), func(o *Options) { o.MaxRetries = 2 })
			err := tt.call(c)
			if StatusCodeOf(err) != tt.status {
				t.Fatalf("err = %v, want HTTP %d", err, tt.status)
			}
			if calls.Load() != tt.wantCalls {
				t.Fatalf("requests = %d, want %d", calls.Load(), tt.wantCalls)
			}
		})
	}
}

// A POST without an idempotency guarantee is never retried on a status: the
// server may have acted.
func TestPlainPostNotRetriedOnStatus(t *testing.T) {
	var calls atomic.Int32
	c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		writeJSON(w, 503, map[string]any{"detail": "down"})
	}), nil)
	err := c.do(context.Background(), call{method: http.MethodPost, path: "/sandbox/x/expose", body: map[string]any{"port": 80}, retry: retryUnsent})
	if StatusCodeOf(err) != 503 || calls.Load() != 1 {
		t.Fatalf("err = %v after %d requests, want one 503", err, calls.Load())
	}
}

func TestConnectionResetRetriedForIdempotentOnly(t *testing.T) {
	var calls atomic.Int32
	c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			hj, _ := w.(http.Hijacker)
			conn, _, _ := hj.Hijack()
			_ = conn.Close() // drop the connection without an answer
			return
		}
		writeJSON(w, 200, sandboxJSON("x"))
	}), nil)
	if _, err := c.GetSandbox(context.Background(), "x"); err != nil {
		t.Fatalf("GET after a dropped connection: %v", err)
	}
	if calls.Load() != 2 {
		t.Fatalf("requests = %d, want 2", calls.Load())
	}
}

func TestTypedErrors(t *testing.T) {
	tests := []struct {
		status int
		body   string
		want   error
		detail string
	}{
		{404, `{"detail":"Sandbox not found"}`, ErrNotFound, "Sandbox not found"},
		{401, `{"detail":"bad key"}`, ErrUnauthorized, "bad key"},
		{402, `{}`, ErrPaymentRequired, ""},
		{422, `{"detail":[{"loc":["body","name"],"msg":"field required"}]}`, ErrValidation, "name: field required"},
		{429, `{"detail":"slow"}`, ErrRateLimited, "slow"},
		{500, `oops`, ErrServer, "oops"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", "7")
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.body)
			}), func(o *Options) { o.MaxRetries = -1 })
			_, err := c.GetSandbox(context.Background(), "x")
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			var apiErr *APIError
			if !errors.As(err, &apiErr) || apiErr.Detail != tt.detail {
				t.Fatalf("detail = %q, want %q", apiErr.Detail, tt.detail)
			}
			if tt.status == 429 && apiErr.RetryAfter != 7*time.Second {
				t.Fatalf("RetryAfter = %s, want 7s", apiErr.RetryAfter)
			}
		})
	}
}

// Neither the API key, the gateway token nor secret values reach a debug
// log, even when the server echoes them back in an error.
func TestDebugLogsAreRedacted(t *testing.T) {
	const secret = "hunter2-very-secret"
	c, rec := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.HasSuffix(r.URL.Path, "/auth") {
			writeJSON(w, 200, map[string]any{"gateway_url": "http://g", "token": "gw-token-123456", "user_ns": "u", "job_id": "j", "expires_at": "2030-01-01T00:00:00Z"})
			return
		}
		// Echo the request (secrets and all) in an error detail.
		writeJSON(w, 422, map[string]any{"detail": "bad request: " + string(body) + " auth=" + r.Header.Get("Authorization")})
	}), nil)
	_, err := c.CreateSandbox(context.Background(), CreateSandboxRequest{
		Name: "n", DockerImage: "img", Secrets: map[string]string{"API_TOKEN": secret},
	})
	if err == nil {
		t.Fatal("expected an error")
	}
	// The error a user sees is scrubbed too, not only the logs.
	if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "sk-test-secret-key") {
		t.Errorf("the returned error leaks a secret: %v", err)
	}
	if _, err := c.CreateGatewayAuth(context.Background(), "x"); err != nil {
		t.Fatal(err)
	}
	logs := rec.all()
	if logs == "" {
		t.Fatal("no debug records")
	}
	for _, leaked := range []string{secret, "sk-test-secret-key", "gw-token-123456"} {
		if strings.Contains(logs, leaked) {
			t.Errorf("debug log contains %q:\n%s", leaked, logs)
		}
	}
	if !strings.Contains(logs, `API_TOKEN`) {
		t.Errorf("redaction removed too much (the secret's name should stay):\n%s", logs)
	}
}

func TestBatchStatusFallsBackToGetOn404(t *testing.T) {
	var batchCalls, getCalls atomic.Int32
	c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "status:batchGet"):
			batchCalls.Add(1)
			writeJSON(w, 404, map[string]any{"detail": "Not Found"})
		case strings.HasSuffix(r.URL.Path, "/gone"):
			getCalls.Add(1)
			writeJSON(w, 404, map[string]any{"detail": "Sandbox not found"})
		default:
			getCalls.Add(1)
			sb := sandboxJSON("a")
			sb["status"] = "RUNNING"
			writeJSON(w, 200, sb)
		}
	}), nil)
	for range 2 {
		resp, err := c.BatchStatus(context.Background(), []string{"a", "gone"})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Statuses) != 1 || resp.Statuses[0].Status != StatusRunning || len(resp.Errors) != 1 || resp.Errors[0].Code != BatchCodeNotFound {
			t.Fatalf("resp = %+v", resp)
		}
	}
	if batchCalls.Load() != 1 {
		t.Fatalf("batch calls = %d, want 1 (the client remembers the endpoint is unsupported)", batchCalls.Load())
	}
	if getCalls.Load() != 4 {
		t.Fatalf("GET calls = %d, want 4", getCalls.Load())
	}
}

func TestBatchStatusRejectsBadIDLists(t *testing.T) {
	c, _ := newTestClient(t, http.NotFoundHandler(), nil)
	ids := make([]string, 101)
	for i := range ids {
		ids[i] = fmt.Sprint(i)
	}
	for _, bad := range [][]string{nil, ids, {"a", "a"}} {
		if _, err := c.BatchStatus(context.Background(), bad); err == nil {
			t.Errorf("BatchStatus(%d ids) accepted", len(bad))
		}
	}
}

// A fleet's read is one round trip: every chunk of 100 ids is in flight at
// once (the handler holds each request until all three arrived, so reading
// chunk by chunk would time out), and the answers merge in id order.
func TestBatchStatusAllSendsChunksTogether(t *testing.T) {
	ids := make([]string, 250)
	for i := range ids {
		ids[i] = fmt.Sprintf("sb-%03d", i)
	}
	ids[7] = "gone-7"
	h, requests := heldUntilTogether(3, &fakeFleet{polls: 1, seen: map[string]int{}})
	c, _ := newTestClient(t, h, nil)
	resp, err := c.BatchStatusAll(context.Background(), ids)
	if err != nil {
		t.Fatal(err)
	}
	if n := requests.Load(); n != 3 {
		t.Fatalf("requests = %d, want 3", n)
	}
	if len(resp.Statuses) != 249 || len(resp.Errors) != 1 || resp.Errors[0].SandboxID != "gone-7" {
		t.Fatalf("statuses %d, errors %+v", len(resp.Statuses), resp.Errors)
	}
	if resp.Statuses[0].SandboxID != "sb-000" || resp.Statuses[248].SandboxID != "sb-249" {
		t.Fatalf("answers out of order: first %s, last %s", resp.Statuses[0].SandboxID, resp.Statuses[248].SandboxID)
	}
}

// One failed chunk fails the read: a fleet never drops members it could
// not see.
func TestBatchStatusAllFailsWhenAChunkFails(t *testing.T) {
	c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req BatchStatusRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		if req.SandboxIDs[0] == "sb-100" {
			writeJSON(w, 403, map[string]any{"detail": "forbidden"})
			return
		}
		writeJSON(w, 200, BatchStatusResponse{Statuses: []SandboxStatus{}, Errors: []SandboxStatusError{}})
	}), nil)
	ids := make([]string, 150)
	for i := range ids {
		ids[i] = fmt.Sprintf("sb-%03d", i)
	}
	if _, err := c.BatchStatusAll(context.Background(), ids); err == nil {
		t.Fatal("a failed chunk was ignored")
	}
	if resp, err := c.BatchStatusAll(context.Background(), nil); err != nil || len(resp.Statuses)+len(resp.Errors) != 0 {
		t.Fatalf("no ids: %+v, %v", resp, err)
	}
}

func TestPutEgressPolicyValidatesBeforeSending(t *testing.T) {
	var calls atomic.Int32
	c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls.Add(1) }), nil)
	for _, p := range []EgressPolicy{
		{},
		{Allowlist: []string{}, Denylist: []string{}},
		{Allowlist: []string{"a b.com"}},
	} {
		if _, err := c.PutEgressPolicy(context.Background(), "x", p); err == nil {
			t.Errorf("PutEgressPolicy(%+v) accepted", p)
		}
	}
	if calls.Load() != 0 {
		t.Fatalf("%d requests sent for invalid policies", calls.Load())
	}
}

func TestEgressStatusRequiresGenerationKeys(t *testing.T) {
	var s EgressPolicyStatus
	if err := json.Unmarshal([]byte(`{"policy":{"allowlist":[]}}`), &s); err == nil {
		t.Fatal("a status without generation keys was accepted")
	}
	if err := json.Unmarshal([]byte(`{"policy":{"allowlist":["a.com"],"denylist":null},"generation":2,"applied_generation":1,"applied":false}`), &s); err != nil {
		t.Fatal(err)
	}
	if s.Enforces(2) || !(EgressPolicyStatus{Applied: true, AppliedGeneration: 2}).Enforces(2) {
		t.Fatal("Enforces is wrong")
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"": 0, "3": 3 * time.Second, "0.5": 500 * time.Millisecond, "-1": 0, "soon": 0,
		"Thu, 01 Jan 2026 00:00:10 GMT": 10 * time.Second,
	} {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestStartCommandUnion(t *testing.T) {
	for _, tc := range []struct {
		json string
		want StartCommand
	}{
		{`"tail -f /dev/null"`, *ShellCommand("tail -f /dev/null")},
		{`{"executable":"/bin/x","args":["a"]}`, *ArgvCommand("/bin/x", "a")},
	} {
		var got StartCommand
		if err := json.Unmarshal([]byte(tc.json), &got); err != nil {
			t.Fatal(err)
		}
		out, _ := json.Marshal(got)
		back, _ := json.Marshal(tc.want)
		if string(out) != string(back) {
			t.Errorf("round trip of %s = %s, want %s", tc.json, out, back)
		}
	}
	var sc StartCommand
	if err := json.Unmarshal([]byte(`{"executable":"/bin/x","args":[],"extra":1}`), &sc); err == nil {
		t.Error("unknown keys in the argv object were accepted")
	}
	out, _ := json.Marshal(ArgvCommand("/bin/x"))
	if string(out) != `{"executable":"/bin/x","args":[]}` {
		t.Errorf("args must always be sent: %s", out)
	}
}

func TestSandboxAcceptsSnakeCaseEgressLists(t *testing.T) {
	var sb Sandbox
	if err := json.Unmarshal([]byte(`{"id":"a","network_allowlist":["x.com"],"labels":null}`), &sb); err != nil {
		t.Fatal(err)
	}
	if len(sb.NetworkAllowlist) != 1 || sb.Labels == nil {
		t.Fatalf("sb = %+v", sb)
	}
}

func TestCreateRequestWireFormat(t *testing.T) {
	b, _ := json.Marshal(CreateSandboxRequest{Name: "n", DockerImage: "i", Labels: []string{}, NetworkAllowlist: &[]string{}, IdempotencyKey: "k"})
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	for _, k := range []string{"name", "docker_image", "labels", "idempotency_key", "network_allowlist"} {
		if _, ok := m[k]; !ok {
			t.Errorf("key %q missing from %s", k, b)
		}
	}
	for _, k := range []string{"cpu_cores", "memory_gb", "disk_size_gb", "vm", "guaranteed", "registry_credentials_id", "arch", "network_denylist", "start_command", "team_id"} {
		if _, ok := m[k]; ok {
			t.Errorf("unset key %q sent: %s", k, b)
		}
	}
}
