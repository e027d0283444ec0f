package prime

// Commands on VM sandboxes: the gateway's Connect command-session service,
// called as prime-sandboxes 0.2.39 calls it (its
// _execute_command_connect_rpc and command-session helpers). Base URL
// {gateway_url}/{user_ns}/{job_id}; the Connect protocol with the binary
// protobuf codec and uncompressed requests (connect-go's defaults, and what
// the SDK configures); Authorization: Bearer <gateway token>; the command
// timeout as the call's deadline (Connect-Timeout-Ms), with no margin.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"github.com/primeintellect/terraform-provider-prime/internal/commandsession/commandsessionpb"
	"github.com/primeintellect/terraform-provider-prime/internal/commandsession/commandsessionpb/commandsessionpbconnect"
)

// signalRPCTimeout bounds one SendSignal or List call (the SDK gives a
// signal 10 s).
const signalRPCTimeout = 10 * time.Second

// errNoExitCode: the stream closed cleanly without an end event. The command
// may have run, so this is never retried.
var errNoExitCode = errors.New("the command stream ended without an exit code")

// commandClientOptions: answers are not compressed. A client is made per
// sandbox (its address is in the URL), and each kept a gzip reader of its
// own (about 45 KiB) for every stream: at a 10,000-member fleet's
// readiness probes, 50 MiB of the provider's heap, for answers (an exit
// code, a command's output) that compress to little. The SDK asks for no
// request compression either.
var commandClientOptions = []connect.ClientOption{connect.WithAcceptCompression("gzip", nil, nil)}

// commandClient is the command-session client for a sandbox's gateway
// address.
func (c *Client) commandClient(auth *GatewayAuth) commandsessionpbconnect.CommandSessionClient {
	return commandsessionpbconnect.NewCommandSessionClient(c.streamHTTP, gatewayBase(auth), commandClientOptions...)
}

func (c *Client) rpcHeaders(h http.Header, token string) {
	h.Set("Authorization", "Bearer "+token)
	h.Set("User-Agent", c.userAgent)
}

// logRPC writes the one debug record of a Connect call: procedure, sandbox,
// duration and outcome code. Never the token, the environment or output.
func (c *Client) logRPC(ctx context.Context, procedure, id string, began time.Time, err error, extra map[string]any) {
	fields := map[string]any{
		"procedure": procedure, "sandbox_id": id,
		"duration_ms": time.Since(began).Milliseconds(), "code": rpcOutcome(err),
	}
	for k, v := range extra {
		fields[k] = v
	}
	c.debug(ctx, "Prime gateway RPC", fields)
}

func rpcOutcome(err error) string {
	if err == nil {
		return "ok"
	}
	return connect.CodeOf(err).String()
}

// commandStream accumulates one Start stream.
type commandStream struct {
	output         *outputScrubber // ExecRequest.OnOutput, or nil
	events         int
	pid            uint32
	started        bool // a start event gave pid
	ended          bool
	exitCode       int32
	stdout, stderr bytes.Buffer
}

func (s *commandStream) take(ev *commandsessionpb.CommandSessionEvent) {
	switch e := ev.GetEvent().(type) {
	case *commandsessionpb.CommandSessionEvent_Start:
		s.pid, s.started = e.Start.GetPid(), true
	case *commandsessionpb.CommandSessionEvent_Data:
		switch o := e.Data.GetOutput().(type) {
		case *commandsessionpb.CommandSessionEvent_DataEvent_Stdout:
			s.stdout.Write(o.Stdout)
			s.output.write(false, o.Stdout)
		case *commandsessionpb.CommandSessionEvent_DataEvent_Pty:
			s.stdout.Write(o.Pty) // a terminal's output is the command's stdout
			s.output.write(false, o.Pty)
		case *commandsessionpb.CommandSessionEvent_DataEvent_Stderr:
			s.stderr.Write(o.Stderr)
			s.output.write(true, o.Stderr)
		}
	case *commandsessionpb.CommandSessionEvent_End:
		// The SDK keeps the last end event's exit code; so does this.
		s.ended, s.exitCode = true, e.End.GetExitCode()
	}
	// Keepalive events only keep the stream alive through proxies.
}

