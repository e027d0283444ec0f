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

func TestGatewayExec(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: 10 * time.Millisecond, ApplyDelay: 5 * time.Millisecond})
	id := h.vmApplied()
	h.putPolicy(id, []string{"allowed.example"}, nil)
	g := h.gateway(id)

	a := g.exec("echo hi; probe allowed.example && echo ok; curl -s https://other.example; echo bye >&2", 10).must(t, 200)
	keysOf(t, "exec answer", a.body, "stdout", "stderr", "exit_code")
	if a.body["stdout"] != "hi\nok\n" || a.body["exit_code"] != 0.0 || !strings.Contains(a.body["stderr"].(string), "other.example") {
		t.Errorf("exec = %v", a.body)
	}
	// A non-zero exit is a normal 200 result.
	if a := g.exec("exit 42", 10).must(t, 200); a.body["exit_code"] != 42.0 {
		t.Errorf("exit 42 = %v", a.body)
	}
	e := h.waitEvent(primemock.EventCommandExecuted, id)
	if !strings.HasPrefix(e.Command, "echo hi") || e.ExitCode != 0 || e.AppliedGeneration != 1 || e.TimedOut {
		t.Errorf("command_executed = %+v", e)
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
		timedOut = timedOut || (e.Type == primemock.EventCommandExecuted && e.TimedOut && e.Command == "sleep 5")
	}
	if !timedOut {
		t.Error("no timed-out command_executed event")
	}

	// Token and body checks.
	g.execAt(g.url, "bogus", map[string]any{"command": "echo"}).must(t, 401)
	g.execAt(g.url, "", map[string]any{"command": "echo"}).must(t, 401)
	g.execAt(g.url, g.token, map[string]any{"timeout": 1}).must(t, 422)
	g.execAt(g.url, g.token, map[string]any{"command": "echo", "sandbox_id": "other"}).must(t, 400)
	other := h.running(map[string]any{})
	og := h.gateway(other)
	g.execAt(og.url, g.token, map[string]any{"command": "echo"}).must(t, 403)

	// Gone: the gateway's 502 sandbox_not_found.
	h.req("DELETE", "/api/v1/sandbox/"+id, nil).must(t, 200)
	gone := g.exec("echo", 10).must(t, http.StatusBadGateway)
	if gone.body["error"] != "sandbox_not_found" || gone.body["sandboxId"] != id {
		t.Errorf("502 body = %v", gone.body)
	}
	if st := h.srv.Stats(); st.Requests["POST /gateway/{user_ns}/{job_id}/exec"] < 8 {
		t.Errorf("exec requests not counted: %v", st.Requests)
	}
}

func TestGatewayNotRunningAndExpiry(t *testing.T) {
	var offset atomic.Int64
	h := newHarness(t, primemock.Options{
		BootDelay: time.Hour,
		Now:       func() time.Time { return time.Now().Add(time.Duration(offset.Load())) },
	})
	id := h.create(map[string]any{})
	g := h.gateway(id)
	nr := g.exec("echo", 10).must(t, http.StatusConflict)
	if !strings.Contains(nr.body["message"].(string), "PENDING") {
		t.Errorf("409 body = %v", nr.body)
	}
	// The token expires on the mock's clock.
	offset.Store(int64(11 * time.Minute))
	exp := g.exec("echo", 10).must(t, http.StatusUnauthorized)
	if !strings.Contains(exp.body["message"].(string), "expired") {
		t.Errorf("401 body = %v", exp.body)
	}
}
