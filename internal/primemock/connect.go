package primemock

// The VM sandboxes' command transport: the Connect RPC service
// command_session.CommandSession, served by the gateway at
// /gateway/{user_ns}/{job_id}/command_session.CommandSession/{Method}.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"github.com/primeintellect/terraform-provider-prime/internal/commandsession/commandsessionpb"
	"github.com/primeintellect/terraform-provider-prime/internal/commandsession/commandsessionpb/commandsessionpbconnect"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock/shell"
)

// connectRoute is the mux pattern (and, with the method filled in, the
// stats key) of the Connect service.
const connectRoute = "POST " + gatewayPrefix + "/{user_ns}/{job_id}/command_session.CommandSession/{method}"

// connectMethods are the service's procedures (stats keys name them; other
// names are counted under "{method}").
var connectMethods = []string{"List", "Connect", "Start", "Update", "StreamInput", "SendInput", "SendSignal"}

// The interpreter is what runs for the command the SDK sends:
// /bin/bash -c SCRIPT.
const connectShell = "/bin/bash"

type gatewayPathKey struct{}

type gatewayPath struct{ userNS, job string }

type sandboxKey struct{}

// connectHandler serves the service behind the gateway's path prefix.
func (s *Server) connectHandler() http.Handler {
	_, h := commandsessionpbconnect.NewCommandSessionHandler(&commandSession{s: s},
		connect.WithInterceptors(gatewayAuth{s: s}),
		connect.WithReadMaxBytes(maxBodyBytes))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		method := r.PathValue("method")
		key := connectRoute
		if slices.Contains(connectMethods, method) {
			key = strings.TrimSuffix(connectRoute, "{method}") + method
		}
		s.count(key)
		if !s.delay(r.Context()) {
			return
		}
		ctx := context.WithValue(r.Context(), gatewayPathKey{}, gatewayPath{userNS: r.PathValue("user_ns"), job: r.PathValue("job_id")})
		r2 := r.WithContext(ctx)
		u := *r.URL
		u.Path, u.RawPath = "/command_session.CommandSession/"+method, ""
		r2.URL = &url.URL{}
		*r2.URL = u
		h.ServeHTTP(w, r2)
	})
}

// gatewayAuth authenticates every procedure the way the gateway does and
// finds the sandbox: a missing, unknown or expired token is unauthenticated,
// a token of another sandbox permission_denied. Then: a sandbox that is gone
// or terminal is not_found; a container answers unimplemented [I: connect-container-unimplemented: the
// SDK says containers "do not expose this transport", and a Connect client
// reads a missing route (HTTP 404) as unimplemented]; PENDING and
// PROVISIONING are unavailable [I: connect-booting-unavailable], and so is a PAUSED one
// [I: connect-paused-unavailable: no source says what the gateway answers a paused VM; the
// provider asks the control plane on unavailable, so another answer costs it only the message];
// a RUNNING sandbox the gateway has not
// registered yet (the gateway lag) is not_found, which the SDK's
// reachability wait retries.
type gatewayAuth struct{ s *Server }

func (g gatewayAuth) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		ctx, err := g.s.connectAuth(ctx, req.Header().Get("Authorization"))
		if err != nil {
			return nil, err
		}
		return next(ctx, req)
	}
}

func (g gatewayAuth) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (g gatewayAuth) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		ctx, err := g.s.connectAuth(ctx, conn.RequestHeader().Get("Authorization"))
		if err != nil {
			return err
		}
		return next(ctx, conn)
	}
}