// decodeOutput turns collected bytes into text: UTF-8, each invalid
// sequence replaced by U+FFFD. Bytes are joined before decoding, so a
// character split across two events survives (the SDK decodes each event
// on its own).
func decodeOutput(b *bytes.Buffer) string {
	return strings.ToValidUTF8(b.String(), "\uFFFD")
}

// execConnect runs a command on a VM sandbox through CommandSession/Start.
func (c *Client) execConnect(ctx context.Context, x execCall) (*ExecResult, error) {
	start := &commandsessionpb.StartRequest{
		Command: &commandsessionpb.CommandSpec{Cmd: "/bin/bash", Args: []string{"-c", x.req.Command}, Envs: x.env},
		// The SDK sends stdin explicitly as false; no pty, no tag.
		Stdin: proto.Bool(false),
	}
	if x.req.WorkingDir != "" {
		start.Command.Cwd = proto.String(x.req.WorkingDir)
	}
	what := x.what

	reauthed := false
	for unsent := 0; ; {
		auth, err := c.gatewayAuth(ctx, x.id)
		if err != nil {
			return nil, &preSendError{fmt.Errorf("%s: getting a gateway token: %w", what, err)}
		}
		st, err := c.startStream(ctx, x, auth, start)
		if err == nil {
			if !st.ended {
				if st.started {
					return nil, fmt.Errorf("%s: %w (pid %d): %w", what, errNoExitCode, st.pid, ErrCommandMayStillRun)
				}
				return nil, fmt.Errorf("%s: %w", what, errNoExitCode)
			}
			if x.raw {
				return &ExecResult{ExitCode: int(st.exitCode), Stdout: st.stdout.String(), Stderr: st.stderr.String()}, nil
			}
			return &ExecResult{ExitCode: int(st.exitCode), Stdout: decodeOutput(&st.stdout), Stderr: decodeOutput(&st.stderr)}, nil
		}

		if ctx.Err() != nil {
			// Interrupted (or the caller's own deadline): the command must
			// not outlive the apply that started it.
			cause := context.Cause(ctx)
			if st.started {
				return nil, c.stopped(ctx, x, st.pid, fmt.Errorf("%s: %w", what, cause))
			}
			return nil, fmt.Errorf("%s: %w", what, cause)
		}
		code := connect.CodeOf(err)
		if code == connect.CodeUnavailable && st.events == 0 {
			// The gateway refuses a sandbox that is not RUNNING (paused,
			// still starting) before anything runs; the control plane says
			// which (a probe asks the status poller instead). A RUNNING one
			// means the gateway itself is unavailable: handled below.
			if ec := c.errorContextFor(ctx, x); ec.Status != "" && ec.Status != StatusRunning {
				return nil, notRunning(what, x.id, ec)
			}
		}
		switch {
		case code == connect.CodeUnauthenticated && st.events == 0 && !reauthed:
			// Refused before anything ran: one fresh token, then give up.
			if err := c.gateway.invalidate(ctx, x.id, auth.Token); err != nil {
				return nil, err
			}
			reauthed = true
			continue
		case code == connect.CodeDeadlineExceeded:
			ec := c.errorContextFor(ctx, x)
			if IsTerminalStatus(ec.Status) {
				return nil, notRunning(what, x.id, ec)
			}
			timedOut := fmt.Errorf("%s: %w after %s", what, ErrExecTimeout, x.timeout)
			if st.started {
				return nil, c.stopped(ctx, x, st.pid, timedOut)
			}
			return nil, timedOut
		case code == connect.CodeNotFound:
			// Right after boot the gateway may not know a RUNNING sandbox
			// yet: its token stays good (the SDK keeps it too).
			ec := c.errorContextFor(ctx, x)
			if ec.Status != StatusRunning && !x.probe {
				c.gateway.forget(x.id)
			}
			return nil, goneFromNode(what, x.id, ec)
		case st.events == 0 && isUnsent(err) && unsent < c.maxRetries:
			// The request never reached the gateway: safe to repeat.
			if err := Sleep(ctx, c.retry.Delay(unsent)); err != nil {
				return nil, fmt.Errorf("%s: %w", what, err)
			}
			unsent++
			continue
		}
		if st.events == 0 && isUnsent(err) {
			// Never reached the gateway, retries spent: nothing ran. A dial
			// error carries no secrets, so it is kept whole for callers.
			return nil, fmt.Errorf("%s: the command session could not connect: %w", what, err)
		}
		// Anything else: the command may have started, so no retry.
		rpcErr := connect.NewError(code, errors.New(ScrubText(rpcMessage(err), x.secrets)))
		if st.started {
			return nil, fmt.Errorf("%s: the command session failed (%s) after the command started (pid %d): %w: %w",
				what, code, st.pid, rpcErr, ErrCommandMayStillRun)
		}
		return nil, fmt.Errorf("%s: the command session failed: %w", what, rpcErr)
	}
}

