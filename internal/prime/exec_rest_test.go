package prime

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// Commands on container sandboxes go through REST /exec with the SDK's body.
func TestRESTExecSuccessAndWireShape(t *testing.T) {
	g := newFakeGateway(t)
	g.add("ct-1", &fakeSandbox{})
	g.onExec = func(n int, _ execBody) (int, any) {
		if n == 0 {
			return 200, map[string]any{"stdout": "hello\n", "stderr": "warn\n", "exit_code": 3}
		}
		return 200, map[string]any{"stdout": "", "stderr": "", "exit_code": 0}
	}
	c, _ := g.client(nil)
	res, err := c.Exec(context.Background(), "ct-1", ExecRequest{
		Command: "echo hello; echo warn >&2; exit 3", WorkingDir: "/tmp", Env: map[string]string{"A": "1"},
		SensitiveEnv: map[string]string{"B": "2"}, Timeout: 1500 * time.Millisecond,
	})
	if err != nil {
		t.Fatalf("a non-zero exit is a result, not an error: %v", err)
	}
	if *res != (ExecResult{ExitCode: 3, Stdout: "hello\n", Stderr: "warn\n"}) {
		t.Errorf("result = %+v", res)
	}
	if _, err := c.Exec(context.Background(), "ct-1", ExecRequest{Command: "true"}); err != nil {
		t.Fatal(err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	b := g.execs[0]
	// The SDK's body: every key present, timeout in whole seconds (rounded up).
	if b.Command != "echo hello; echo warn >&2; exit 3" || b.WorkingDir == nil || *b.WorkingDir != "/tmp" || b.SandboxID != "ct-1" || b.Timeout != 2 {
		t.Errorf("body = %+v", b)
	}
	if len(b.Env) != 2 || b.Env["A"] != "1" || b.Env["B"] != "2" {
		t.Errorf("env = %v, want Env and SensitiveEnv merged", b.Env)
	}
	if b := g.execs[1]; b.WorkingDir != nil || b.Timeout != 300 || b.Env == nil || len(b.Env) != 0 {
		t.Errorf("defaults: working_dir %v (want null), timeout %d (want 300), env %#v (want {})", b.WorkingDir, b.Timeout, b.Env)
	}
	if g.counts["Start"] != 0 {
		t.Error("a container command used Connect")
	}
}

func TestGatewayTokenCached(t *testing.T) {
	g := newFakeGateway(t)
	g.add("ct-1", &fakeSandbox{})
	g.add("ct-2", &fakeSandbox{})
	c, _ := g.client(nil)
	for range 2 {
		if _, err := c.Exec(context.Background(), "ct-1", ExecRequest{Command: "echo"}); err != nil {
			t.Fatal(err)
		}
	}
	// Concurrent commands, first uses included, share one token fetch.
	var wg sync.WaitGroup
	for range 8 {
		for _, id := range []string{"ct-1", "ct-2"} {
			wg.Go(func() {
				if _, err := c.Exec(context.Background(), id, ExecRequest{Command: "echo"}); err != nil {
					t.Error(err)
				}
			})
		}
	}
	wg.Wait()
	if n := g.count("auth"); n != 2 {
		t.Errorf("auth called %d times for 18 commands on 2 sandboxes, want 2 (one per sandbox)", n)
	}
	if n := g.count("get"); n != 2 {
		t.Errorf("the kind was read %d times, want once per sandbox (concurrent first uses share it)", n)
	}
}

func TestGatewayTokenRefreshedNearExpiry(t *testing.T) {
	// A token that lives less than the refresh margin is never reused.
	g := newFakeGateway(t)
	g.add("ct-1", &fakeSandbox{})
	g.tokenTTL = 20 * time.Second
	c, _ := g.client(nil)
	for range 2 {
		if _, err := c.Exec(context.Background(), "ct-1", ExecRequest{Command: "echo"}); err != nil {
			t.Fatal(err)
		}
	}
	if n := g.count("auth"); n != 2 {
		t.Errorf("auth called %d times, want 2", n)
	}
}

// A gateway 401 (the token expired or was revoked early) is retried once
// with a fresh token: the command was refused before it ran.
func TestGatewayTokenRefreshedOn401(t *testing.T) {
	g := newFakeGateway(t)
	g.add("ct-1", &fakeSandbox{})
	c, _ := g.client(nil)
	if _, err := c.Exec(context.Background(), "ct-1", ExecRequest{Command: "one"}); err != nil {
		t.Fatal(err)
	}
	g.revoke(g.tokens[0])
	if _, err := c.Exec(context.Background(), "ct-1", ExecRequest{Command: "two"}); err != nil {
		t.Fatal(err)
	}
	g.mu.Lock()
	used, tokens := g.used, g.tokens
	g.mu.Unlock()
	if len(tokens) != 2 || len(used) != 3 || used[1] != tokens[0] || used[2] != tokens[1] {
		t.Fatalf("tokens %v, presented %v; want the retry to use a fresh token", tokens, used)
	}
	// A fresh token refused too: no third attempt.
	g.mu.Lock()
	g.refuseAll = true
	g.mu.Unlock()
	_, err := c.Exec(context.Background(), "ct-1", ExecRequest{Command: "three"})
	if !errors.Is(err, ErrUnauthorized) || g.count("exec") != 5 {
		t.Fatalf("err = %v after %d exec requests; want a 401 after one re-auth (5 in all)", err, g.count("exec"))
	}
}

func TestRESTExecGatewayErrors(t *testing.T) {
	html524 := "<!DOCTYPE html><html><title>A timeout occurred</title></html>"
	tests := []struct {
		name      string
		status    string // control plane
		errType   string
		answers   []int // exec statuses in order (the last repeats)
		body      any
		is, isNot []error
		failed    *SandboxFailedError
		code      int
		msg       []string
		notMsg    []string
		execs     int
	}{
		{name: "502 sandbox_not_found: gone from its node", status: StatusRunning, answers: []int{502},
			body:   map[string]any{"error": "sandbox_not_found", "message": "The sandbox was not found", "code": 502},
			is:     []error{ErrSandboxNotRunning},
			failed: &SandboxFailedError{Status: StatusTerminated, ErrorType: "SANDBOX_NOT_FOUND", ControlPlaneStatus: StatusRunning, GatewayNotFound: true},
			msg:    []string{`"ls /"`, "TERMINATED"}, execs: 1},
		{name: "502 other: not mapped to not running", status: StatusRunning, answers: []int{502},
			body:  map[string]any{"error": "gateway_error", "message": "Failed to route request to sandbox", "code": 502},
			isNot: []error{ErrSandboxNotRunning}, code: 502, msg: []string{"Failed to route"}, execs: 1},
		{name: "503 is never retried: the command may have run", status: StatusRunning, answers: []int{503},
			body: map[string]any{"error": "gateway_error", "message": "Failed to route request to sandbox", "code": 503},
			code: 503, msg: []string{"Failed to route"}, execs: 1},
		{name: "409 on an errored sandbox", status: StatusError, errType: "IMAGE_PULL_FAILED", answers: []int{409},
			body: map[string]any{"error": "conflict"}, is: []error{ErrSandboxNotRunning},
			failed: &SandboxFailedError{Status: StatusError, ErrorType: "IMAGE_PULL_FAILED", ControlPlaneStatus: StatusError}, execs: 1},
		{name: "409 on a PENDING sandbox is not retried", status: StatusPending, answers: []int{409},
			body: map[string]any{"error": "conflict"}, is: []error{ErrSandboxNotRunning},
			failed: &SandboxFailedError{Status: StatusPending, ControlPlaneStatus: StatusPending}, execs: 1},
		{name: "409 while RUNNING is retried", status: StatusRunning, answers: []int{409, 409, 200},
			body: map[string]any{"error": "conflict"}, execs: 3},
		{name: "409 while RUNNING gives up", status: StatusRunning, answers: []int{409},
			body: map[string]any{"error": "conflict"}, code: 409, msg: []string{"after 4 attempts"}, execs: 4},
		{name: "408 is a command timeout", status: StatusRunning, answers: []int{408}, body: map[string]any{"error": "timeout"},
			is: []error{ErrExecTimeout}, execs: 1},
		{name: "408 on a TERMINATED sandbox", status: StatusTerminated, answers: []int{408}, body: map[string]any{"error": "timeout"},
			is: []error{ErrSandboxNotRunning}, isNot: []error{ErrExecTimeout}, execs: 1},
		{name: "524: the edge proxy cut the call", status: StatusRunning, answers: []int{524}, body: html524,
			is: []error{ErrCommandMayStillRun, ErrServer}, code: 524,
			msg: []string{"edge proxy", "may still be running", "HTTP 524"}, notMsg: []string{"<html"}, execs: 1},
	}
	saved := execConflictBackoff
	execConflictBackoff = Backoff{Initial: time.Millisecond}
	t.Cleanup(func() { execConflictBackoff = saved })
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newFakeGateway(t)
			g.add("ct-1", &fakeSandbox{status: tt.status, errType: tt.errType})
			g.onExec = func(n int, _ execBody) (int, any) {
				st := tt.answers[min(n, len(tt.answers)-1)]
				if st == 200 {
					return 200, map[string]any{"stdout": "", "stderr": "", "exit_code": 0}
				}
				return st, tt.body
			}
			c, _ := g.client(nil)
			_, err := c.Exec(context.Background(), "ct-1", ExecRequest{Command: "ls /"})
			if tt.answers[len(tt.answers)-1] == 200 {
				if err != nil {
					t.Fatal(err)
				}
			} else if err == nil {
				t.Fatal("no error")
			}
			for _, target := range tt.is {
				if !errors.Is(err, target) {
					t.Errorf("err = %v; want it to wrap %v", err, target)
				}
			}
			for _, target := range tt.isNot {
				if errors.Is(err, target) {
					t.Errorf("err = %v; must not wrap %v", err, target)
				}
			}
			if tt.code != 0 && StatusCodeOf(err) != tt.code {
				t.Errorf("status = %d, want %d (err %v)", StatusCodeOf(err), tt.code, err)
			}
			if tt.failed != nil {
				var f *SandboxFailedError
				if !errors.As(err, &f) {
					t.Fatalf("err = %v, want a *SandboxFailedError", err)
				}
				tt.failed.SandboxID, tt.failed.ErrorMessage = "ct-1", f.ErrorMessage
				if *f != *tt.failed {
					t.Errorf("failed = %+v, want %+v", *f, *tt.failed)
				}
			}
			for _, m := range tt.msg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("message %q lacks %q", err, m)
				}
			}
			for _, m := range tt.notMsg {
				if strings.Contains(err.Error(), m) {
					t.Errorf("message %q contains %q", err, m)
				}
			}
			if n := g.count("exec"); n != tt.execs {
				t.Errorf("%d exec requests, want %d", n, tt.execs)
			}
		})
	}
}

