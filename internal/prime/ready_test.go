package prime

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"

	pb "github.com/primeintellect/terraform-provider-prime/internal/commandsession/commandsessionpb"
)

func running() []SandboxStatus { return []SandboxStatus{{Status: StatusRunning}} }

// failFirst answers the first n Start calls with code, then runs the probe.
func failFirst(n int, code connect.Code) func(context.Context, int, *pb.StartRequest, func(*pb.CommandSessionEvent) error) error {
	return func(_ context.Context, i int, _ *pb.StartRequest, send func(*pb.CommandSessionEvent) error) error {
		if i < n {
			return connect.NewError(code, errors.New("gateway not ready"))
		}
		return sendAll(send, evStart(1), evStdout("sandbox ready\n"), evEnd(0))
	}
}

// The wait probes the gateway with `echo` until it answers once, retrying
// the failures the SDK's reachability wait retries, and asks the control
// plane about the sandbox after each failure.
func TestWaitForReadyRetriesTransientGatewayFailures(t *testing.T) {
	tests := []struct {
		name    string
		onStart func(context.Context, int, *pb.StartRequest, func(*pb.CommandSessionEvent) error) error
	}{
		{name: "connect unavailable", onStart: failFirst(2, connect.CodeUnavailable)},
		{name: "connect aborted", onStart: failFirst(2, connect.CodeAborted)},
		{name: "connect deadline_exceeded", onStart: failFirst(2, connect.CodeDeadlineExceeded)},
		{name: "connect not_found while RUNNING", onStart: failFirst(2, connect.CodeNotFound)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newFakeGateway(t)
			g.add("sbx", &fakeSandbox{statuses: running()})
			g.onStart = tt.onStart
			c, _ := g.client(nil)
			if err := c.WaitForReady(testContext(t), "sbx", WaitReadyOptions{Gateway: true}); err != nil {
				t.Fatal(err)
			}
			// A probe makes one attempt: the probe loop retries.
			if probes := g.count("Start"); probes != 3 {
				t.Fatalf("%d probes, want 3", probes)
			}
			// One status round to reach RUNNING and none after the failed
			// probes: that RUNNING is fresher than gatewayAliveRecheck. A
			// gateway miss never asks error-context (one request per miss
			// and sandbox) either.
			if n := g.count("batch"); n != 1 {
				t.Fatalf("%d status rounds, want 1", n)
			}
			if n := g.count("error-context"); n != 0 {
				t.Fatalf("%d error-context requests, want 0 (a probe asks the shared poller)", n)
			}
			// A gateway miss of a RUNNING sandbox keeps the token: one auth.
			if strings.Contains(tt.name, "not_found while RUNNING") {
				if n := g.count("auth"); n != 1 {
					t.Fatalf("%d gateway auth requests, want 1 (the token stays good)", n)
				}
			}
			g.mu.Lock()
			req, hdr := g.starts[0], g.startHdrs[0]
			g.mu.Unlock()
			ms, _ := strconv.Atoi(hdr.Get("Connect-Timeout-Ms"))
			if args := req.GetCommand().GetArgs(); len(args) != 2 || args[1] != gatewayProbeCommand || ms <= 0 || ms > 10000 {
				t.Fatalf("probe %v with Connect-Timeout-Ms %s, want %q within 10 s", args, hdr.Get("Connect-Timeout-Ms"), gatewayProbeCommand)
			}
		})
	}
}

