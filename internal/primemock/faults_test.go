package primemock_test

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/primeintellect/terraform-provider-prime/internal/commandsession/commandsessionpb"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock/shell/shelltest"
)

// edge503 asserts the edge proxy's answer during an outage: 503 and a body
// that is not JSON.
func edge503(t *testing.T, what string, status int, body []byte) {
	t.Helper()
	if status != http.StatusServiceUnavailable || !strings.Contains(string(body), "503 Service Temporarily Unavailable") {
		t.Errorf("%s during the outage: %d %s", what, status, body)
	}
}

func (h *harness) rawPost(path, token string, body string) (int, []byte) {
	h.t.Helper()
	r, _ := http.NewRequest(http.MethodPost, path, strings.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+token)
	r.Header.Set("Content-Type", "application/json")
	resp, err := h.ts.Client().Do(r)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// TestGatewayOutage: an outage fails every gateway route and the job
// batch, cuts the Connect stream in flight, and leaves its process, and a
// background job, running.
func TestGatewayOutage(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: 10 * time.Millisecond, GatewayLag: -1, SleepScale: 0.001, KeepaliveInterval: time.Hour})
	vm, other := h.ready(map[string]any{}), h.ready(map[string]any{})
	s, gv, gc := h.session(vm), h.gateway(vm), h.gateway(other)
	gv.readFile("/etc/hostname", "", "").must(t, 200)

	// A live stream: a background job ("30 minutes" of sleep, 1.8 s of
	// wall time), then a foreground process that prints and sleeps.
	script := shelltest.SDKJobCommand("0badcafe", "sleep 1800; echo finished", "", nil) + "\necho ready; sleep 1000000"
	streamDone := make(chan result, 1)
	ready := make(chan uint32, 1)
	go func() {
		var pid uint32
		streamDone <- s.startWith(context.Background(), s.token, startRequest(script, nil, nil), func(ev *commandsessionpb.CommandSessionEvent) {
			if st := ev.GetStart(); st != nil {
				pid = st.GetPid()
			}
			if string(ev.GetData().GetStdout()) == "ready\n" {
				ready <- pid
			}
		})
	}()
	streamPID := <-ready

	h.req("POST", "/_mock/config", map[string]any{"gateway_outage": "1h"}).must(t, 200)
	cfg := h.req("GET", "/_mock/config", nil).must(t, 200)
	if left, err := time.ParseDuration(cfg.body["gateway_outage"].(string)); err != nil || left < 59*time.Minute || left > time.Hour {
		t.Errorf("gateway_outage reads %v", cfg.body["gateway_outage"])
	}

	cut := <-streamDone
	if connect.CodeOf(cut.err) != connect.CodeUnavailable {
		t.Errorf("the live stream: %v, want unavailable", cut.err)
	}
	a := gv.readFile("/etc/hostname", "", "")
	edge503(t, "read-file", a.status, a.body)
	a = gc.upload(other, "/tmp/x", []byte("x"))
	edge503(t, "upload", a.status, a.body)
	a = gc.download(other, "/etc/hostname")
	edge503(t, "download", a.status, a.body)
	status, body := h.rawPost(h.ts.URL+jobBatchPath, h.key, `{"jobs":[{"sandbox_id":"`+vm+`","job_id":"0badcafe"}]}`)
	edge503(t, "the job batch", status, body)
	if res := s.run("echo x"); connect.CodeOf(res.err) != connect.CodeUnavailable {
		t.Errorf("Start during the outage: %v", res.err)
	}
	if _, err := s.list(); connect.CodeOf(err) != connect.CodeUnavailable {
		t.Errorf("List during the outage: %v", err)
	}
	// The rest of the API is up.
	h.req("GET", "/api/v1/sandbox/"+vm, nil).must(t, 200)

	// The background job goes on and writes its exit file.
	if got := h.waitFile(vm, "/tmp/job_0badcafe.exit"); got != "0\n" {
		t.Errorf("the job's exit file %q", got)
	}

	h.req("POST", "/_mock/config", map[string]any{"gateway_outage": "0s"}).must(t, 200)
	if a := gv.readFile("/tmp/job_0badcafe.stdout.log", "", "").must(t, 200); a.json["content"] != "finished\n" {
		t.Errorf("after the outage: %s", a.body)
	}
	// The process whose stream was cut is still running.
	procs, err := s.list()
	if err != nil || len(procs) != 1 || procs[0].GetPid() != streamPID {
		t.Errorf("List after the outage: %v %v, want the cut stream's process %d", procs, err, streamPID)
	}
	if err := s.signal(streamPID, commandsessionpb.Signal_SIGNAL_SIGTERM); err != nil {
		t.Fatalf("the cut command was gone: %v", err)
	}
	if e := h.waitFor("the cut command's end", func(e primemock.Event) bool {
		return e.Type == primemock.EventCommandExecuted && e.PID == streamPID && e.SandboxID == vm
	}); e.Signal != "SIGTERM" {
		t.Errorf("the cut command ended %+v", e)
	}
}

