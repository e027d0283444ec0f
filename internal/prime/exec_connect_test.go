package prime

import (
	"context"
	"errors"
	"net"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"

	pb "github.com/primeintellect/terraform-provider-prime/internal/commandsession/commandsessionpb"
)

// The stream is read as the SDK reads it, and the request is the one the
// SDK sends, with the SDK's headers.
func TestConnectExecCollectsTheStream(t *testing.T) {
	g := newFakeGateway(t)
	g.add("vm-1", &fakeSandbox{})
	g.onStart = func(_ context.Context, n int, _ *pb.StartRequest, send func(*pb.CommandSessionEvent) error) error {
		if n > 0 {
			return sendAll(send, evEnd(0))
		}
		return sendAll(send,
			evStart(42), evStdout("hel"), evPty("lo\n"), evStderr("warn"),
			evStdout("caf\xc3"), evStdout("\xa9\n"), // é split across two events
			evStdout("\xff"), evKeepalive(), evEnd(3), evEnd(7))
	}
	c, _ := g.client(nil)
	res, err := c.Exec(context.Background(), "vm-1", ExecRequest{
		Command: "echo hi", WorkingDir: "/tmp", Env: map[string]string{"A": "1", "S": "plain"},
		SensitiveEnv: map[string]string{"S": "secret-value"}, Timeout: 1500 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := &ExecResult{ExitCode: 7, Stdout: "hello\ncafé\n\uFFFD", Stderr: "warn"}
	if !reflect.DeepEqual(res, want) {
		t.Errorf("result = %#v, want %#v (the last end wins; stdout and pty join)", res, want)
	}
	if _, err := c.Exec(context.Background(), "vm-1", ExecRequest{Command: "true"}); err != nil {
		t.Fatal(err)
	}

	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.starts) != 2 {
		t.Fatalf("%d Start calls, want 2", len(g.starts))
	}
	first, second := g.starts[0], g.starts[1]
	cmd := first.GetCommand()
	if cmd.GetCmd() != "/bin/bash" || !reflect.DeepEqual(cmd.GetArgs(), []string{"-c", "echo hi"}) {
		t.Errorf("command = %q %q, want /bin/bash -c <command>", cmd.GetCmd(), cmd.GetArgs())
	}
	if !reflect.DeepEqual(cmd.GetEnvs(), map[string]string{"A": "1", "S": "secret-value"}) {
		t.Errorf("envs = %v, want Env merged with SensitiveEnv (which wins)", cmd.GetEnvs())
	}
	if cmd.Cwd == nil || *cmd.Cwd != "/tmp" || second.GetCommand().Cwd != nil {
		t.Errorf("cwd = %v then %v, want /tmp then absent", cmd.Cwd, second.GetCommand().Cwd)
	}
	for i, r := range g.starts {
		if r.Stdin == nil || *r.Stdin || r.Pty != nil || r.Tag != nil {
			t.Errorf("start %d: stdin %v (want present and false), pty %v, tag %v (want absent)", i, r.Stdin, r.Pty, r.Tag)
		}
	}
	if len(second.GetCommand().GetEnvs()) != 0 {
		t.Errorf("envs = %v, want none", second.GetCommand().GetEnvs())
	}
	for i, h := range g.startHdrs {
		checks := map[string]string{
			"Authorization": "Bearer " + g.tokens[0], "Content-Type": "application/connect+proto",
			"Connect-Protocol-Version": "1", "Content-Encoding": "", "Connect-Content-Encoding": "",
			// No compressed answers: see commandClientOptions.
			"Connect-Accept-Encoding": "",
		}
		for k, v := range checks {
			if got := h.Get(k); got != v && (v != "" || got != "identity") {
				t.Errorf("start %d: %s = %q, want %q", i, k, got, v)
			}
		}
		if p := g.startPath[i]; p != "/gw/ns/vm-1/command_session.CommandSession/Start" {
			t.Errorf("start %d: path %s", i, p)
		}
	}
	// The deadline is the command timeout, without a margin.
	for i, limits := range [][2]int{{1, 1500}, {290000, 300000}} {
		ms, err := strconv.Atoi(g.startHdrs[i].Get("Connect-Timeout-Ms"))
		if err != nil || ms < limits[0] || ms > limits[1] {
			t.Errorf("start %d: Connect-Timeout-Ms %q, want within %v", i, g.startHdrs[i].Get("Connect-Timeout-Ms"), limits)
		}
	}
	if n := g.counts["exec"]; n != 0 {
		t.Errorf("a VM command used REST /exec %d times", n)
	}
}

func TestConnectExecErrors(t *testing.T) {
	type outcome struct {
		is        []error
		isNot     []error
		code      connect.Code // 0: not checked
		failed    *SandboxFailedError
		msg       []string
		starts    int
		auths     int
		noSignals bool
	}
	fail := func(code connect.Code) func(context.Context, int, *pb.StartRequest, func(*pb.CommandSessionEvent) error) error {
		return func(context.Context, int, *pb.StartRequest, func(*pb.CommandSessionEvent) error) error {
			return connect.NewError(code, errors.New("gateway says no"))
		}
	}
	afterStart := func(code connect.Code) func(context.Context, int, *pb.StartRequest, func(*pb.CommandSessionEvent) error) error {
		return func(_ context.Context, _ int, _ *pb.StartRequest, send func(*pb.CommandSessionEvent) error) error {
			if err := sendAll(send, evStart(7), evStdout("partial")); err != nil {
				return err
			}
			return connect.NewError(code, errors.New("stream broke"))
		}
	}
	tests := []struct {
		name    string
		status  string // the control plane's (error-context) status
		errType string
		onStart func(context.Context, int, *pb.StartRequest, func(*pb.CommandSessionEvent) error) error
		want    outcome
	}{
		{"deadline_exceeded while RUNNING is a command timeout", StatusRunning, "", fail(connect.CodeDeadlineExceeded), outcome{
			is: []error{ErrExecTimeout}, isNot: []error{ErrSandboxNotRunning}, msg: []string{"timed out after 5s"}, starts: 1, noSignals: true}},
		{"deadline_exceeded on a TIMEOUT sandbox is not running", StatusTimeout, "TIMEOUT", fail(connect.CodeDeadlineExceeded), outcome{
			is: []error{ErrSandboxNotRunning}, isNot: []error{ErrExecTimeout},
			failed: &SandboxFailedError{Status: StatusTimeout, ErrorType: "TIMEOUT", ControlPlaneStatus: StatusTimeout}, starts: 1}},
		{"not_found while the control plane says RUNNING", StatusRunning, "", fail(connect.CodeNotFound), outcome{
			is:     []error{ErrSandboxNotRunning},
			failed: &SandboxFailedError{Status: StatusTerminated, ErrorType: "SANDBOX_NOT_FOUND", ControlPlaneStatus: StatusRunning, GatewayNotFound: true},
			msg:    []string{"no longer present on the runtime node", "control plane reports RUNNING"}, starts: 1}},
		{"not_found keeps the control plane's own error", StatusError, "OOM_KILLED", fail(connect.CodeNotFound), outcome{
			is:     []error{ErrSandboxNotRunning},
			failed: &SandboxFailedError{Status: StatusError, ErrorType: "OOM_KILLED", ControlPlaneStatus: StatusError, GatewayNotFound: true}, starts: 1}},
		{"internal before any event fails with its code", StatusRunning, "", fail(connect.CodeInternal), outcome{
			code: connect.CodeInternal, isNot: []error{ErrCommandMayStillRun, ErrExecTimeout}, msg: []string{"internal", "gateway says no"}, starts: 1}},
		{"unavailable after the start is never retried", StatusRunning, "", afterStart(connect.CodeUnavailable), outcome{
			code: connect.CodeUnavailable, is: []error{ErrCommandMayStillRun}, msg: []string{"pid 7", "stream broke"}, starts: 1}},
		{"unauthenticated after an event is not retried", StatusRunning, "", afterStart(connect.CodeUnauthenticated), outcome{
			code: connect.CodeUnauthenticated, starts: 1, auths: 1}},
		{"unauthenticated before any event: one retry with a fresh token", StatusRunning, "", fail(connect.CodeUnauthenticated), outcome{
			code: connect.CodeUnauthenticated, starts: 2, auths: 2}},
		{"a stream without an end event", StatusRunning, "", func(_ context.Context, _ int, _ *pb.StartRequest, send func(*pb.CommandSessionEvent) error) error {
			return sendAll(send, evStart(9), evStdout("half"))
		}, outcome{is: []error{errNoExitCode, ErrCommandMayStillRun}, msg: []string{"the command stream ended without an exit code", "pid 9"}, starts: 1}},
		{"a keepalive-only stream", StatusRunning, "", func(_ context.Context, _ int, _ *pb.StartRequest, send func(*pb.CommandSessionEvent) error) error {
			return sendAll(send, evKeepalive(), evKeepalive())
		}, outcome{is: []error{errNoExitCode}, isNot: []error{ErrCommandMayStillRun}, msg: []string{"ended without an exit code"}, starts: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newFakeGateway(t)
			g.add("vm-1", &fakeSandbox{status: tt.status, errType: tt.errType})
			g.onStart = tt.onStart
			c, _ := g.client(nil)
			_, err := c.Exec(context.Background(), "vm-1", ExecRequest{Command: "work", Timeout: 5 * time.Second})
			if err == nil {
				t.Fatal("no error")
			}
			w := tt.want
			for _, target := range w.is {
				if !errors.Is(err, target) {
					t.Errorf("err = %v; want it to wrap %v", err, target)
				}
			}
			for _, target := range w.isNot {
				if errors.Is(err, target) {
					t.Errorf("err = %v; must not wrap %v", err, target)
				}
			}
			if w.code != 0 && connect.CodeOf(err) != w.code {
				t.Errorf("code = %s, want %s (err %v)", connect.CodeOf(err), w.code, err)
			}
			if w.failed != nil {
				var f *SandboxFailedError
				if !errors.As(err, &f) {
					t.Fatalf("err = %v, want a *SandboxFailedError", err)
				}
				w.failed.SandboxID, w.failed.ErrorMessage = "vm-1", f.ErrorMessage
				if *f != *w.failed {
					t.Errorf("failed = %+v, want %+v", *f, *w.failed)
				}
			}
			for _, m := range w.msg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("message %q lacks %q", err, m)
				}
			}
			if !strings.HasPrefix(err.Error(), `running "work" in sandbox vm-1: `) {
				t.Errorf("message %q does not say what failed", err)
			}
			if n := g.count("Start"); n != w.starts {
				t.Errorf("%d Start calls, want %d", n, w.starts)
			}
			if w.auths != 0 && g.count("auth") != w.auths {
				t.Errorf("%d auth calls, want %d", g.count("auth"), w.auths)
			}
			if w.noSignals && g.count("SendSignal") != 0 {
				t.Errorf("a command without a pid was signalled")
			}
		})
	}
}