func (s *Server) connectAuth(ctx context.Context, authorization string) (context.Context, error) {
	if s.inOutage() {
		return ctx, errOutage()
	}
	gp, _ := ctx.Value(gatewayPathKey{}).(gatewayPath)
	tok, problem := s.checkToken(authorization, gp.userNS, gp.job)
	switch problem {
	case tokenUnknown:
		return ctx, connect.NewError(connect.CodeUnauthenticated, errors.New("missing or invalid gateway token"))
	case tokenExpired:
		return ctx, connect.NewError(connect.CodeUnauthenticated, errors.New("the gateway token has expired"))
	case tokenOtherSandbox:
		return ctx, connect.NewError(connect.CodePermissionDenied, errors.New("the token is not valid for this sandbox"))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sb := s.sandboxes[tok.sandboxID]
	switch {
	case sb == nil || isTerminal(sb.status):
		return ctx, connect.NewError(connect.CodeNotFound, fmt.Errorf("sandbox %s was not found", tok.sandboxID))
	case sb.status != prime.StatusRunning:
		return ctx, connect.NewError(connect.CodeUnavailable, fmt.Errorf("sandbox %s is not running yet (status %s)", sb.id, sb.status))
	case !sb.gatewayReady:
		return ctx, connect.NewError(connect.CodeNotFound, fmt.Errorf("sandbox %s was not found", sb.id))
	}
	return context.WithValue(ctx, sandboxKey{}, sb), nil
}

// errOutage is a Connect call during a gateway outage.
func errOutage() error {
	return connect.NewError(connect.CodeUnavailable, errors.New("the gateway is unavailable (a prime-mock gateway outage)"))
}

// commandSession implements Start, SendSignal and List; the other
// procedures answer unimplemented.
type commandSession struct {
	commandsessionpbconnect.UnimplementedCommandSessionHandler
	s *Server
}

// Start runs /bin/bash -c SCRIPT in the interpreter and streams a start
// event (the pid), data events as output is produced, keepalive events
// every KeepaliveInterval and a final end event. When the stream's deadline
// (Connect-Timeout-Ms) passes, the stream ends with deadline_exceeded and the
// process keeps running [I: connect-process-outlives-stream], as it does when the client goes away,
// until its script ends or it is signalled.
func (c *commandSession) Start(ctx context.Context, req *connect.Request[commandsessionpb.StartRequest], stream *connect.ServerStream[commandsessionpb.StartResponse]) error {
	s := c.s
	sb, _ := ctx.Value(sandboxKey{}).(*sandbox)
	cut := s.outageCut()
	if s.inOutage() { // it began after the interceptor's check
		return errOutage()
	}
	script, err := startScript(req.Msg)
	if err != nil {
		return connect.NewError(connect.CodeInvalidArgument, err)
	}
	spec := req.Msg.GetCommand()
	x := &execution{
		transport: TransportConnect, script: script, attached: true,
		spec: proto.CloneOf(spec), tag: req.Msg.Tag,
	}
	s.mu.Lock()
	if s.sandboxes[sb.id] != sb || sb.status != prime.StatusRunning {
		s.mu.Unlock()
		return connect.NewError(connect.CodeNotFound, fmt.Errorf("sandbox %s was not found", sb.id))
	}
	s.launchLocked(context.Background(), sb, x, spec.GetEnvs(), spec.GetCwd())
	interval := s.opts.keepaliveInterval()
	s.mu.Unlock()

	send := func(ev *commandsessionpb.CommandSessionEvent) error {
		if err := stream.Send(&commandsessionpb.StartResponse{Event: ev}); err != nil {
			x.detach(false)
			return err
		}
		return nil
	}
	flush := func() error {
		for _, ch := range x.take() {
			data := &commandsessionpb.CommandSessionEvent_DataEvent{}
			if ch.stderr {
				data.Output = &commandsessionpb.CommandSessionEvent_DataEvent_Stderr{Stderr: ch.data}
			} else {
				data.Output = &commandsessionpb.CommandSessionEvent_DataEvent_Stdout{Stdout: ch.data}
			}
			if err := send(&commandsessionpb.CommandSessionEvent{Event: &commandsessionpb.CommandSessionEvent_Data{Data: data}}); err != nil {
				return err
			}
		}
		return nil
	}
	if err := send(&commandsessionpb.CommandSessionEvent{Event: &commandsessionpb.CommandSessionEvent_Start{
		Start: &commandsessionpb.CommandSessionEvent_StartEvent{Pid: x.pid},
	}}); err != nil {
		return err
	}
	finish := func() error {
		if err := flush(); err != nil {
			return err
		}
		if errors.Is(x.err, shell.ErrVanished) {
			// [I: connect-deleted-not-found] A sandbox deleted under a running command: the
			// stream fails the way a vanished sandbox does.
			return connect.NewError(connect.CodeNotFound, fmt.Errorf("sandbox %s was not found", sb.id))
		}
		return send(&commandsessionpb.CommandSessionEvent{Event: &commandsessionpb.CommandSessionEvent_End{End: endEvent(x.out)}})
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-x.notify:
			if err := flush(); err != nil {
				return err
			}
		case <-tick.C:
			if err := send(&commandsessionpb.CommandSessionEvent{Event: &commandsessionpb.CommandSessionEvent_Keepalive{
				Keepalive: &commandsessionpb.CommandSessionEvent_KeepAlive{},
			}}); err != nil {
				return err
			}
		case <-x.done:
			return finish()
		case <-cut:
			// [I: connect-outage-cut] An outage cuts the stream; the process keeps running.
			x.detach(false)
			return connect.NewError(connect.CodeUnavailable,
				fmt.Errorf("the gateway is unavailable (a prime-mock gateway outage); process %d keeps running", x.pid))
		case <-ctx.Done():
			select {
			case <-x.done: // it finished just in time: report that
				return finish()
			default:
			}
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				x.detach(true)
				return connect.NewError(connect.CodeDeadlineExceeded,
					fmt.Errorf("the command did not finish before the deadline; process %d keeps running", x.pid))
			}
			x.detach(false)
			return connect.NewError(connect.CodeCanceled, ctx.Err())
		}
	}
}

