package primemock_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// gateway is one sandbox's token and base URL on the gateway
// ({gateway_url}/{user_ns}/{job_id}), with its command session.
type gateway struct {
	session
}

func (h *harness) gateway(id string) gateway {
	h.t.Helper()
	return gateway{session: h.session(id)}
}

// exec runs a command over the command session, the one command
// transport, and fails the test unless it ran to its end.
func (g gateway) exec(command string) result {
	g.h.t.Helper()
	res := g.run(command)
	if res.err != nil || res.end == nil {
		g.h.t.Fatalf("%q: %v (end %v)", command, res.err, res.end)
	}
	return res
}

// TestGatewayHasNoRESTExec: containers were retired, and with them the
// REST exec route the SDK used for them; the gateway serves commands over
// the command session only, and a POST to /exec is a 404 that runs nothing.
func TestGatewayHasNoRESTExec(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: 10 * time.Millisecond, GatewayLag: -1})
	id := h.ready(map[string]any{})
	g := h.gateway(id)
	body, _ := json.Marshal(map[string]any{"command": "echo hi", "working_dir": nil, "env": map[string]string{}, "sandbox_id": id, "timeout": 10})
	r, _ := http.NewRequest(http.MethodPost, g.base+"/exec", bytes.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+g.token)
	r.Header.Set("Content-Type", "application/json")
	resp, err := h.ts.Client().Do(r)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("POST /exec: status %d, want 404", resp.StatusCode)
	}
	for _, e := range h.srv.Events() {
		if e.Type == primemock.EventCommandStarted || e.Type == primemock.EventCommandExecuted {
			t.Errorf("a REST exec ran: %+v", e)
		}
	}
	if res := g.exec("echo hi"); res.stdout != "hi\n" {
		t.Errorf("the command session: %q", res.stdout)
	}
}

// TestGatewayNotRunningLagAndExpiry: the gateway's answers for a sandbox
// it cannot serve, on the file routes (the command session's are in
// TestConnectAuthStatesAndRefusals): PENDING is 409, RUNNING but not yet
// registered 502 sandbox_not_found until the lag has passed, and a token
// expires on the mock's clock.
func TestGatewayNotRunningLagAndExpiry(t *testing.T) {
	var offset atomic.Int64
	h := newHarness(t, primemock.Options{
		BootDelay:  time.Hour,
		GatewayLag: time.Hour,
		Now:        func() time.Time { return time.Now().Add(time.Duration(offset.Load())) },
	})
	id := h.create(map[string]any{})
	g := h.gateway(id)
	nr := g.readFile("/etc/hostname", "", "").must(t, http.StatusConflict)
	if !strings.Contains(nr.json["message"].(string), "PENDING") {
		t.Errorf("409 body = %s", nr.body)
	}
	h.srv.Configure(func(o *primemock.Options) { o.BootDelay = time.Millisecond })
	lagged := h.running(map[string]any{})
	lg := h.gateway(lagged)
	lg.readFile("/etc/hostname", "", "").gatewayErr(t, http.StatusBadGateway, "sandbox_not_found")
	h.srv.Configure(func(o *primemock.Options) { o.GatewayLag = -1 })
	h.waitEvent(primemock.EventGatewayReady, lagged)
	lg.upload(lagged, "/tmp/up", []byte("up")).must(t, 200)
	if res := lg.exec("cat /tmp/up"); res.stdout != "up" {
		t.Errorf("after the lag: %q", res.stdout)
	}
	// The token expires on the mock's clock.
	offset.Store(int64(11 * time.Minute))
	exp := g.readFile("/etc/hostname", "", "").must(t, http.StatusUnauthorized)
	if !strings.Contains(exp.json["message"].(string), "expired") {
		t.Errorf("401 body = %s", exp.body)
	}
}
