package primemock_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/primeintellect/terraform-provider-prime/internal/commandsession/commandsessionpb"
	"github.com/primeintellect/terraform-provider-prime/internal/commandsession/commandsessionpb/commandsessionpbconnect"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// session is a generated Connect client for one sandbox's gateway.
type session struct {
	h      *harness
	client commandsessionpbconnect.CommandSessionClient
	token  string
	base   string
}

func (h *harness) session(id string) session {
	h.t.Helper()
	a := h.req("POST", "/api/v1/sandbox/"+id+"/auth", nil).must(h.t, 200).body
	base := a["gateway_url"].(string) + "/" + a["user_ns"].(string) + "/" + a["job_id"].(string)
	return session{h: h, client: commandsessionpbconnect.NewCommandSessionClient(h.ts.Client(), base), token: a["token"].(string), base: base}
}

// startRequest is what the SDK sends for execute_command.
func startRequest(script string, env map[string]string, cwd *string) *commandsessionpb.StartRequest {
	if env == nil {
		env = map[string]string{}
	}
	stdin := false
	return &commandsessionpb.StartRequest{
		Command: &commandsessionpb.CommandSpec{Cmd: "/bin/bash", Args: []string{"-c", script}, Envs: env, Cwd: cwd},
		Stdin:   &stdin,
	}
}

// result is a finished Start stream, read the way the SDK reads it.
type result struct {
	events         []*commandsessionpb.CommandSessionEvent
	kinds          []string
	stdout, stderr string
	end            *commandsessionpb.CommandSessionEvent_EndEvent
	pid            uint32
	err            error
}

func (s session) start(ctx context.Context, req *commandsessionpb.StartRequest) result {
	return s.startWith(ctx, s.token, req, nil)
}

// startWith runs Start with a token; observe, when set, sees every event
// as it arrives.
func (s session) startWith(ctx context.Context, token string, req *commandsessionpb.StartRequest, observe func(*commandsessionpb.CommandSessionEvent), timeoutMs ...string) result {
	r := connect.NewRequest(req)
	if len(timeoutMs) > 0 {
		r.Header().Set("Connect-Timeout-Ms", timeoutMs[0])
	}
	if token != "" {
		r.Header().Set("Authorization", "Bearer "+token)
	}
	var res result
	stream, err := s.client.Start(ctx, r)
	if err != nil {
		res.err = err
		return res
	}
	defer stream.Close()
	for stream.Receive() {
		ev := stream.Msg().GetEvent()
		if observe != nil {
			observe(ev)
		}
		res.events = append(res.events, ev)
		switch e := ev.GetEvent().(type) {
		case *commandsessionpb.CommandSessionEvent_Start:
			res.kinds = append(res.kinds, "start")
			res.pid = e.Start.GetPid()
		case *commandsessionpb.CommandSessionEvent_Data:
			res.kinds = append(res.kinds, "data")
			res.stdout += string(e.Data.GetStdout())
			res.stderr += string(e.Data.GetStderr())
		case *commandsessionpb.CommandSessionEvent_End:
			res.kinds = append(res.kinds, "end")
			res.end = e.End
		case *commandsessionpb.CommandSessionEvent_Keepalive:
			res.kinds = append(res.kinds, "keepalive")
		}
	}
	res.err = stream.Err()
	return res
}

func (s session) run(script string) result {
	s.h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return s.start(ctx, startRequest(script, nil, nil))
}

func (s session) signal(pid uint32, sig commandsessionpb.Signal) error {
	r := connect.NewRequest(&commandsessionpb.SendSignalRequest{
		Session: &commandsessionpb.CommandSessionSelector{Selector: &commandsessionpb.CommandSessionSelector_Pid{Pid: pid}},
		Signal:  sig,
	})
	r.Header().Set("Authorization", "Bearer "+s.token)
	_, err := s.client.SendSignal(context.Background(), r)
	return err
}

func (s session) list() ([]*commandsessionpb.CommandSessionInfo, error) {
	r := connect.NewRequest(&commandsessionpb.ListRequest{})
	r.Header().Set("Authorization", "Bearer "+s.token)
	res, err := s.client.List(context.Background(), r)
	if err != nil {
		return nil, err
	}
	return res.Msg.GetSessions(), nil
}