// A failure that is not transient, or a control plane that reports the
// sandbox stopped, ends the wait at once.
func TestWaitForReadyStopsOnLastingFailures(t *testing.T) {
	saved := gatewayAliveRecheck
	gatewayAliveRecheck = 0 // ask the control plane after every failed probe
	t.Cleanup(func() { gatewayAliveRecheck = saved })
	tests := []struct {
		name     string
		statuses []SandboxStatus
		status   string // error-context's status
		onStart  func(context.Context, int, *pb.StartRequest, func(*pb.CommandSessionEvent) error) error
		check    func(t *testing.T, err error)
	}{
		{name: "permission_denied", statuses: running(), onStart: failFirst(99, connect.CodePermissionDenied),
			check: func(t *testing.T, err error) {
				if connect.CodeOf(err) != connect.CodePermissionDenied || !strings.Contains(err.Error(), "reached RUNNING but the gateway failed") {
					t.Errorf("err = %v", err)
				}
			}},
		{name: "not_found while the control plane says TERMINATED",
			statuses: []SandboxStatus{{Status: StatusRunning}, {Status: StatusTerminated}}, status: StatusTerminated, onStart: failFirst(99, connect.CodeNotFound),
			check: func(t *testing.T, err error) {
				var f *SandboxFailedError
				if !errors.As(err, &f) || f.Status != StatusTerminated {
					t.Errorf("err = %v, want the sandbox reported gone", err)
				}
			}},
		{name: "the control plane turns ERROR after a transient failure",
			statuses: []SandboxStatus{{Status: StatusRunning}, {Status: StatusError, ErrorType: ptr("OOM_KILLED")}},
			onStart:  failFirst(99, connect.CodeUnavailable),
			check: func(t *testing.T, err error) {
				var f *SandboxFailedError
				if !errors.As(err, &f) || f.Status != StatusError || f.ErrorType != "OOM_KILLED" {
					t.Errorf("err = %v, want a *SandboxFailedError for ERROR/OOM_KILLED", err)
				}
			}},
		{name: "a stream without an exit code", statuses: running(),
			onStart: func(_ context.Context, _ int, _ *pb.StartRequest, send func(*pb.CommandSessionEvent) error) error {
				return sendAll(send, evKeepalive())
			},
			check: func(t *testing.T, err error) {
				if !errors.Is(err, errNoExitCode) {
					t.Errorf("err = %v", err)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newFakeGateway(t)
			g.add("sbx", &fakeSandbox{statuses: tt.statuses, status: tt.status})
			g.onStart = tt.onStart
			c, _ := g.client(nil)
			err := c.WaitForReady(testContext(t), "sbx", WaitReadyOptions{Gateway: true})
			if err == nil {
				t.Fatal("no error")
			}
			tt.check(t, err)
			var timeout *WaitTimeoutError
			if errors.As(err, &timeout) {
				t.Errorf("err = %v, want no budget to run out", err)
			}
			if n := g.count("Start"); n != 1 {
				t.Errorf("%d probes, want 1", n)
			}
		})
	}
}

// A sandbox that dies while its gateway never answers is noticed once the
// last RUNNING is gatewayAliveRecheck old: probes in between cost no status
// request, and the wait ends with the platform's error, not a timeout.
func TestWaitForReadyRechecksTheControlPlaneWhileProbing(t *testing.T) {
	g := newFakeGateway(t)
	g.add("sbx", &fakeSandbox{statuses: []SandboxStatus{{Status: StatusRunning}, {Status: StatusError, ErrorType: ptr("OOM_KILLED")}}})
	g.onStart = failFirst(1<<30, connect.CodeUnavailable)
	c, _ := g.client(nil)
	err := c.WaitForReady(testContext(t), "sbx", WaitReadyOptions{Gateway: true, Timeout: time.Minute})
	var f *SandboxFailedError
	if !errors.As(err, &f) || f.Status != StatusError {
		t.Fatalf("err = %v, want a *SandboxFailedError for ERROR", err)
	}
	if n := g.count("batch"); n != 2 {
		t.Fatalf("%d status rounds, want 2 (RUNNING, then one recheck)", n)
	}
	if n := g.count("Start"); n < 2 {
		t.Fatalf("%d probes, want several before the recheck", n)
	}
}

// A sandbox waiting for its gateway fetches its token at once, not when its
// probe is due: the probe that answers then costs one round trip. Here the
// cohort expects the gateway in an hour, so only that early fetch can ask.
func TestWaitForReadyFetchesTheTokenWhileTheGatewayLags(t *testing.T) {
	g := newFakeGateway(t)
	g.add("sbx", &fakeSandbox{statuses: running()})
	asked := make(chan struct{}, 1)
	g.onAuth = func() { asked <- struct{}{} }
	c, _ := g.client(nil)
	c.gatewayLatency.recordUpper(time.Hour)
	c.gatewayLatency.joined, c.gatewayLatency.lastScout = 1, 1 // a follower
	ctx, cancel := context.WithCancel(testContext(t))
	done := make(chan error, 1)
	go func() { done <- c.WaitForReady(ctx, "sbx", WaitReadyOptions{Gateway: true, Timeout: 2 * time.Hour}) }()
	select {
	case <-asked:
	case err := <-done:
		t.Fatalf("the wait ended (%v) without fetching a token", err)
	case <-time.After(time.Minute): // a guard against a hang, not a bound
		t.Fatal("no token was fetched while the probe was not due")
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want the cancellation", err)
	}
	if n := g.count("Start"); n != 0 {
		t.Fatalf("%d probes, want none before the expected lag", n)
	}
}

func ptr[T any](v T) *T { return &v }

func TestWaitForReadyBudgets(t *testing.T) {
	build := ptr("img-build-1")
	tests := []struct {
		name     string
		statuses []SandboxStatus
		onStart  func(context.Context, int, *pb.StartRequest, func(*pb.CommandSessionEvent) error) error
		opts     WaitReadyOptions
		want     WaitTimeoutError
		lastCode connect.Code
	}{
		{name: "boot", statuses: []SandboxStatus{{Status: StatusProvisioning}},
			opts: WaitReadyOptions{Timeout: 300 * time.Millisecond},
			want: WaitTimeoutError{Phase: PhaseBoot, Budget: 300 * time.Millisecond, LastStatus: StatusProvisioning}},
		{name: "image build", statuses: []SandboxStatus{{Status: StatusPending, PendingImageBuildID: build}},
			opts: WaitReadyOptions{Timeout: time.Hour, ImageBuildTimeout: 300 * time.Millisecond, ImageBuildPoll: 50 * time.Millisecond},
			want: WaitTimeoutError{Phase: PhaseImageBuild, Budget: 300 * time.Millisecond, LastStatus: StatusPending}},
		{name: "boot after an image build: the creation budget again", statuses: []SandboxStatus{
			{Status: StatusPending, PendingImageBuildID: build}, {Status: StatusProvisioning},
		}, opts: WaitReadyOptions{Timeout: 300 * time.Millisecond, ImageBuildTimeout: time.Hour, ImageBuildPoll: 50 * time.Millisecond},
			want: WaitTimeoutError{Phase: PhaseBoot, Budget: 300 * time.Millisecond, LastStatus: StatusProvisioning}},
		{name: "gateway", statuses: running(), onStart: failFirst(1<<30, connect.CodeUnavailable),
			opts:     WaitReadyOptions{Timeout: time.Second, Gateway: true},
			want:     WaitTimeoutError{Phase: PhaseGateway, Budget: time.Second, LastStatus: StatusRunning},
			lastCode: connect.CodeUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newFakeGateway(t)
			g.add("sbx", &fakeSandbox{statuses: tt.statuses})
			g.onStart = tt.onStart
			c, _ := g.client(nil)
			err := c.WaitForReady(testContext(t), "sbx", tt.opts)
			var got *WaitTimeoutError
			if !errors.As(err, &got) {
				t.Fatalf("err = %v, want a *WaitTimeoutError", err)
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Error("a budget that ran out must read as a deadline")
			}
			var failed *SandboxFailedError
			if errors.As(err, &failed) {
				t.Error("a timeout must not read as a failed sandbox")
			}
			if tt.lastCode != 0 && connect.CodeOf(got.Last) != tt.lastCode {
				t.Errorf("Last = %v, want the last probe failure (%s)", got.Last, tt.lastCode)
			}
			got.Last = nil
			tt.want.SandboxID = "sbx"
			if tt.want.Phase == PhaseBoot && tt.want.LastStatus == StatusProvisioning && got.LastStatus == "" {
				got.LastStatus = StatusProvisioning // the budget ran out before the first answer
			}
			if *got != tt.want {
				t.Errorf("got %+v, want %+v", *got, tt.want)
			}
		})
	}
}