// rpcMessage is a Connect error's message without connect-go's "code: "
// prefix, or the error text for anything else.
func rpcMessage(err error) string {
	var ce *connect.Error
	if errors.As(err, &ce) {
		return ce.Message()
	}
	return err.Error()
}

// startStream makes one Start call and reads its stream to the end. The
// error is the call's (nil when the stream closed cleanly).
func (c *Client) startStream(ctx context.Context, x execCall, auth *GatewayAuth, start *commandsessionpb.StartRequest) (*commandStream, error) {
	st := &commandStream{output: x.output}
	defer st.output.flush() // what a secret's possible start held back
	cctx, cancel := context.WithTimeout(ctx, x.timeout)
	defer cancel()
	req := connect.NewRequest(start)
	c.rpcHeaders(req.Header(), auth.Token)
	began := time.Now()
	stream, err := c.commandClient(auth).Start(cctx, req)
	if err == nil {
		for stream.Receive() {
			st.events++
			wasStarted := st.started
			st.take(stream.Msg().GetEvent())
			if st.started && !wasStarted && c.execStarted != nil {
				c.execStarted(x.id, st.pid)
			}
		}
		err = stream.Err()
		_ = stream.Close()
	}
	c.logRPC(ctx, commandsessionpbconnect.CommandSessionStartProcedure, x.id, began, err, map[string]any{"events": st.events})
	return st, err
}

// stopped stops a started command and says how in the returned error,
// which wraps cause (and ErrCommandMayStillRun when the command could not
// be stopped).
func (c *Client) stopped(ctx context.Context, x execCall, pid uint32, cause error) error {
	how, err := c.stopCommand(ctx, x.id, pid)
	if err != nil {
		return fmt.Errorf("%w; the command (pid %d) could not be stopped: %s; %w", cause, pid, ScrubText(err.Error(), x.secrets), ErrCommandMayStillRun)
	}
	return fmt.Errorf("%w; the command (pid %d) %s", cause, pid, how)
}

// stopCommand ends a command the client gave up on: SIGTERM, then up to
// the grace period for it to leave the List of sessions, then SIGKILL when
// it is still listed (or List cannot tell). The SDK does not do this
// [I: whether the gateway ends a command when its stream is cancelled is
// not known; stopping it explicitly is the safe choice, and a signal to a
// command that already ended costs a not_found]. It runs on a context of its own
// (bounded, and not cancelled with ctx: an interrupted apply still stops its
// command). A signal answered not_found found the command already gone,
// which is not a failure. It returns how the command ended, or why it could
// not be stopped.
func (c *Client) stopCommand(ctx context.Context, id string, pid uint32) (string, error) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.stopGrace+3*signalRPCTimeout)
	defer cancel()
	termErr := c.sendSignal(sctx, id, pid, commandsessionpb.Signal_SIGNAL_SIGTERM)
	switch {
	case termErr == nil:
		if c.commandGone(sctx, id, pid) {
			return "was stopped with SIGTERM", nil
		}
	case connect.CodeOf(termErr) == connect.CodeNotFound:
		return "had already exited", nil
	}
	killErr := c.sendSignal(sctx, id, pid, commandsessionpb.Signal_SIGNAL_SIGKILL)
	switch {
	case killErr == nil:
		return "was stopped with SIGKILL", nil
	case connect.CodeOf(killErr) == connect.CodeNotFound && termErr == nil:
		return "was stopped with SIGTERM", nil // it exited between the checks
	case connect.CodeOf(killErr) == connect.CodeNotFound:
		return "had already exited", nil
	}
	return "", killErr
}

