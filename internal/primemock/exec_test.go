package primemock_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// gateway is a token for one sandbox and the exec URL it opens.
type gateway struct {
	h     *harness
	token string
	url   string
}

func (h *harness) gateway(id string) gateway {
	h.t.Helper()
	a := h.req("POST", "/api/v1/sandbox/"+id+"/auth", nil).must(h.t, 200).body
	return gateway{h: h, token: a["token"].(string),
		url: a["gateway_url"].(string) + "/" + a["user_ns"].(string) + "/" + a["job_id"].(string) + "/exec"}
}

// exec posts the SDK's body shape to the gateway.
func (g gateway) exec(command string, timeout int) answer {
	g.h.t.Helper()
	return g.execAt(g.url, g.token, map[string]any{
		"command": command, "working_dir": nil, "env": map[string]string{}, "sandbox_id": "", "timeout": timeout,
	})
}

func (g gateway) execAt(url, token string, body map[string]any) answer {
	g.h.t.Helper()
	buf, _ := json.Marshal(body)
	r, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(buf))
	r.Header.Set("Authorization", "Bearer "+token)
	r.Header.Set("Content-Type", "application/json")
	resp, err := g.h.ts.Client().Do(r)
	if err != nil {
		g.h.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	if err := json.Unmarshal(raw, &a.body); err != nil {
		g.h.t.Fatalf("gateway answer is not a JSON object: %q", raw)
	}
	return a
}

var container = map[string]any{"vm": false}

func TestGatewayExecOnContainers(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: 10 * time.Millisecond, GatewayLag: 5 * time.Millisecond})
	id := h.ready(map[string]any{"vm": false, "environment_vars": map[string]string{"FROM_SANDBOX": "sb", "OVER": "sandbox"},
		"secrets": map[string]string{"TOKEN": "hunter22"}})
	g := h.gateway(id)

	a := g.exec("echo hi; probe anywhere.example && echo ok; echo bye >&2", 10).must(t, 200)
	keysOf(t, "exec answer", a.body, "stdout", "stderr", "exit_code")
	if a.body["stdout"] != "hi\nok\n" || a.body["stderr"] != "bye\n" || a.body["exit_code"] != 0.0 {
		t.Errorf("exec = %v", a.body)
	}
	// A non-zero exit is a normal 200 result; so is an unknown command.
	if a := g.exec("exit 42", 10).must(t, 200); a.body["exit_code"] != 42.0 {
		t.Errorf("exit 42 = %v", a.body)
	}
	if a := g.exec("pip install x", 10).must(t, 200); a.body["exit_code"] != 127.0 ||
		a.body["stderr"] != "bash: line 1: pip: command not found\n"+mockLacks("pip") {
		t.Errorf("unknown command = %v", a.body)
	}
	// The environment: the sandbox's variables and secrets (real values),
	// then the request's; the working directory.
	env := g.execAt(g.url, g.token, map[string]any{
		"command": `echo "$FROM_SANDBOX $OVER $TOKEN $REQ"; pwd`, "working_dir": "/srv",
		"env": map[string]string{"OVER": "request", "REQ": "r"}, "sandbox_id": id, "timeout": 10,
	}).must(t, 200)
	if env.body["stdout"] != "sb request hunter22 r\n/srv\n" {
		t.Errorf("environment and working dir: %v", env.body)
	}
	started := h.waitEvent(primemock.EventCommandStarted, id)
	executed := h.waitEvent(primemock.EventCommandExecuted, id)
	if started.Transport != "rest" || executed.Transport != "rest" || executed.PID < 1000 || executed.PID != started.PID ||
		!strings.HasPrefix(executed.Command, "echo hi") || executed.ExitCode != 0 || executed.TimedOut || executed.Signalled ||
		started.Seq > executed.Seq {
		t.Errorf("events: started %+v executed %+v", started, executed)
	}

	// Timeouts are the gateway's 408, recorded as timed out.
	to := g.exec("sleep 5", 1)
	to.must(t, http.StatusRequestTimeout)
	if to.body["error"] != "command_timeout" {
		t.Errorf("408 body = %v", to.body)
	}
	// The event is recorded before the answer is written.
	var timedOut bool
	for _, e := range h.srv.Events() {
		timedOut = timedOut || (e.Type == primemock.EventCommandExecuted && e.TimedOut && e.Command == "sleep 5" && e.ExitCode == -1)
	}
	if !timedOut {
		t.Error("no timed-out command_executed event")
	}

	// Token and body checks.
	g.execAt(g.url, "bogus", map[string]any{"command": "echo"}).must(t, 401)
	g.execAt(g.url, "", map[string]any{"command": "echo"}).must(t, 401)
	g.execAt(g.url, g.token, map[string]any{"timeout": 1}).must(t, 422)
	g.execAt(g.url, g.token, map[string]any{"command": "echo", "sandbox_id": "other"}).must(t, 400)
	other := h.ready(map[string]any{"vm": false})
	og := h.gateway(other)
	g.execAt(og.url, g.token, map[string]any{"command": "echo"}).must(t, 403)

	// Gone: the gateway's 502 sandbox_not_found.
	h.req("DELETE", "/api/v1/sandbox/"+id, nil).must(t, 200)
	gone := g.exec("echo", 10).must(t, http.StatusBadGateway)
	if gone.body["error"] != "sandbox_not_found" || gone.body["sandboxId"] != id {
		t.Errorf("502 body = %v", gone.body)
	}
	if st := h.srv.Stats(); st.Requests["POST /gateway/{user_ns}/{job_id}/exec"] != 11 {
		t.Errorf("exec requests counted: %v", st.Requests)
	}
}