// A refused token is replaced once, and the command then runs.
func TestConnectExecReauthenticatesOnce(t *testing.T) {
	g := newFakeGateway(t)
	g.add("vm-1", &fakeSandbox{})
	c, _ := g.client(nil)
	if _, err := c.Exec(context.Background(), "vm-1", ExecRequest{Command: "one"}); err != nil {
		t.Fatal(err)
	}
	g.revoke(g.tokens[0]) // revoked while the client still holds it
	res, err := c.Exec(context.Background(), "vm-1", ExecRequest{Command: "two"})
	if err != nil || res.Stdout != "ok\n" {
		t.Fatalf("res %+v, err %v", res, err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.tokens) != 2 || !reflect.DeepEqual(g.used, []string{g.tokens[0], g.tokens[0], g.tokens[1]}) {
		t.Fatalf("tokens issued %v, presented %v; want the retry to use a fresh one", g.tokens, g.used)
	}
}

// A request that never reached the gateway (connection refused) is repeated
// like a REST request that was never sent.
func TestConnectExecRetriesRefusedConnections(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	_ = ln.Close()
	g := newFakeGateway(t)
	g.add("vm-1", &fakeSandbox{})
	g.gatewayURL = closed
	c, rec := g.client(func(o *Options) { o.MaxRetries = 2 })
	_, err = c.Exec(context.Background(), "vm-1", ExecRequest{Command: "echo"})
	if connect.CodeOf(err) != connect.CodeUnavailable {
		t.Fatalf("err = %v, want unavailable", err)
	}
	if n := strings.Count(rec.all(), `"procedure":"/command_session.CommandSession/Start"`); n != 3 {
		t.Fatalf("%d Start attempts logged, want 3 (1 + MaxRetries)", n)
	}
}

// A command that times out or is interrupted after it started is stopped:
// SIGTERM, then SIGKILL when it is still listed after the grace period (or
// List cannot tell).
func TestConnectExecStopsTheCommand(t *testing.T) {
	tests := []struct {
		name              string
		cancel            bool // interrupt instead of timing out
		termStops         bool
		listUnimplemented bool
		onSignal          func(uint32, pb.Signal) error
		want              []string // command-session calls, List polls collapsed
		msg               string
		is                []error
	}{
		{name: "timeout, still listed after SIGTERM", want: []string{"Start", "SIGTERM 42", "List", "SIGKILL 42"},
			msg: "command timed out after 300ms; the command (pid 42) was stopped with SIGKILL", is: []error{ErrExecTimeout}},
		{name: "timeout, gone after SIGTERM", termStops: true, want: []string{"Start", "SIGTERM 42", "List"},
			msg: "command timed out after 300ms; the command (pid 42) was stopped with SIGTERM", is: []error{ErrExecTimeout}},
		{name: "interrupted, still listed", cancel: true, want: []string{"Start", "SIGTERM 42", "List", "SIGKILL 42"},
			msg: "context canceled; the command (pid 42) was stopped with SIGKILL", is: []error{context.Canceled}},
		{name: "interrupted, gone after SIGTERM", cancel: true, termStops: true, want: []string{"Start", "SIGTERM 42", "List"},
			msg: "context canceled; the command (pid 42) was stopped with SIGTERM", is: []error{context.Canceled}},
		{name: "List unimplemented: SIGKILL", termStops: true, listUnimplemented: true, want: []string{"Start", "SIGTERM 42", "List", "SIGKILL 42"},
			msg: "was stopped with SIGKILL", is: []error{ErrExecTimeout}},
		{name: "already gone: not_found is no failure", onSignal: func(uint32, pb.Signal) error {
			return connect.NewError(connect.CodeNotFound, errors.New("no such session"))
		}, want: []string{"Start", "SIGTERM 42"}, msg: "the command (pid 42) had already exited", is: []error{ErrExecTimeout}},
		{name: "signals fail", onSignal: func(uint32, pb.Signal) error {
			return connect.NewError(connect.CodePermissionDenied, errors.New("signals are off"))
		}, want: []string{"Start", "SIGTERM 42", "SIGKILL 42"},
			msg: "the command (pid 42) could not be stopped: permission_denied: signals are off; the command may still be running",
			is:  []error{ErrExecTimeout, ErrCommandMayStillRun}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newFakeGateway(t)
			g.add("vm-1", &fakeSandbox{})
			g.termStops, g.listUnimplemented, g.onSignal = tt.termStops, tt.listUnimplemented, tt.onSignal
			g.onStart = func(ctx context.Context, _ int, _ *pb.StartRequest, send func(*pb.CommandSessionEvent) error) error {
				g.mu.Lock()
				g.listed[42] = true
				g.mu.Unlock()
				if err := sendAll(send, evStart(42), evStdout("working")); err != nil {
					return err
				}
				<-ctx.Done() // a command that runs until the client gives up
				return ctx.Err()
			}
			c, _ := g.client(nil)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			timeout := 300 * time.Millisecond
			if tt.cancel {
				timeout = time.Hour
				c.execStarted = func(string, uint32) { cancel() }
			}
			_, err := c.Exec(ctx, "vm-1", ExecRequest{Command: "sleep 1000", Timeout: timeout})
			if err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err = %v, want it to say %q", err, tt.msg)
			}
			for _, target := range tt.is {
				if !errors.Is(err, target) {
					t.Errorf("err = %v; want it to wrap %v", err, target)
				}
			}
			var got []string
			for _, call := range g.calls() {
				if call == "List" && len(got) > 0 && got[len(got)-1] == "List" {
					continue // polls during the grace period
				}
				got = append(got, call)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("calls = %v, want %v", got, tt.want)
			}
		})
	}
}