// endEvent reports how a script ended. A normal exit is {exit_code,
// exited: true, status: "exit"} (the SDK's test fixture shows status "exit").
// [I: connect-signal-end] A signal ends it with the shell's 128+n code, exited false and
// status "signal: terminated" or "signal: killed".
func endEvent(out shell.Outcome) *commandsessionpb.CommandSessionEvent_EndEvent {
	end := &commandsessionpb.CommandSessionEvent_EndEvent{ExitCode: int32(out.Exit), Exited: true, Status: "exit"} //nolint:gosec // G115: 0-255
	switch out.Signal {
	case shell.SigTERM:
		end.Exited, end.Status = false, "signal: terminated"
	case shell.SigKILL:
		end.Exited, end.Status = false, "signal: killed"
	}
	return end
}

// startScript checks that a StartRequest is what the SDK sends and returns
// the script. The SDK sends cmd "/bin/bash", args ["-c", SCRIPT], envs, an
// optional cwd and stdin (false for a command, true from open_process).
// [I: connect-start-shape] Anything else (another program, other arguments, a pty) is
// invalid_argument: the mock has nothing else to run. stdin true is
// accepted, but with SendInput unimplemented the script reads nothing.
func startScript(req *commandsessionpb.StartRequest) (string, error) {
	spec := req.GetCommand()
	switch {
	case spec == nil:
		return "", errors.New("command is required")
	case spec.GetCmd() != connectShell:
		return "", fmt.Errorf("prime-mock runs only %s -c SCRIPT, not %q", connectShell, spec.GetCmd())
	case len(spec.GetArgs()) != 2 || spec.GetArgs()[0] != "-c":
		return "", fmt.Errorf("prime-mock runs only %s -c SCRIPT; args must be [\"-c\", SCRIPT], got %q", connectShell, spec.GetArgs())
	case req.Pty != nil:
		return "", errors.New("prime-mock has no pseudo-terminals")
	}
	return spec.GetArgs()[1], nil
}

// SendSignal delivers SIGTERM or SIGKILL to a running process (by pid, or
// by tag). Unknown or finished processes are not_found.
func (c *commandSession) SendSignal(ctx context.Context, req *connect.Request[commandsessionpb.SendSignalRequest]) (*connect.Response[commandsessionpb.SendSignalResponse], error) {
	s := c.s
	sb, _ := ctx.Value(sandboxKey{}).(*sandbox)
	var sig string
	switch req.Msg.GetSignal() {
	case commandsessionpb.Signal_SIGNAL_SIGTERM:
		sig = shell.SigTERM
	case commandsessionpb.Signal_SIGNAL_SIGKILL:
		sig = shell.SigKILL
	default:
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("signal must be SIGNAL_SIGTERM or SIGNAL_SIGKILL, got %v", req.Msg.GetSignal()))
	}
	sel := req.Msg.GetSession()
	if sel == nil || sel.GetSelector() == nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("session must select a process by pid or tag"))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	x := findProcess(sb, sel)
	if x == nil {
		return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("no running process %s in sandbox %s", describeSelector(sel), sb.id))
	}
	x.proc.Signal(sig)
	s.emit(Event{Type: EventCommandSignalled, SandboxID: sb.id, Transport: TransportConnect, PID: x.pid, Signal: sig, Command: x.script})
	return connect.NewResponse(&commandsessionpb.SendSignalResponse{}), nil
}

func findProcess(sb *sandbox, sel *commandsessionpb.CommandSessionSelector) *execution {
	for x := range sb.execs {
		if x.transport != TransportConnect {
			continue
		}
		switch v := sel.GetSelector().(type) {
		case *commandsessionpb.CommandSessionSelector_Pid:
			if x.pid == v.Pid {
				return x
			}
		case *commandsessionpb.CommandSessionSelector_Tag:
			if x.tag != nil && *x.tag == v.Tag {
				return x
			}
		}
	}
	return nil
}

func describeSelector(sel *commandsessionpb.CommandSessionSelector) string {
	if t, ok := sel.GetSelector().(*commandsessionpb.CommandSessionSelector_Tag); ok {
		return fmt.Sprintf("with tag %q", t.Tag)
	}
	return fmt.Sprintf("with pid %d", sel.GetPid())
}

// List reports the sandbox's running processes started with Start, by pid.
// [I: connect-list-foreground] Background processes a script started ("&") are not listed: the
// process API knows the commands it started, not their children.
func (c *commandSession) List(ctx context.Context, _ *connect.Request[commandsessionpb.ListRequest]) (*connect.Response[commandsessionpb.ListResponse], error) {
	s := c.s
	sb, _ := ctx.Value(sandboxKey{}).(*sandbox)
	s.mu.Lock()
	var out []*commandsessionpb.CommandSessionInfo
	for x := range sb.execs {
		if x.transport == TransportConnect {
			out = append(out, &commandsessionpb.CommandSessionInfo{Command: proto.CloneOf(x.spec), Pid: x.pid, Tag: x.tag})
		}
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b *commandsessionpb.CommandSessionInfo) int { return int(a.Pid) - int(b.Pid) })
	return connect.NewResponse(&commandsessionpb.ListResponse{Sessions: out}), nil
}