// TestGatewayRefusesRESTExecOnVMs: VMs run commands over Connect only.
func TestGatewayRefusesRESTExecOnVMs(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: 10 * time.Millisecond, GatewayLag: -1})
	id := h.ready(map[string]any{})
	a := h.gateway(id).exec("echo hi", 10).must(t, http.StatusBadRequest)
	if a.body["error"] != "exec_not_supported" || !strings.Contains(a.body["message"].(string), "command_session.CommandSession/Start") {
		t.Errorf("REST exec on a VM = %v", a.body)
	}
	for _, e := range h.srv.Events() {
		if e.Type == primemock.EventCommandStarted || e.Type == primemock.EventCommandExecuted {
			t.Errorf("a refused exec ran: %+v", e)
		}
	}
}

func TestGatewayNotRunningLagAndExpiry(t *testing.T) {
	var offset atomic.Int64
	h := newHarness(t, primemock.Options{
		BootDelay:  time.Hour,
		GatewayLag: time.Hour,
		Now:        func() time.Time { return time.Now().Add(time.Duration(offset.Load())) },
	})
	id := h.create(container)
	g := h.gateway(id)
	nr := g.exec("echo", 10).must(t, http.StatusConflict)
	if !strings.Contains(nr.body["message"].(string), "PENDING") {
		t.Errorf("409 body = %v", nr.body)
	}
	// RUNNING but not yet known to the gateway: 502 sandbox_not_found,
	// until the lag has passed.
	h.srv.Configure(func(o *primemock.Options) { o.BootDelay = time.Millisecond })
	lagged := h.running(container)
	lg := h.gateway(lagged)
	if a := lg.exec("echo", 10).must(t, http.StatusBadGateway); a.body["error"] != "sandbox_not_found" {
		t.Errorf("during the lag: %v", a.body)
	}
	h.srv.Configure(func(o *primemock.Options) { o.GatewayLag = -1 })
	h.waitEvent(primemock.EventGatewayReady, lagged)
	if a := lg.exec("echo up", 10).must(t, 200); a.body["stdout"] != "up\n" {
		t.Errorf("after the lag: %v", a.body)
	}
	// The token expires on the mock's clock.
	offset.Store(int64(11 * time.Minute))
	exp := g.exec("echo", 10).must(t, http.StatusUnauthorized)
	if !strings.Contains(exp.body["message"].(string), "expired") {
		t.Errorf("401 body = %v", exp.body)
	}
}
