package prime_test

// External test package: primemock imports prime, so an internal test could
// not import the mock.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

const authRoute = "POST /api/v1/sandbox/{id}/auth"
const execRoute = "POST /gateway/{user_ns}/{job_id}/exec"

// gatewayEnv is a mock, a client on it, and a record of what reached the
// gateway (tokens and bodies), captured in front of the mock.
type gatewayEnv struct {
	t      *testing.T
	mock   *primemock.Server
	ts     *httptest.Server
	client *prime.Client

	mu     sync.Mutex
	tokens []string
	bodies []map[string]any
	logs   []string
}

func newGatewayEnv(t *testing.T, o primemock.Options, co prime.Options) *gatewayEnv {
	t.Helper()
	if o.BootDelay == 0 {
		o.BootDelay = 10 * time.Millisecond
	}
	env := &gatewayEnv{t: t, mock: primemock.New(o)}
	env.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/gateway/") {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var m map[string]any
			_ = json.Unmarshal(body, &m)
			env.mu.Lock()
			env.tokens = append(env.tokens, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
			env.bodies = append(env.bodies, m)
			env.mu.Unlock()
		}
		env.mock.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		env.ts.Close()
		env.mock.Close()
	})
	co.Config = prime.Config{APIKey: "test-api-key", BaseURL: env.ts.URL}
	co.Retry = prime.Backoff{Initial: time.Millisecond, Factor: 2, Max: 10 * time.Millisecond}
	co.Log = func(_ context.Context, msg string, fields map[string]any) {
		b, _ := json.Marshal(fields)
		env.mu.Lock()
		env.logs = append(env.logs, msg+" "+string(b))
		env.mu.Unlock()
	}
	c, err := prime.New(co)
	if err != nil {
		t.Fatal(err)
	}
	env.client = c
	return env
}

// running creates a sandbox through the client and waits for RUNNING.
func (e *gatewayEnv) running(vm bool) string {
	e.t.Helper()
	sb, err := e.client.CreateSandbox(context.Background(), prime.CreateSandboxRequest{Name: "gw", DockerImage: "img", VM: &vm})
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := e.mock.WaitForEvent(ctx, func(ev primemock.Event) bool {
		return ev.Type == primemock.EventSandboxRunning && ev.SandboxID == sb.ID
	}); err != nil {
		e.t.Fatal(err)
	}
	return sb.ID
}

func (e *gatewayEnv) exec(id, cmd string) (*prime.ExecResult, error) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return e.client.Exec(ctx, id, prime.ExecRequest{Command: cmd, Timeout: 10 * time.Second})
}

func (e *gatewayEnv) requests(route string) int { return e.mock.Stats().Requests[route] }