// Every sandbox is a VM: a command goes over Connect at once, without a
// read of the sandbox first, and concurrent commands, first uses included,
// share one token fetch per sandbox.
func TestExecSharesTokensAndReadsNoSandbox(t *testing.T) {
	g := newFakeGateway(t)
	g.add("sb-1", &fakeSandbox{})
	g.add("sb-2", &fakeSandbox{})
	c, _ := g.client(nil)
	var wg sync.WaitGroup
	for range 8 {
		for _, id := range []string{"sb-1", "sb-2"} {
			wg.Go(func() {
				if _, err := c.Exec(context.Background(), id, ExecRequest{Command: "echo"}); err != nil {
					t.Error(err)
				}
			})
		}
	}
	wg.Wait()
	if s, a, get := g.count("Start"), g.count("auth"), g.count("get"); s != 16 || a != 2 || get != 0 {
		t.Fatalf("Start %d, auth %d, GET %d; want 16, one auth per sandbox and no GET", s, a, get)
	}
}

// A token that lives less than the refresh margin is never reused.
func TestGatewayTokenRefreshedNearExpiry(t *testing.T) {
	g := newFakeGateway(t)
	g.add("sb-1", &fakeSandbox{})
	g.tokenTTL = 20 * time.Second
	c, _ := g.client(nil)
	for range 2 {
		if _, err := c.Exec(context.Background(), "sb-1", ExecRequest{Command: "echo"}); err != nil {
			t.Fatal(err)
		}
	}
	if n := g.count("auth"); n != 2 {
		t.Errorf("auth called %d times, want 2", n)
	}
}