// A sandbox the gateway reports gone loses its cached token.
func TestRESTExecVanishedSandboxDropsToken(t *testing.T) {
	g := newFakeGateway(t)
	g.add("ct-1", &fakeSandbox{})
	c, _ := g.client(nil)
	if _, err := c.Exec(context.Background(), "ct-1", ExecRequest{Command: "echo"}); err != nil {
		t.Fatal(err)
	}
	g.onExec = func(int, execBody) (int, any) { return 502, map[string]any{"error": "sandbox_not_found"} }
	g.setStatus("ct-1", StatusTerminated, "", "")
	for range 2 {
		if _, err := c.Exec(context.Background(), "ct-1", ExecRequest{Command: "echo"}); !errors.Is(err, ErrSandboxNotRunning) {
			t.Fatalf("err = %v", err)
		}
	}
	// The first command fetched a token, the second used it and dropped
	// it, the third had to fetch a new one.
	if n := g.count("auth"); n != 2 {
		t.Fatalf("auth %d times, want 2 (the token is dropped with the sandbox)", n)
	}
}

func TestExecUnknownSandbox(t *testing.T) {
	g := newFakeGateway(t)
	c, _ := g.client(nil)
	_, err := c.Exec(context.Background(), "nope", ExecRequest{Command: "echo"})
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("err = %v, want ErrNotFound", err)
	}
}