func codeOf(err error) connect.Code {
	if err == nil {
		return 0
	}
	return connect.CodeOf(err)
}

func TestConnectStart(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: 10 * time.Millisecond, ApplyDelay: 5 * time.Millisecond, GatewayLag: 5 * time.Millisecond})
	id := h.ready(map[string]any{"environment_vars": map[string]string{"FROM_SANDBOX": "sb"}, "secrets": map[string]string{"TOKEN": "hunter22"}})
	h.putPolicy(id, []string{"allowed.example"}, nil)
	s := h.session(id)

	res := s.run("echo hi; probe allowed.example && echo ok; curl -s https://other.example; echo bye >&2; exit 3")
	if res.err != nil {
		t.Fatal(res.err)
	}
	if res.kinds[0] != "start" || res.kinds[len(res.kinds)-1] != "end" || res.pid < 1 {
		t.Errorf("event kinds %v, pid %d: want start first (with a pid) and end last", res.kinds, res.pid)
	}
	if res.stdout != "hi\nok\n" || !strings.Contains(res.stderr, "other.example") || !strings.HasSuffix(res.stderr, "bye\n") {
		t.Errorf("stdout %q stderr %q", res.stdout, res.stderr)
	}
	if res.end.GetExitCode() != 3 || !res.end.GetExited() || res.end.GetStatus() != "exit" {
		t.Errorf("end = %v", res.end)
	}
	e := h.waitEvent(primemock.EventCommandExecuted, id)
	if e.Transport != "connect" || e.PID != res.pid || e.ExitCode != 3 || e.AppliedGeneration != 1 || e.TimedOut || e.Signalled {
		t.Errorf("command_executed = %+v", e)
	}

	// Environment (sandbox, secrets, request), working directory, 127.
	cwd := "app"
	res = s.start(context.Background(), startRequest(`echo "$FROM_SANDBOX $TOKEN $REQ"; pwd; nosuch`, map[string]string{"REQ": "r"}, &cwd))
	if res.err != nil || res.stdout != "sb hunter22 r\n/root/app\n" || res.stderr != "bash: line 1: nosuch: command not found\n"+mockLacks("nosuch") || res.end.GetExitCode() != 127 {
		t.Errorf("env/cwd/127: stdout %q stderr %q end %v err %v", res.stdout, res.stderr, res.end, res.err)
	}
	// pids count up.
	if next := s.run("true"); next.pid != res.pid+1 {
		t.Errorf("pids %d then %d", res.pid, next.pid)
	}
	if n := h.srv.Stats().Requests["POST /gateway/{user_ns}/{job_id}/command_session.CommandSession/Start"]; n != 3 {
		t.Errorf("Start requests counted: %d", n)
	}
}

func TestConnectKeepalivesWhileSleeping(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: 10 * time.Millisecond, GatewayLag: -1, KeepaliveInterval: 10 * time.Millisecond})
	id := h.ready(map[string]any{})
	res := h.session(id).run("echo a; sleep 0.5; echo b")
	if res.err != nil {
		t.Fatal(res.err)
	}
	// Output is streamed as produced: "a" arrives before the sleep's
	// keepalives, "b" after them.
	var dataAt []int
	keepalives := 0
	for i, k := range res.kinds {
		switch k {
		case "data":
			dataAt = append(dataAt, i)
		case "keepalive":
			if len(dataAt) == 1 {
				keepalives++
			}
		}
	}
	if len(dataAt) != 2 || keepalives < 1 || res.stdout != "a\nb\n" {
		t.Errorf("events %v: want data, keepalive(s), data", res.kinds)
	}
}

