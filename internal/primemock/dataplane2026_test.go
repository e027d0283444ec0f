package primemock_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// TestEgressPutAcceptedOnPausedAppliedOnResume: a PUT on a PAUSED VM is
// accepted (202, a new generation) and nothing is applied until the
// resume; the resume (the API's, 202 then RUNNING) applies the policy the
// sandbox holds then.
func TestEgressPutAcceptedOnPausedAppliedOnResume(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: 10 * time.Millisecond, ApplyDelay: 5 * time.Millisecond, GatewayLag: -1})
	id := h.ready(map[string]any{})
	path := "/api/v1/sandbox/" + id + "/egress-policy"

	if err := h.srv.Pause(id); err != nil {
		t.Fatal(err)
	}
	if sb := h.req("GET", "/api/v1/sandbox/"+id, nil).must(t, 200).body; sb["status"] != prime.StatusPaused {
		t.Fatalf("after Pause: %v", sb["status"])
	}
	if h.reachable(id, "example.com") {
		t.Error("a paused sandbox reaches the network")
	}
	put := h.req("PUT", path, map[string]any{"allowlist": []string{"example.com"}, "denylist": nil, "rules": map[string]any{}}).must(t, 202).body
	gen := int64(put["generation"].(float64))
	if put["applied"] != false {
		t.Fatalf("PUT on a paused sandbox = %v", put)
	}
	// The gateway does not serve a paused sandbox.
	h.gateway(id).upload(id, "/tmp/x", []byte("x")).gatewayErr(t, http.StatusConflict, "sandbox_not_ready")
	// Nothing is applied while it is paused: a second generation is
	// accepted too, and after many apply delays both still wait.
	put2 := h.req("PUT", path, map[string]any{"allowlist": []string{"example.org"}, "denylist": nil}).must(t, 202).body
	gen2 := int64(put2["generation"].(float64))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := h.srv.WaitForEvent(ctx, func(e primemock.Event) bool { return e.Type == primemock.EventPolicyApplied && e.SandboxID == id }); err == nil {
		t.Fatal("a policy was applied while the sandbox was paused")
	}
	if st := h.req("GET", path, nil).must(t, 200).body; st["applied"] != false || st["generation"] != float64(gen2) {
		t.Errorf("paused status = %v", st)
	}

	h.req("POST", "/api/v1/sandbox/"+id+"/resume", nil).must(t, 202)
	h.waitEvent(primemock.EventPolicyApplied, id, gen2)
	if !h.reachable(id, "example.org") || h.reachable(id, "example.com") {
		t.Error("after the resume the newest policy must be enforced")
	}
	for _, e := range h.srv.Events() {
		if e.Type == primemock.EventPolicyApplied && e.SandboxID == id && e.Generation == gen {
			t.Error("the superseded generation was applied")
		}
	}
}

func waitFile(t *testing.T, h *harness, id, path string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := h.srv.WaitForFile(ctx, id, path, func(_ []byte, exists bool) bool { return exists }); err != nil {
		t.Fatal(err)
	}
}

// TestEgressPutAnswers: the 202's body as each egress_put_answer knob
// gives it, and the rules object's check.
func TestEgressPutAnswers(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: 10 * time.Millisecond})
	id := h.running(map[string]any{})
	path := "/api/v1/sandbox/" + id + "/egress-policy"
	raw := func() (int, string) {
		r, _ := http.NewRequest(http.MethodPut, h.ts.URL+path, strings.NewReader(`{"allowlist":["a.com"],"denylist":null,"rules":{}}`))
		r.Header.Set("Authorization", "Bearer "+h.key)
		resp, err := h.ts.Client().Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, tc := range []struct{ knob, want string }{
		{primemock.EgressPutMinimal, `{"generation":2}` + "\n"},
		{primemock.EgressPutEmpty, ""},
	} {
		h.srv.Configure(func(o *primemock.Options) { o.EgressPutAnswer = tc.knob })
		if tc.knob == primemock.EgressPutEmpty {
			tc.want = ""
		}
		code, body := raw()
		if code != http.StatusAccepted || (tc.knob == primemock.EgressPutMinimal && !strings.Contains(body, `"generation":`)) ||
			(tc.knob == primemock.EgressPutEmpty && body != "") {
			t.Errorf("%s: %d %q", tc.knob, code, body)
		}
	}
	h.srv.Configure(func(o *primemock.Options) { o.EgressPutAnswer = "" })
	h.req("PUT", path, map[string]any{"allowlist": []string{}, "denylist": nil, "rules": "x"}).must(t, 422)
	h.req("PUT", path, map[string]any{"allowlist": []string{}, "denylist": nil, "rules": nil}).must(t, 202)
}