func TestExecSuccessAndWireShape(t *testing.T) {
	env := newGatewayEnv(t, primemock.Options{}, prime.Options{})
	id := env.running(false)
	res, err := env.client.Exec(context.Background(), id, prime.ExecRequest{
		Command: "echo hello; echo warn >&2", WorkingDir: "/tmp", Env: map[string]string{"A": "1"}, Timeout: 1500 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.Stdout != "hello\n" || res.Stderr != "warn\n" {
		t.Errorf("result = %+v", res)
	}
	env.mu.Lock()
	body := env.bodies[0]
	env.mu.Unlock()
	// The SDK's body: every key present, timeout in whole seconds (rounded up).
	want := map[string]any{"command": "echo hello; echo warn >&2", "working_dir": "/tmp", "sandbox_id": id, "timeout": 2.0}
	for k, v := range want {
		if body[k] != v {
			t.Errorf("body[%s] = %#v, want %#v", k, body[k], v)
		}
	}
	if env, _ := body["env"].(map[string]any); env["A"] != "1" {
		t.Errorf("body env = %#v", body["env"])
	}

	if _, err := env.exec(id, "true"); err != nil {
		t.Fatal(err)
	}
	env.mu.Lock()
	defer env.mu.Unlock()
	if b := env.bodies[1]; b["working_dir"] != nil || b["timeout"] != 10.0 {
		t.Errorf("defaults: working_dir %#v (want null), timeout %#v", b["working_dir"], b["timeout"])
	}
	if e, ok := env.bodies[1]["env"].(map[string]any); !ok || len(e) != 0 {
		t.Errorf("env must be {} when empty, got %#v", env.bodies[1]["env"])
	}
}

func TestExecNonZeroExit(t *testing.T) {
	env := newGatewayEnv(t, primemock.Options{}, prime.Options{})
	id := env.running(true)
	res, err := env.exec(id, "echo partial; exit 3")
	if err != nil {
		t.Fatalf("a non-zero exit is a result, not an error: %v", err)
	}
	if res.ExitCode != 3 || res.Stdout != "partial\n" {
		t.Errorf("result = %+v", res)
	}
}

func TestGatewayTokenCached(t *testing.T) {
	env := newGatewayEnv(t, primemock.Options{}, prime.Options{})
	id := env.running(true)
	for range 2 {
		if _, err := env.exec(id, "echo"); err != nil {
			t.Fatal(err)
		}
	}
	// Concurrent commands share the cached token too.
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := env.exec(id, "echo"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := env.requests(authRoute); n != 1 {
		t.Errorf("auth called %d times for 10 commands, want 1", n)
	}
	// Tokens are per sandbox.
	other := env.running(true)
	if _, err := env.exec(other, "echo"); err != nil {
		t.Fatal(err)
	}
	if n := env.requests(authRoute); n != 2 {
		t.Errorf("auth called %d times, want 2 (one per sandbox)", n)
	}
}

func TestGatewayConcurrentFirstUseSharesOneAuth(t *testing.T) {
	env := newGatewayEnv(t, primemock.Options{Latency: 20 * time.Millisecond}, prime.Options{})
	id := env.running(true)
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			if _, err := env.exec(id, "echo"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := env.requests(authRoute); n != 1 {
		t.Errorf("auth called %d times by concurrent first uses, want 1", n)
	}
}

func TestGatewayTokenRefreshedNearExpiry(t *testing.T) {
	// A token that lives less than the refresh margin is never reused.
	env := newGatewayEnv(t, primemock.Options{TokenTTL: 20 * time.Second}, prime.Options{})
	id := env.running(true)
	for range 2 {
		if _, err := env.exec(id, "echo"); err != nil {
			t.Fatal(err)
		}
	}
	if n := env.requests(authRoute); n != 2 {
		t.Errorf("auth called %d times, want 2", n)
	}
}

func TestGatewayTokenRefreshedOn401(t *testing.T) {
	// The mock's clock jumps past the token's expiry while the client still
	// believes it valid: the gateway answers 401 and the client re-auths once.
	var offset atomic.Int64
	env := newGatewayEnv(t, primemock.Options{Now: func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }}, prime.Options{})
	id := env.running(true)
	if _, err := env.exec(id, "echo one"); err != nil {
		t.Fatal(err)
	}
	offset.Store(int64(time.Hour))
	res, err := env.exec(id, "echo two")
	if err != nil {
		t.Fatal(err)
	}
	if res.Stdout != "two\n" {
		t.Errorf("result = %+v", res)
	}
	if a, x := env.requests(authRoute), env.requests(execRoute); a != 2 || x != 3 {
		t.Errorf("auth %d, exec %d; want 2 and 3 (one refused, one retried)", a, x)
	}
	env.mu.Lock()
	defer env.mu.Unlock()
	if env.tokens[1] != env.tokens[0] || env.tokens[2] == env.tokens[1] {
		t.Error("the retry must use a fresh token")
	}
	// The command ran exactly twice: the 401 was refused before running.
	n := 0
	for _, e := range env.mock.Events() {
		if e.Type == primemock.EventCommandExecuted {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d commands executed, want 2", n)
	}
}

func TestExecVanishedSandbox(t *testing.T) {
	env := newGatewayEnv(t, primemock.Options{}, prime.Options{})
	id := env.running(false)
	if _, err := env.exec(id, "echo"); err != nil { // caches a token
		t.Fatal(err)
	}
	if err := env.client.DeleteSandbox(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	_, err := env.exec(id, "ls /")
	if !errors.Is(err, prime.ErrSandboxNotRunning) {
		t.Fatalf("err = %v, want ErrSandboxNotRunning", err)
	}
	var failed *prime.SandboxFailedError
	if !errors.As(err, &failed) || failed.Status != prime.StatusTerminated || failed.SandboxID != id {
		t.Errorf("err = %v (%+v)", err, failed)
	}
	if msg := err.Error(); !strings.Contains(msg, `"ls /"`) || !strings.Contains(msg, "TERMINATED") {
		t.Errorf("message = %q", msg)
	}
}

func TestExecErroredSandbox(t *testing.T) {
	env := newGatewayEnv(t, primemock.Options{}, prime.Options{})
	sb, err := env.client.CreateSandbox(context.Background(), prime.CreateSandboxRequest{Name: "e", DockerImage: "prime-mock/error"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := env.mock.WaitForEvent(ctx, func(e primemock.Event) bool { return e.Type == primemock.EventSandboxError }); err != nil {
		t.Fatal(err)
	}
	_, err = env.exec(sb.ID, "echo")
	var failed *prime.SandboxFailedError
	if !errors.Is(err, prime.ErrSandboxNotRunning) || !errors.As(err, &failed) || failed.Status != prime.StatusError || failed.ErrorType != "IMAGE_PULL_FAILED" {
		t.Errorf("err = %v", err)
	}
}

func TestExecNotRunningYet(t *testing.T) {
	env := newGatewayEnv(t, primemock.Options{BootDelay: time.Hour}, prime.Options{})
	sb, err := env.client.CreateSandbox(context.Background(), prime.CreateSandboxRequest{Name: "p", DockerImage: "img"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = env.exec(sb.ID, "echo")
	var failed *prime.SandboxFailedError
	if !errors.Is(err, prime.ErrSandboxNotRunning) || !errors.As(err, &failed) || failed.Status != prime.StatusPending {
		t.Errorf("err = %v", err)
	}
	if n := env.requests(execRoute); n != 1 {
		t.Errorf("%d exec requests; a 409 on a PENDING sandbox is not retried", n)
	}
}

func TestExecUnknownSandbox(t *testing.T) {
	env := newGatewayEnv(t, primemock.Options{}, prime.Options{})
	_, err := env.exec("nope", "echo")
	if !errors.Is(err, prime.ErrNotFound) {
		t.Errorf("err = %v, want ErrNotFound", err)
	}
}

func TestExecTimeout(t *testing.T) {
	env := newGatewayEnv(t, primemock.Options{}, prime.Options{})
	id := env.running(true)
	_, err := env.client.Exec(context.Background(), id, prime.ExecRequest{Command: "sleep 30", Timeout: time.Second})
	if !errors.Is(err, prime.ErrExecTimeout) {
		t.Errorf("err = %v, want ErrExecTimeout", err)
	}
	if n := env.requests(execRoute); n != 1 {
		t.Errorf("a timed-out command was sent %d times", n)
	}
}

func TestExecOutlivesRequestTimeout(t *testing.T) {
	// The per-attempt REST timeout must not cut a command that is allowed
	// to run longer.
	env := newGatewayEnv(t, primemock.Options{}, prime.Options{RequestTimeout: 250 * time.Millisecond})
	id := env.running(true)
	res, err := env.client.Exec(context.Background(), id, prime.ExecRequest{Command: "sleep 0.5; echo done", Timeout: 2 * time.Second})
	if err != nil || res.Stdout != "done\n" {
		t.Fatalf("res %+v, err %v", res, err)
	}
}

func TestExecNotRetriedOnServerError(t *testing.T) {
	// A 503 from the gateway may come after the command ran: never repeat.
	var calls atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/auth"):
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{
				"gateway_url": "http://" + r.Host + "/gw", "token": "tok-123456", "user_ns": "ns", "job_id": "job",
				"expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
			})
		default:
			calls.Add(1)
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"error":"gateway_error","message":"Failed to route request to sandbox","code":503}`))
		}
	}))
	defer ts.Close()
	c, err := prime.New(prime.Options{Config: prime.Config{APIKey: "k", BaseURL: ts.URL}, Retry: prime.Backoff{Initial: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Exec(context.Background(), "sbx", prime.ExecRequest{Command: "echo"})
	if prime.StatusCodeOf(err) != http.StatusServiceUnavailable || !strings.Contains(err.Error(), "Failed to route") {
		t.Errorf("err = %v", err)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("exec sent %d times, want 1", n)
	}
}

func TestGatewayTokenNeverLogged(t *testing.T) {
	var offset atomic.Int64
	env := newGatewayEnv(t, primemock.Options{Now: func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }}, prime.Options{})
	id := env.running(true)
	if _, err := env.exec(id, "echo a"); err != nil {
		t.Fatal(err)
	}
	offset.Store(int64(time.Hour)) // force a 401 and a refresh: both tokens are exercised
	if _, err := env.exec(id, "echo b; exit 1"); err != nil {
		t.Fatal(err)
	}
	_ = env.client.DeleteSandbox(context.Background(), id)
	_, _ = env.exec(id, "echo c")

	env.mu.Lock()
	defer env.mu.Unlock()
	all := strings.Join(env.logs, "\n")
	if !strings.Contains(all, "/exec") {
		t.Fatalf("no exec request was logged:\n%s", all)
	}
	for _, tok := range env.tokens {
		if tok == "" {
			continue
		}
		if strings.Contains(all, tok) {
			t.Errorf("gateway token %q appears in the debug log", tok)
		}
	}
	if strings.Contains(all, "test-api-key") {
		t.Error("the API key appears in the debug log")
	}
}