// TestGatewayOutageFromTheStart: an outage set in Options holds from the
// first request; the API outside the gateway is unaffected.
func TestGatewayOutageFromTheStart(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: 10 * time.Millisecond, GatewayLag: -1, GatewayOutageUntil: time.Now().Add(time.Hour)})
	id := h.ready(map[string]any{})
	g := h.gateway(id)
	a := g.readFile("/etc/hostname", "", "")
	edge503(t, "read-file", a.status, a.body)
	h.srv.Configure(func(o *primemock.Options) { o.GatewayOutageUntil = time.Time{} })
	g.readFile("/etc/hostname", "", "").must(t, 200)
}

// TestFileFaultRates: upload_fail_rate injects 503s, half of them after
// the file was written; download_fail_rate fails downloads and read-file.
func TestFileFaultRates(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: 10 * time.Millisecond, GatewayLag: -1, UploadFailRate: 1, DownloadFailRate: 1})
	id := h.ready(map[string]any{})
	g := h.gateway(id)
	written, notWritten := 0, 0
	for i := range 20 {
		p := "/tmp/f" + strconv.Itoa(i)
		a := g.upload(id, p, []byte("x"))
		if a.status != http.StatusServiceUnavailable || a.json["error"] != "service_unavailable" {
			t.Fatalf("upload %d: %d %s", i, a.status, a.body)
		}
		if _, found := h.srv.ReadFile(id, p); found {
			written++
		} else {
			notWritten++
		}
	}
	if written == 0 || notWritten == 0 {
		t.Errorf("post-action 503s: %d written, %d not, want both", written, notWritten)
	}
	_ = h.srv.WriteFile(id, "/tmp/r", []byte("r"), 0)
	if a := g.download(id, "/tmp/r"); a.status != http.StatusServiceUnavailable {
		t.Errorf("download: %d", a.status)
	}
	if a := g.readFile("/tmp/r", "", ""); a.status != http.StatusServiceUnavailable {
		t.Errorf("read-file: %d", a.status)
	}
	if st := h.srv.Stats(); st.InjectedGateway503 != 22 || st.Injected503 != 0 {
		t.Errorf("counters: %d gateway, %d API", st.InjectedGateway503, st.Injected503)
	}
	h.req("POST", "/_mock/config", map[string]any{"upload_fail_rate": 0, "download_fail_rate": 0}).must(t, 200)
	g.upload(id, "/tmp/ok", []byte("ok")).must(t, 200)
	g.readFile("/tmp/ok", "", "").must(t, 200)
}

// TestSleepScale: with sleep_scale, "sleep 600" fits in a 10 s command; at
// scale 1 it outlives a 1 s deadline.
func TestSleepScale(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: 10 * time.Millisecond, GatewayLag: -1, SleepScale: 0.001})
	id := h.ready(map[string]any{})
	g := h.gateway(id)
	if res := g.exec("sleep 600 && echo woke"); res.stdout != "woke\n" {
		t.Errorf("scaled sleep: %q", res.stdout)
	}
	h.req("POST", "/_mock/config", map[string]any{"sleep_scale": 1}).must(t, 200)
	res := g.startWith(context.Background(), g.token, startRequest("sleep 600", nil, nil), nil, "1000")
	if connect.CodeOf(res.err) != connect.CodeDeadlineExceeded {
		t.Errorf("unscaled sleep past a 1 s deadline: %v, want deadline_exceeded", res.err)
	}
}

func TestConfigFileKnobs(t *testing.T) {
	h := newHarness(t, primemock.Options{})
	cfg := h.req("GET", "/_mock/config", nil).must(t, 200).body
	for k, want := range map[string]any{
		"sleep_scale": 1.0, "read_file_limit": float64(primemock.DefaultReadFileLimit), "upload_fail_rate": 0.0,
		"download_fail_rate": 0.0, "gateway_outage": "0s", "job_batch_unsupported": false,
	} {
		if cfg[k] != want {
			t.Errorf("default %s = %v, want %v", k, cfg[k], want)
		}
	}
	cfg = h.req("POST", "/_mock/config", map[string]any{
		"sleep_scale": 0.01, "read_file_limit": 4096, "upload_fail_rate": 0.25, "download_fail_rate": 0.5,
		"job_batch_unsupported": true,
	}).must(t, 200).body
	o := h.srv.Options()
	if o.SleepScale != 0.01 || o.ReadFileLimit != 4096 || o.UploadFailRate != 0.25 || o.DownloadFailRate != 0.5 || !o.JobBatchUnsupported ||
		cfg["read_file_limit"] != 4096.0 {
		t.Errorf("after the patch: %+v %v", o, cfg)
	}
	for _, bad := range []map[string]any{
		{"sleep_scale": 0}, {"sleep_scale": -1}, {"read_file_limit": 0}, {"upload_fail_rate": 2},
		{"download_fail_rate": -0.1}, {"gateway_outage": "-1s"}, {"gateway_outage": "soon"},
	} {
		h.req("POST", "/_mock/config", bad).must(t, 422)
	}
}