// TestRateLimits: with rate_limits on, the published limits (scaled) are
// 429s with a Retry-After; off, the peaks are still measured. A batch
// counts once for each sandbox it names.
func TestRateLimits(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: 10 * time.Millisecond, NoRateLimits: true})
	a := h.running(map[string]any{})
	b := h.running(map[string]any{})
	for range 5 {
		h.req("GET", "/api/v1/sandbox/"+a+"/egress-policy", nil).must(t, 200)
	}
	h.req("POST", "/api/v1/sandbox/status:batchGet", map[string]any{"sandbox_ids": []string{a, b}}).must(t, 200)
	if p := h.srv.Stats().RatePeaks; p["egress GET"] != 5 || p["status batchGet"] != 1 {
		t.Errorf("peaks = %v", p)
	}

	// 300 × 0.01 = 3 egress GETs, 120 × 0.01 → 1 PUT per sandbox a minute.
	h.srv.Configure(func(o *primemock.Options) { o.NoRateLimits, o.RateLimitScale = false, 0.01 })
	limited := h.req("GET", "/api/v1/sandbox/"+a+"/egress-policy", nil).must(t, 429)
	if ra := limited.header.Get("Retry-After"); ra == "" || ra == "0" {
		t.Errorf("Retry-After %q", ra)
	}
	h.req("GET", "/api/v1/sandbox/"+b+"/egress-policy", nil).must(t, 200) // another sandbox's window
	h.req("PUT", "/api/v1/sandbox/"+b+"/egress-policy", map[string]any{"allowlist": []string{}, "denylist": nil}).must(t, 202)
	h.req("PUT", "/api/v1/sandbox/"+b+"/egress-policy", map[string]any{"allowlist": []string{}, "denylist": nil}).must(t, 429)
	for range 2 {
		h.req("POST", "/api/v1/sandbox/status:batchGet", map[string]any{"sandbox_ids": []string{a, b}}).must(t, 200)
	}
	h.req("POST", "/api/v1/sandbox/status:batchGet", map[string]any{"sandbox_ids": []string{b}}).must(t, 429)
	if st := h.srv.Stats(); st.RateLimited429 != 3 {
		t.Errorf("rate_limited_429 = %d", st.RateLimited429)
	}
}

// TestTerminateSandboxMidJob: the platform ending a sandbox while a
// background job runs: the error context carries the reason, the job
// batch says NOT_RUNNING, the gateway no longer serves it.
func TestTerminateSandboxMidJob(t *testing.T) {
	for reason, want := range primemock.Terminations {
		t.Run(reason, func(t *testing.T) {
			h := newHarness(t, primemock.Options{BootDelay: 10 * time.Millisecond, GatewayLag: -1})
			id := h.ready(map[string]any{})
			h.session(id).run("nohup sh -c 'echo $$ > /tmp/job_0badcafe.pgid; (sleep 100) > /tmp/job_0badcafe.stdout.log 2> /tmp/job_0badcafe.stderr.log; echo $? > /tmp/job_0badcafe.exit' < /dev/null > /dev/null 2>&1 &")
			waitFile(t, h, id, "/tmp/job_0badcafe.pgid")
			h.req("POST", "/_mock/sandbox/"+id+"/terminate", map[string]any{"reason": reason}).must(t, 200)

			ec := h.req("GET", "/api/v1/sandbox/"+id+"/error-context", nil).must(t, 200).body
			if ec["status"] != want.Status || (want.ErrorType != "" && ec["errorType"] != want.ErrorType) || ec["errorMessage"] != want.ErrorMessage {
				t.Errorf("error context = %v, want %+v", ec, want)
			}
			jobs := h.req("POST", "/api/v1/sandbox/background-jobs/status:batchGet",
				map[string]any{"jobs": []map[string]string{{"sandbox_id": id, "job_id": "0badcafe"}}}).must(t, 200).body
			if errs := jobs["errors"].([]any); len(errs) != 1 || errs[0].(map[string]any)["code"] != "NOT_RUNNING" {
				t.Errorf("job batch = %v", jobs)
			}
			h.waitFor("the job's end", func(e primemock.Event) bool {
				return e.Type == primemock.EventCommandExecuted && e.SandboxID == id && e.Transport == primemock.TransportBackground
			})
			h.req("POST", "/_mock/sandbox/"+id+"/terminate", map[string]any{"reason": reason}).must(t, 409)
		})
	}
}

// TestUploadLimit: 16 MiB per uploaded file; a refused upload leaves
// nothing behind.
func TestUploadLimit(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: 10 * time.Millisecond, GatewayLag: -1})
	id := h.ready(map[string]any{})
	g := h.gateway(id)
	g.upload(id, "/data/exact.bin", bytes.Repeat([]byte{1}, primemock.MaxUploadBytes)).must(t, 200)
	g.upload(id, "/data/over.bin", bytes.Repeat([]byte{1}, primemock.MaxUploadBytes+1)).gatewayErr(t, http.StatusRequestEntityTooLarge, "invalid_upload")
	if _, found := h.srv.ReadFile(id, "/data/over.bin"); found {
		t.Error("a refused upload left a file")
	}
	g.readFile("/data/exact.bin", "", "").gatewayErr(t, http.StatusRequestEntityTooLarge, "file_too_large")
}