// commandGone waits up to the grace period for pid to leave the session
// list. It reports false when the grace ran out or List failed (a gateway
// without List, say): the caller then sends SIGKILL.
func (c *Client) commandGone(ctx context.Context, id string, pid uint32) bool {
	gctx, cancel := context.WithTimeout(ctx, c.stopGrace)
	defer cancel()
	checks := Backoff{Initial: c.stopGrace / 20, Factor: 2, Max: c.stopGrace / 4}
	gone := false
	_ = Poll(gctx, checks, func(ctx context.Context) (bool, error) {
		listed, err := c.commandListed(ctx, id, pid)
		if err != nil {
			return false, err
		}
		gone = !listed
		return gone, nil
	})
	return gone
}

// sendSignal sends one signal to a command.
func (c *Client) sendSignal(ctx context.Context, id string, pid uint32, sig commandsessionpb.Signal) error {
	return c.controlRPC(ctx, id, commandsessionpbconnect.CommandSessionSendSignalProcedure, func(ctx context.Context, rpc commandsessionpbconnect.CommandSessionClient, token string) error {
		req := connect.NewRequest(&commandsessionpb.SendSignalRequest{
			Session: &commandsessionpb.CommandSessionSelector{Selector: &commandsessionpb.CommandSessionSelector_Pid{Pid: pid}},
			Signal:  sig,
		})
		c.rpcHeaders(req.Header(), token)
		_, err := rpc.SendSignal(ctx, req)
		return err
	})
}

// commandListed reports whether pid is among the sandbox's command sessions.
func (c *Client) commandListed(ctx context.Context, id string, pid uint32) (bool, error) {
	listed := false
	err := c.controlRPC(ctx, id, commandsessionpbconnect.CommandSessionListProcedure, func(ctx context.Context, rpc commandsessionpbconnect.CommandSessionClient, token string) error {
		req := connect.NewRequest(&commandsessionpb.ListRequest{})
		c.rpcHeaders(req.Header(), token)
		resp, err := rpc.List(ctx, req)
		if err != nil {
			return err
		}
		for _, s := range resp.Msg.GetSessions() {
			if s.GetPid() == pid {
				listed = true
			}
		}
		return nil
	})
	return listed, err
}

// controlRPC makes one unary command-session call with the sandbox's current
// token (a command may outlive the token it started with), each attempt
// bounded by signalRPCTimeout, retried once with a fresh token when the
// token is refused, as the SDK does for its process-control calls.
func (c *Client) controlRPC(ctx context.Context, id, procedure string, call func(context.Context, commandsessionpbconnect.CommandSessionClient, string) error) error {
	for reauthed := false; ; reauthed = true {
		auth, err := c.gatewayAuth(ctx, id)
		if err != nil {
			return err
		}
		rctx, cancel := context.WithTimeout(ctx, signalRPCTimeout)
		began := time.Now()
		err = call(rctx, c.commandClient(auth), auth.Token)
		cancel()
		c.logRPC(ctx, procedure, id, began, err, nil)
		if connect.CodeOf(err) == connect.CodeUnauthenticated && !reauthed {
			if err := c.gateway.invalidate(ctx, id, auth.Token); err != nil {
				return err
			}
			continue
		}
		return err
	}
}