// The per-attempt REST timeout must not cut a command allowed to run longer.
func TestRESTExecOutlivesRequestTimeout(t *testing.T) {
	g := newFakeGateway(t)
	g.add("ct-1", &fakeSandbox{})
	g.onExec = func(int, execBody) (int, any) {
		time.Sleep(400 * time.Millisecond) // the command runs longer than RequestTimeout
		return 200, map[string]any{"stdout": "done\n", "stderr": "", "exit_code": 0}
	}
	c, _ := g.client(func(o *Options) { o.RequestTimeout = 100 * time.Millisecond })
	res, err := c.Exec(context.Background(), "ct-1", ExecRequest{Command: "sleep 0.4; echo done", Timeout: 2 * time.Second})
	if err != nil || res.Stdout != "done\n" {
		t.Fatalf("res %+v, err %v", res, err)
	}
}

// Tokens, the API key, secret values and (when marked sensitive) output stay
// out of the debug log; secret values stay out of returned errors, even when
// the gateway echoes them.
func TestRESTExecLogsAndSecrets(t *testing.T) {
	const secret, plain, output = "s3cret-value-123", "plain-value-456", "output-text-789"
	g := newFakeGateway(t)
	g.add("ct-1", &fakeSandbox{})
	g.onExec = func(n int, b execBody) (int, any) {
		if n == 2 {
			return 500, map[string]any{"error": "internal", "message": "failed: TOKEN=" + b.Env["TOKEN"]}
		}
		return 200, map[string]any{"stdout": output, "stderr": "", "exit_code": 0}
	}
	c, rec := g.client(nil)
	req := ExecRequest{Command: "run", Env: map[string]string{"PLAIN": plain}, SensitiveEnv: map[string]string{"TOKEN": secret}}
	if _, err := c.Exec(context.Background(), "ct-1", req); err != nil {
		t.Fatal(err)
	}
	// Output is logged unless it is marked sensitive.
	if !strings.Contains(rec.all(), output) {
		t.Fatalf("output not logged without SensitiveOutput:\n%s", rec.all())
	}
	rec.mu.Lock()
	rec.records = nil
	rec.mu.Unlock()
	req.SensitiveOutput = true
	if _, err := c.Exec(context.Background(), "ct-1", req); err != nil {
		t.Fatal(err)
	}
	_, err := c.Exec(context.Background(), "ct-1", req)
	if err == nil || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "TOKEN=***") {
		t.Fatalf("err = %v; want the echoed secret scrubbed", err)
	}
	logs := rec.all()
	if !strings.Contains(logs, `"response_body":"(withheld)"`) || !strings.Contains(logs, "PLAIN") {
		t.Fatalf("want the answer withheld and the variable names kept:\n%s", logs)
	}
	g.mu.Lock()
	leaks := append([]string{secret, plain, output, "sk-test-secret-key"}, g.tokens...)
	g.mu.Unlock()
	for _, leak := range leaks {
		if strings.Contains(logs, leak) {
			t.Errorf("the debug log contains %q:\n%s", leak, logs)
		}
	}
}

// A container sandbox whose kind cannot be read yields the read's error.
func TestExecKindLookupFailure(t *testing.T) {
	c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusForbidden, map[string]any{"detail": "not yours"})
	}), nil)
	_, err := c.Exec(context.Background(), "x", ExecRequest{Command: "echo", SensitiveEnv: map[string]string{"K": "value-1234"}})
	if StatusCodeOf(err) != http.StatusForbidden || !strings.Contains(err.Error(), "reading the sandbox's kind") {
		t.Fatalf("err = %v", err)
	}
}