func TestConnectDeadlineSignalsAndList(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: 10 * time.Millisecond, GatewayLag: -1, KeepaliveInterval: time.Hour})
	id := h.ready(map[string]any{})
	s := h.session(id)

	// The deadline ends the stream; the process keeps running. The
	// deadline is the server's (Connect-Timeout-Ms) alone, so that it, not
	// the client giving up, ends the stream.
	res := s.startWith(context.Background(), s.token, startRequest("echo started; sleep 3600", nil, nil), nil, "100")
	if codeOf(res.err) != connect.CodeDeadlineExceeded || res.pid == 0 {
		t.Fatalf("Start past its deadline: %v (pid %d), want deadline_exceeded", res.err, res.pid)
	}
	procs, err := s.list()
	if err != nil || len(procs) != 1 || procs[0].GetPid() != res.pid || procs[0].GetCommand().GetArgs()[1] != "echo started; sleep 3600" ||
		procs[0].GetCommand().GetCmd() != "/bin/bash" {
		t.Fatalf("List = %v, %v", procs, err)
	}
	// SIGTERM stops it with 143.
	if err := s.signal(res.pid, commandsessionpb.Signal_SIGNAL_SIGTERM); err != nil {
		t.Fatal(err)
	}
	e := h.waitEvent(primemock.EventCommandExecuted, id)
	if e.PID != res.pid || e.ExitCode != 143 || !e.Signalled || e.Signal != "SIGTERM" || !e.TimedOut {
		t.Errorf("after SIGTERM: %+v", e)
	}
	if sig := h.waitEvent(primemock.EventCommandSignalled, id); sig.PID != res.pid || sig.Signal != "SIGTERM" || sig.Seq > e.Seq {
		t.Errorf("command_signalled = %+v", sig)
	}
	if procs, _ := s.list(); len(procs) != 0 {
		t.Errorf("List after the end = %v", procs)
	}
	if err := s.signal(res.pid, commandsessionpb.Signal_SIGNAL_SIGKILL); codeOf(err) != connect.CodeNotFound {
		t.Errorf("signal to a finished pid: %v, want not_found", err)
	}
	if err := s.signal(res.pid, commandsessionpb.Signal_SIGNAL_UNSPECIFIED); codeOf(err) != connect.CodeInvalidArgument {
		t.Errorf("SIGNAL_UNSPECIFIED: %v, want invalid_argument", err)
	}

	// A script that ignores SIGTERM needs SIGKILL (137); the stream stays
	// open and reports it.
	// The signals are sent once the script has printed "ready", that is
	// after its trap is set.
	done := make(chan result, 1)
	ready := make(chan uint32, 1)
	go func() {
		var pid uint32
		done <- s.startWith(context.Background(), s.token, startRequest("trap '' TERM; echo ready; sleep 3600", nil, nil),
			func(ev *commandsessionpb.CommandSessionEvent) {
				if st := ev.GetStart(); st != nil {
					pid = st.GetPid()
				}
				if string(ev.GetData().GetStdout()) == "ready\n" {
					ready <- pid
				}
			})
	}()
	pid := <-ready
	if err := s.signal(pid, commandsessionpb.Signal_SIGNAL_SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := s.signal(pid, commandsessionpb.Signal_SIGNAL_SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := <-done
	if killed.err != nil || killed.end.GetExitCode() != 137 || killed.end.GetExited() || killed.end.GetStatus() != "signal: killed" {
		t.Errorf("SIGTERM ignored, then SIGKILL: end %v err %v", killed.end, killed.err)
	}
}

func TestConnectAuthStatesAndRefusals(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: 10 * time.Millisecond, GatewayLag: time.Hour})
	ctx := context.Background()

	// Gateway lag: RUNNING but unknown to the gateway is not_found, then
	// the same call succeeds once it is registered.
	vm := h.running(map[string]any{})
	s := h.session(vm)
	if res := s.run("echo hi"); codeOf(res.err) != connect.CodeNotFound {
		t.Errorf("during the lag: %v, want not_found", res.err)
	}
	h.srv.Configure(func(o *primemock.Options) { o.GatewayLag = -1 })
	h.waitEvent(primemock.EventGatewayReady, vm)
	if res := s.run("echo hi"); res.err != nil || res.stdout != "hi\n" {
		t.Errorf("after the lag: %q %v", res.stdout, res.err)
	}

	// Tokens.
	if res := s.startWith(ctx, "", startRequest("echo", nil, nil), nil); codeOf(res.err) != connect.CodeUnauthenticated {
		t.Errorf("no token: %v", res.err)
	}
	if res := s.startWith(ctx, "bogus", startRequest("echo", nil, nil), nil); codeOf(res.err) != connect.CodeUnauthenticated {
		t.Errorf("unknown token: %v", res.err)
	}
	other := h.session(h.ready(map[string]any{}))
	if res := other.startWith(ctx, s.token, startRequest("echo", nil, nil), nil); codeOf(res.err) != connect.CodePermissionDenied {
		t.Errorf("another sandbox's token: %v", res.err)
	}
	// Requests the mock cannot run.
	for _, req := range []*commandsessionpb.StartRequest{
		{},
		{Command: &commandsessionpb.CommandSpec{Cmd: "/bin/sh", Args: []string{"-c", "echo"}}},
		{Command: &commandsessionpb.CommandSpec{Cmd: "/bin/bash", Args: []string{"echo"}}},
		{Command: &commandsessionpb.CommandSpec{Cmd: "/bin/bash", Args: []string{"-c", "echo"}}, Pty: &commandsessionpb.PTY{}},
	} {
		if res := s.start(ctx, req); codeOf(res.err) != connect.CodeInvalidArgument {
			t.Errorf("%v: %v, want invalid_argument", req, res.err)
		}
	}
	// stdin true is what the SDK's open_process sends: accepted.
	req := startRequest("echo open", nil, nil)
	*req.Stdin = true
	if res := s.start(ctx, req); res.err != nil || res.stdout != "open\n" {
		t.Errorf("stdin true: %q %v", res.stdout, res.err)
	}
	// The procedures the mock does not implement.
	in := connect.NewRequest(&commandsessionpb.SendInputRequest{})
	in.Header().Set("Authorization", "Bearer "+s.token)
	if _, err := s.client.SendInput(ctx, in); codeOf(err) != connect.CodeUnimplemented {
		t.Errorf("SendInput: %v, want unimplemented", err)
	}

	// A PENDING sandbox is unavailable; a deleted one is not_found.
	h.srv.Configure(func(o *primemock.Options) { o.BootDelay = time.Hour })
	pending := h.session(h.create(map[string]any{}))
	if res := pending.run("echo"); codeOf(res.err) != connect.CodeUnavailable {
		t.Errorf("PENDING: %v, want unavailable", res.err)
	}
	h.req("DELETE", "/api/v1/sandbox/"+vm, nil).must(t, 200)
	if res := s.run("echo"); codeOf(res.err) != connect.CodeNotFound {
		t.Errorf("deleted: %v, want not_found", res.err)
	}
	if _, err := s.list(); codeOf(err) != connect.CodeNotFound {
		t.Errorf("List on a deleted sandbox: %v, want not_found", err)
	}
}

// TestConnectDeleteStopsProcesses: deleting a sandbox ends its running
// process; its stream fails as a vanished sandbox does.
func TestConnectDeleteStopsProcesses(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: 10 * time.Millisecond, GatewayLag: -1})
	id := h.ready(map[string]any{})
	s := h.session(id)
	done := make(chan result, 1)
	go func() { done <- s.run("sleep 3600") }()
	h.waitEvent(primemock.EventCommandStarted, id)
	h.req("DELETE", "/api/v1/sandbox/"+id, nil).must(t, 200)
	if res := <-done; codeOf(res.err) != connect.CodeNotFound {
		t.Errorf("stream of a deleted sandbox: %v", res.err)
	}
	if e := h.waitEvent(primemock.EventCommandExecuted, id); e.ExitCode != -1 {
		t.Errorf("command_executed = %+v", e)
	}
	var errs []error
	for _, e := range h.srv.Events() {
		if e.Type == primemock.EventCommandExecuted && e.SandboxID != id {
			errs = append(errs, errors.New(e.SandboxID))
		}
	}
	if len(errs) > 0 {
		t.Errorf("unexpected executions: %v", errs)
	}
}