// An image build has a budget of its own and is polled at its own pace; the
// creation budget restarts when it is over, and the build's duration does
// not teach the client a boot time.
func TestWaitForReadyImageBuild(t *testing.T) {
	build := ptr("img-build-1")
	var statuses []SandboxStatus
	for range 7 {
		statuses = append(statuses, SandboxStatus{Status: StatusPending, PendingImageBuildID: build})
	}
	statuses = append(statuses, SandboxStatus{Status: StatusProvisioning}, SandboxStatus{Status: StatusRunning})
	g := newFakeGateway(t)
	g.add("sbx", &fakeSandbox{statuses: statuses})
	c, _ := g.client(nil)
	c.kinds.rememberCreated(Sandbox{ID: "sbx"}, time.Now()) // a wait that joins the boot cohort
	const timeout = 1500 * time.Millisecond
	var progress []string
	start := time.Now()
	err := c.WaitForReady(testContext(t), "sbx", WaitReadyOptions{
		Timeout: timeout, ImageBuildTimeout: time.Hour, ImageBuildPoll: 300 * time.Millisecond, Gateway: true,
		OnProgress: func(s SandboxStatus) {
			progress = append(progress, fmt.Sprintf("%s build=%t", s.Status, s.PendingImageBuildID != nil))
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Seven build polls 300 ms apart alone outlast the creation budget.
	if took := time.Since(start); took < timeout {
		t.Fatalf("the wait took %s; the test needs the build to outlast the %s budget", took, timeout)
	}
	want := []string{"PENDING build=true", "PROVISIONING build=false", "RUNNING build=false"}
	if !reflect.DeepEqual(progress, want) {
		t.Fatalf("progress %v, want %v", progress, want)
	}
	if n := g.count("batch"); n != len(statuses) {
		t.Fatalf("%d status rounds, want %d", n, len(statuses))
	}
	if n := bootSamples(c); n != 0 {
		t.Fatalf("%d boot samples after a wait through an image build, want 0", n)
	}
	g.add("plain", &fakeSandbox{statuses: []SandboxStatus{{Status: StatusProvisioning}, {Status: StatusRunning}}})
	c.kinds.rememberCreated(Sandbox{ID: "plain"}, time.Now())
	if err := c.WaitForReady(testContext(t), "plain", WaitReadyOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := bootSamples(c); n != 1 {
		t.Fatalf("%d boot samples after a plain boot, want 1", n)
	}
	if n := g.count("Start"); n != 1 {
		t.Fatalf("%d probes, want 1 (only the wait with Gateway probes)", n)
	}
}

// A terminal status ends the boot wait with the platform's error.
func TestWaitForReadyTerminalStatus(t *testing.T) {
	g := newFakeGateway(t)
	g.add("sbx", &fakeSandbox{statuses: []SandboxStatus{
		{Status: StatusProvisioning}, {Status: StatusError, ErrorType: ptr("IMAGE_PULL_FAILED"), ErrorMessage: ptr("pull access denied")},
	}})
	c, _ := g.client(nil)
	err := c.WaitForReady(testContext(t), "sbx", WaitReadyOptions{Gateway: true})
	var f *SandboxFailedError
	if !errors.As(err, &f) || f.Status != StatusError || f.ErrorType != "IMAGE_PULL_FAILED" || f.ErrorMessage != "pull access denied" {
		t.Fatalf("err = %v", err)
	}
	if g.count("Start") != 0 {
		t.Fatal("a failed sandbox was probed")
	}
}

// A cancelled context returns its cause, in either phase.
func TestWaitForReadyCancelled(t *testing.T) {
	interrupted := errors.New("interrupted by the user")
	for _, phase := range []WaitPhase{PhaseBoot, PhaseGateway} {
		t.Run(string(phase), func(t *testing.T) {
			g := newFakeGateway(t)
			ctx, cancel := context.WithCancelCause(testContext(t))
			defer cancel(nil)
			if phase == PhaseBoot {
				g.add("sbx", &fakeSandbox{statuses: []SandboxStatus{{Status: StatusProvisioning}}})
				g.mu.Lock()
				g.sandboxes["sbx"].onPoll = func() { cancel(interrupted) }
				g.mu.Unlock()
			} else {
				g.add("sbx", &fakeSandbox{statuses: running()})
				g.onStart = func(context.Context, int, *pb.StartRequest, func(*pb.CommandSessionEvent) error) error {
					cancel(interrupted)
					return connect.NewError(connect.CodeUnavailable, errors.New("not yet"))
				}
			}
			c, _ := g.client(nil)
			if err := c.WaitForReady(ctx, "sbx", WaitReadyOptions{Gateway: true}); !errors.Is(err, interrupted) {
				t.Fatalf("err = %v, want the context's cause", err)
			}
		})
	}
}

// Sandboxes waiting at once share each status request.
func TestWaitForReadySharesStatusRequests(t *testing.T) {
	g := newFakeGateway(t)
	const n = 40
	for i := range n {
		g.add(fmt.Sprintf("sbx-%02d", i), &fakeSandbox{statuses: []SandboxStatus{
			{Status: StatusPending}, {Status: StatusProvisioning}, {Status: StatusRunning},
		}})
	}
	c, _ := g.client(nil)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			errs <- c.WaitForReady(testContext(t), fmt.Sprintf("sbx-%02d", i), WaitReadyOptions{Gateway: true})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// Each sandbox needs three answers: 120 requests if nothing were shared.
	if b := g.count("batch"); b > 15 {
		t.Fatalf("%d status requests for %d sandboxes, want them shared (≤ 15)", b, n)
	}
	if s := g.count("Start"); s != n {
		t.Fatalf("%d probes, want %d", s, n)
	}
}

// WaitForRunning, the provider's wait, keeps its behaviour: no gateway
// probe, ctx is its only budget.
func TestWaitForRunningDoesNotProbe(t *testing.T) {
	g := newFakeGateway(t)
	g.add("sbx", &fakeSandbox{statuses: []SandboxStatus{{Status: StatusProvisioning}, {Status: StatusRunning}}})
	c, _ := g.client(nil)
	var seen []string
	if err := c.WaitForRunning(testContext(t), "sbx", WaitRunningOptions{OnProgress: func(s SandboxStatus) { seen = append(seen, s.Status) }}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(seen, []string{StatusProvisioning, StatusRunning}) || g.count("Start") != 0 {
		t.Fatalf("progress %v, %d probes", seen, g.count("Start"))
	}
}

func TestTransientProbeError(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	gone := func(cp string) error {
		return fmt.Errorf("x: %w: %w", ErrSandboxNotRunning, &SandboxFailedError{Status: StatusTerminated, ControlPlaneStatus: cp, GatewayNotFound: true})
	}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"connect unavailable", connect.NewError(connect.CodeUnavailable, errors.New("x")), true},
		{"connect aborted", connect.NewError(connect.CodeAborted, errors.New("x")), true},
		{"connect deadline_exceeded", connect.NewError(connect.CodeDeadlineExceeded, errors.New("x")), true},
		{"connect internal", connect.NewError(connect.CodeInternal, errors.New("x")), false},
		{"connect unauthenticated", connect.NewError(connect.CodeUnauthenticated, errors.New("x")), false},
		{"gateway lost it, control plane RUNNING", gone(StatusRunning), true},
		{"gateway lost it, control plane unknown", gone(""), true},
		{"gateway lost it, control plane TERMINATED", gone(StatusTerminated), false},
		{"not running, from the control plane", fmt.Errorf("x: %w: %w", ErrSandboxNotRunning, &SandboxFailedError{Status: StatusPending, ControlPlaneStatus: StatusPending}), false},
		{"command timeout", fmt.Errorf("x: %w", ErrExecTimeout), true},
		{"REST 408", &APIError{StatusCode: 408}, true},
		{"REST 409", &APIError{StatusCode: 409}, true},
		{"REST 500", &APIError{StatusCode: 500}, true},
		{"REST 524", &APIError{StatusCode: 524}, true},
		{"REST 401", &APIError{StatusCode: 401}, false},
		{"REST 404", &APIError{StatusCode: 404}, false},
		{"connection refused", fmt.Errorf("POST /exec: %w", refused), true},
		{"connection reset", fmt.Errorf("POST /exec: %w", &readError{err: syscall.ECONNRESET}), true},
		{"stream without exit code", fmt.Errorf("x: %w (pid 1): %w", errNoExitCode, ErrCommandMayStillRun), false},
		{"anything else", errors.New("boom"), false},
	}
	for _, tt := range tests {
		if got := transientProbeError(tt.err); got != tt.want {
			t.Errorf("%s: transient = %t, want %t", tt.name, got, tt.want)
		}
	}
}