// A sandbox the platform does not know fails at its token: nothing ran.
func TestExecUnknownSandbox(t *testing.T) {
	g := newFakeGateway(t)
	c, _ := g.client(nil)
	_, err := c.Exec(context.Background(), "nope", ExecRequest{Command: "echo"})
	if !errors.Is(err, ErrNotFound) || !commandNeverRan(err) || g.count("Start") != 0 {
		t.Errorf("err = %v after %d starts, want ErrNotFound before any start", err, g.count("Start"))
	}
}

// One debug record per Connect call, with its procedure, duration and
// outcome; never the token, environment values or output. Secret values
// never reach a returned error either.
func TestConnectExecDebugLogAndSecrets(t *testing.T) {
	const secret, plain, output = "s3cret-value-123", "plain-value-456", "output-text-789"
	g := newFakeGateway(t)
	g.add("vm-1", &fakeSandbox{})
	g.onStart = func(_ context.Context, n int, req *pb.StartRequest, send func(*pb.CommandSessionEvent) error) error {
		if n == 1 { // the gateway echoes the command line in its error
			return connect.NewError(connect.CodeInvalidArgument, errors.New("bad command: "+req.GetCommand().GetArgs()[1]))
		}
		return sendAll(send, evStart(1), evStdout(output), evStderr(output), evEnd(0))
	}
	c, rec := g.client(nil)
	req := ExecRequest{
		Command: "echo " + output, Env: map[string]string{"PLAIN": plain},
		SensitiveEnv: map[string]string{"TOKEN": secret},
	}
	res, err := c.Exec(context.Background(), "vm-1", req)
	if err != nil || res.Stdout != output {
		t.Fatalf("res %+v, err %v", res, err)
	}
	req.Command = "curl -H 'Authorization: " + secret + "' example.com"
	_, err = c.Exec(context.Background(), "vm-1", req)
	if err == nil || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "***") {
		t.Fatalf("err = %v: want an error with the secret scrubbed", err)
	}

	logs := rec.all()
	var rpcs []string
	for _, line := range strings.Split(logs, "\n") {
		if strings.HasPrefix(line, "Prime gateway RPC ") {
			rpcs = append(rpcs, line)
		}
	}
	if len(rpcs) != 2 {
		t.Fatalf("%d RPC records, want one per call:\n%s", len(rpcs), logs)
	}
	for i, wantCode := range []string{`"code":"ok"`, `"code":"invalid_argument"`} {
		for _, want := range []string{`"procedure":"/command_session.CommandSession/Start"`, `"duration_ms":`, wantCode} {
			if !strings.Contains(rpcs[i], want) {
				t.Errorf("record %d lacks %s: %s", i, want, rpcs[i])
			}
		}
	}
	g.mu.Lock()
	leaks := append([]string{secret, plain, output}, g.tokens...)
	g.mu.Unlock()
	for _, leak := range leaks {
		if strings.Contains(logs, leak) {
			t.Errorf("the debug log contains %q:\n%s", leak, logs)
		}
	}
}
