package primemock_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

func TestNeverApply(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: 10 * time.Millisecond, ApplyDelay: 5 * time.Millisecond, NeverApply: true})
	id := h.running(map[string]any{})
	path := "/api/v1/sandbox/" + id + "/egress-policy"

	put := h.req("PUT", path, map[string]any{"allowlist": []string{"example.com"}, "denylist": nil}).must(t, 202).body
	if put["generation"] != 1.0 || put["applied_generation"] != -1.0 || put["applied"] != false {
		t.Fatalf("PUT = %v", put)
	}
	// Observe across many apply delays (each observation is at least 10 of
	// them after the PUT): the generation is accepted, the data plane never
	// acknowledges it, and egress stays on the old (open) policy.
	for range 5 {
		time.Sleep(50 * time.Millisecond)
		p := h.req("GET", path, nil).must(t, 200).body
		if p["generation"] != 1.0 || p["applied_generation"] != -1.0 || p["applied"] != false {
			t.Fatalf("never-apply status = %v", p)
		}
		if !h.reachable(id, "google.com") {
			t.Fatal("an unapplied allowlist must not restrict egress (fail-open until applied)")
		}
	}
	// A second PUT advances the generation; applied_generation still does not.
	if p := h.req("PUT", path, map[string]any{"allowlist": nil, "denylist": []string{"x.com"}}).must(t, 202).body; p["generation"] != 2.0 || p["applied_generation"] != -1.0 {
		t.Errorf("second PUT = %v", p)
	}
	for _, e := range h.srv.Events() {
		if e.Type == primemock.EventPolicyApplied {
			t.Errorf("never-apply applied something: %+v", e)
		}
	}

	// The data plane ships: it catches up, applied_generation only moves
	// forward, and the newest generation ends up enforced.
	h.srv.SetNeverApply(false)
	h.waitEvent(primemock.EventPolicyApplied, id, 2)
	if h.reachable(id, "x.com") || !h.reachable(id, "google.com") {
		t.Error("after apply, the denylist must be enforced")
	}
	last := int64(-1)
	for _, e := range h.srv.Events() {
		if e.Type == primemock.EventPolicyApplied && e.SandboxID == id {
			if e.Generation <= last {
				t.Errorf("applied_generation went from %d to %d", last, e.Generation)
			}
			last = e.Generation
		}
	}
}

func TestNeverApplyCreateTimeListsFailClosed(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: 10 * time.Millisecond, NeverApply: true})
	id := h.running(map[string]any{"network_allowlist": []string{"example.com"}})
	if h.reachable(id, "example.com") || h.reachable(id, "other.com") {
		t.Error("create-time lists must block all egress until applied")
	}
	fresh := h.running(map[string]any{})
	if p := h.req("GET", "/api/v1/sandbox/"+fresh+"/egress-policy", nil).body; p["applied_generation"] != -1.0 {
		t.Errorf("never-apply fresh VM = %v", p)
	}
	if !h.reachable(fresh, "example.com") {
		t.Error("a fresh VM is open while nothing is applied")
	}
	h.srv.SetNeverApply(false)
	h.waitEvent(primemock.EventPolicyApplied, id, 0)
	if !h.reachable(id, "example.com") || h.reachable(id, "other.com") {
		t.Error("once applied, the create-time allowlist is enforced")
	}
}

func TestThrottle(t *testing.T) {
	h := newHarness(t, primemock.Options{ThrottleRate: 1, RetryAfter: 1500 * time.Millisecond})
	a := h.req("GET", "/api/v1/sandbox", nil).must(t, http.StatusTooManyRequests)
	if got := a.header.Get("Retry-After"); got != "2" {
		t.Errorf("Retry-After = %q, want whole seconds rounded up (2)", got)
	}
	keysOf(t, "429", a.body, "detail")
	h.req("GET", "/_mock/stats", nil).must(t, 200) // introspection is never throttled

	h.srv.Configure(func(o *primemock.Options) { o.RetryAfter = time.Millisecond })
	if got := h.req("POST", "/api/v1/sandbox", map[string]any{}).must(t, 429).header.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After = %q, want at least 1", got)
	}
	if st := h.srv.Stats(); st.Injected429 != 2 || st.SandboxesCreated != 0 {
		t.Errorf("stats = %+v", st)
	}
}

func TestInjected503PostActionAndIdempotentReplay(t *testing.T) {
	h := newHarness(t, primemock.Options{FailRate: 1, Seed: 7})
	// GETs fail before acting, with a JSON detail.
	keysOf(t, "503", h.req("GET", "/api/v1/sandbox", nil).must(t, 503).body, "detail")

	// Retry one create (one idempotency key) until a 503 hides a sandbox
	// that was in fact created: half of the injected 503s are post-action.
	body := map[string]any{"name": "idem", "docker_image": "i", "idempotency_key": "k-1"}
	for i := 0; h.srv.Stats().SandboxesCreated == 0; i++ {
		if i == 100 {
			t.Fatal("no post-action 503 in 100 attempts")
		}
		h.req("POST", "/api/v1/sandbox", body).must(t, 503)
	}
	created := h.waitEvent(primemock.EventSandboxCreated, "")

	h.srv.SetFailRate(0)
	replay := h.req("POST", "/api/v1/sandbox", body).must(t, 201).body
	if replay["id"] != created.SandboxID {
		t.Errorf("replay id %v, want the sandbox created behind the 503 (%s)", replay["id"], created.SandboxID)
	}
	st := h.srv.Stats()
	if st.SandboxesCreated != 1 || st.IdempotentReplays != 1 || st.Injected503 < 2 {
		t.Errorf("stats = %+v", st)
	}
	if st.Requests["POST /api/v1/sandbox"] < 2 {
		t.Errorf("requests = %v", st.Requests)
	}
}

func TestTypedClientSurvivesFaults(t *testing.T) {
	h := newHarness(t, primemock.Options{FailRate: 0.4, Seed: 3, BootDelay: time.Hour})
	c, err := prime.New(prime.Options{
		Config:     prime.Config{APIKey: "k", BaseURL: h.ts.URL},
		Retry:      prime.Backoff{Initial: time.Millisecond, Factor: 1.5, Max: 5 * time.Millisecond},
		MaxRetries: 30,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ids := map[string]bool{}
	for i := range 10 {
		sb, err := c.CreateSandbox(ctx, prime.CreateSandboxRequest{Name: fmt.Sprint("f", i), DockerImage: "i"})
		if err != nil {
			t.Fatal(err)
		}
		ids[sb.ID] = true
		// A retried DELETE whose first attempt acted must still succeed.
		if err := c.DeleteSandbox(ctx, sb.ID); err != nil {
			t.Fatal(err)
		}
	}
	st := h.srv.Stats()
	if len(ids) != 10 || st.SandboxesCreated != 10 {
		t.Errorf("%d ids, %d created (replays %d, 503s %d): retries must not duplicate", len(ids), st.SandboxesCreated, st.IdempotentReplays, st.Injected503)
	}
	if st.Injected503 == 0 {
		t.Error("no faults were injected")
	}
}

// TestLatency: every API and gateway request waits at least Latency
// (jitter only adds; TestLatencyJitterDraws checks the draws themselves),
// and introspection never waits.
func TestLatency(t *testing.T) {
	const lat = 40 * time.Millisecond
	h := newHarness(t, primemock.Options{Latency: lat, LatencyJitter: 10 * time.Millisecond, BootDelay: time.Millisecond, GatewayLag: -1})
	for range 3 {
		start := time.Now()
		h.req("GET", "/api/v1/sandbox", nil).must(t, 200)
		if took := time.Since(start); took < lat {
			t.Errorf("request took %s, want at least %s", took, lat)
		}
	}
	id := h.ready(map[string]any{})
	g := h.gateway(id)
	start := time.Now()
	g.readFile("/etc/hostname", "", "").must(t, 200)
	if took := time.Since(start); took < lat {
		t.Errorf("gateway request took %s, want at least %s", took, lat)
	}
	// Introspection is never delayed: with an hour of latency it still
	// answers (the harness client would otherwise hang until the deadline).
	slow := newHarness(t, primemock.Options{Latency: time.Hour})
	slow.ts.Client().Timeout = 10 * time.Second
	slow.req("GET", "/_mock/stats", nil).must(t, 200)
	slow.req("GET", "/_mock/events", nil).must(t, 200)
}

func TestPeakInFlight(t *testing.T) {
	h := newHarness(t, primemock.Options{Latency: 100 * time.Millisecond})
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() {
			r, _ := http.NewRequest(http.MethodGet, h.ts.URL+"/api/v1/sandbox", nil)
			r.Header.Set("Authorization", "Bearer k")
			if resp, err := h.ts.Client().Do(r); err == nil {
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	if p := h.srv.Stats().PeakInFlight; p < 2 {
		t.Errorf("peak_in_flight = %d for 5 concurrent requests", p)
	}
}

func TestBootProgression(t *testing.T) {
	const boot = 200 * time.Millisecond
	h := newHarness(t, primemock.Options{BootDelay: boot})
	id := h.create(map[string]any{})
	seen := []string{}
	var running map[string]any
	// A steady 5 ms poll sees each 100 ms phase many times.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := prime.Poll(ctx, prime.Backoff{Initial: 5 * time.Millisecond}, func(context.Context) (bool, error) {
		sb := h.req("GET", "/api/v1/sandbox/"+id, nil).must(t, 200).body
		st := sb["status"].(string)
		if len(seen) == 0 || seen[len(seen)-1] != st {
			seen = append(seen, st)
		}
		if st != "RUNNING" && sb["startedAt"] != nil {
			t.Errorf("startedAt set while %s", st)
		}
		running = sb
		return st == "RUNNING", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(seen, ">"); got != "PENDING>PROVISIONING>RUNNING" {
		t.Errorf("statuses observed: %s", got)
	}
	if running["startedAt"] == nil {
		t.Error("startedAt not set on RUNNING")
	}
	created := h.waitEvent(primemock.EventSandboxCreated, id)
	prov := h.waitEvent(primemock.EventSandboxProvisioning, id)
	run := h.waitEvent(primemock.EventSandboxRunning, id)
	if !(created.Seq < prov.Seq && prov.Seq < run.Seq) || run.Time.Sub(created.Time) < boot {
		t.Errorf("events: created %v, provisioning %v, running %v (boot %s)", created.Time, prov.Time, run.Time, boot)
	}
}

// running_observed marks the first answer, from either status route, that
// told a client a sandbox was RUNNING: once per sandbox, never before it ran.
func TestRunningObservedOncePerSandbox(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: 100 * time.Millisecond})
	byGet, byBatch := h.create(map[string]any{}), h.create(map[string]any{})
	// Answers given before RUNNING tell nothing.
	h.req("GET", "/api/v1/sandbox/"+byGet, nil).must(t, 200)
	h.req("POST", "/api/v1/sandbox/status:batchGet", map[string]any{"sandbox_ids": []string{byBatch}}).must(t, 200)
	h.waitEvent(primemock.EventSandboxRunning, byGet)
	h.waitEvent(primemock.EventSandboxRunning, byBatch)
	for range 2 {
		h.req("GET", "/api/v1/sandbox/"+byGet, nil).must(t, 200)
		h.req("POST", "/api/v1/sandbox/status:batchGet", map[string]any{"sandbox_ids": []string{byBatch}}).must(t, 200)
	}
	for _, id := range []string{byGet, byBatch} {
		var running, observed []primemock.Event
		for _, e := range h.srv.Events() {
			switch {
			case e.SandboxID != id:
			case e.Type == primemock.EventSandboxRunning:
				running = append(running, e)
			case e.Type == primemock.EventRunningObserved:
				observed = append(observed, e)
			}
		}
		if len(running) != 1 || len(observed) != 1 || observed[0].Seq < running[0].Seq {
			t.Errorf("%s: running %+v, running_observed %+v; want one each, observed after running", id, running, observed)
		}
	}
}

func TestMagicImages(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: 10 * time.Millisecond, ImageBuildDelay: 80 * time.Millisecond})
	bad := h.create(map[string]any{"docker_image": "registry.example/prime-mock/error:1"})
	e := h.waitEvent(primemock.EventSandboxError, bad)
	if e.ErrorType != "IMAGE_PULL_FAILED" {
		t.Errorf("error event = %+v", e)
	}
	sb := h.req("GET", "/api/v1/sandbox/"+bad, nil).body
	if sb["status"] != "ERROR" || sb["errorType"] != "IMAGE_PULL_FAILED" || sb["terminationReason"] == nil ||
		!strings.Contains(fmt.Sprint(sb["errorMessage"]), "prime-mock/error") {
		t.Errorf("errored sandbox = %v", sb)
	}
	bs := h.req("POST", "/api/v1/sandbox/status:batchGet", map[string]any{"sandbox_ids": []string{bad}}).body["statuses"].([]any)[0].(map[string]any)
	if bs["status"] != "ERROR" || bs["error_type"] != "IMAGE_PULL_FAILED" {
		t.Errorf("batch status = %v", bs)
	}

	build := h.create(map[string]any{"docker_image": "prime-mock/build"})
	sb = h.req("GET", "/api/v1/sandbox/"+build, nil).body
	if sb["status"] != "PENDING" || sb["pendingImageBuildId"] == nil {
		t.Errorf("building sandbox = %v", sb)
	}
	h.waitEvent(primemock.EventSandboxRunning, build)
	if sb = h.req("GET", "/api/v1/sandbox/"+build, nil).body; sb["pendingImageBuildId"] != nil {
		t.Errorf("pendingImageBuildId still set on RUNNING: %v", sb["pendingImageBuildId"])
	}
}

func TestIdempotencyIsPerCaller(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: time.Hour})
	body := map[string]any{"name": "a", "docker_image": "i", "idempotency_key": "same"}
	a := h.reqKey("alice", "POST", "/api/v1/sandbox", body).must(t, 201).body["id"]
	again := h.reqKey("alice", "POST", "/api/v1/sandbox", body).must(t, 201).body["id"]
	b := h.reqKey("bob", "POST", "/api/v1/sandbox", body).must(t, 201).body["id"]
	if a != again || a == b {
		t.Errorf("alice %v, alice again %v, bob %v", a, again, b)
	}
	// The replay reflects the current state.
	h.reqKey("alice", "DELETE", "/api/v1/sandbox/"+a.(string), nil).must(t, 200)
	if st := h.reqKey("alice", "POST", "/api/v1/sandbox", body).must(t, 201).body["status"]; st != "TERMINATED" {
		t.Errorf("replay after delete: status %v", st)
	}
	if st := h.srv.Stats(); st.SandboxesCreated != 2 || st.IdempotentReplays != 2 {
		t.Errorf("stats = %+v", st)
	}
}

func TestConfigEndpointAndReset(t *testing.T) {
	h := newHarness(t, primemock.Options{})
	cfg := h.req("GET", "/_mock/config", nil).must(t, 200).body
	if cfg["gateway_lag"] != "300ms" || cfg["keepalive_interval"] != "2s" || cfg["boot_delay"] != "100ms" {
		t.Errorf("defaults = %v", cfg)
	}
	cfg = h.req("POST", "/_mock/config", `{"never_apply": true, "apply_delay": "2s", "fail_rate": 0.25, "gateway_lag": "1s", "keepalive_interval": "250ms"}`).must(t, 200).body
	if cfg["never_apply"] != true || cfg["apply_delay"] != "2s" || cfg["fail_rate"] != 0.25 || cfg["boot_delay"] != "100ms" ||
		cfg["gateway_lag"] != "1s" || cfg["keepalive_interval"] != "250ms" {
		t.Errorf("config = %v", cfg)
	}
	if o := h.srv.Options(); !o.NeverApply || o.ApplyDelay != 2*time.Second || o.GatewayLag != time.Second || o.KeepaliveInterval != 250*time.Millisecond {
		t.Errorf("options = %+v", o)
	}
	// gateway_lag "0s" means none (Options.GatewayLag 0 would be the default).
	if cfg := h.req("POST", "/_mock/config", `{"gateway_lag": "0s"}`).must(t, 200).body; cfg["gateway_lag"] != "0s" || h.srv.Options().GatewayLag >= 0 {
		t.Errorf("gateway_lag 0s: %v, options %v", cfg["gateway_lag"], h.srv.Options().GatewayLag)
	}
	h.req("POST", "/_mock/config", `{"keepalive_interval": "-1s"}`).must(t, 422)
	h.req("POST", "/_mock/config", `{"fail_rate": 2}`).must(t, 422)
	h.req("POST", "/_mock/config", `{"fail_rate": 0}`).must(t, 200)

	id := h.create(map[string]any{})
	h.req("POST", "/_mock/reset", nil).must(t, 200)
	h.req("GET", "/api/v1/sandbox/"+id, nil).must(t, 404)
	st := h.srv.Stats()
	if st.SandboxesCreated != 0 || len(h.srv.Events()) != 0 || st.Requests["POST /api/v1/sandbox"] != 0 {
		t.Errorf("after reset: %+v", st)
	}
}

func TestEventsEndpoint(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: 10 * time.Millisecond, ApplyDelay: 10 * time.Millisecond})
	id := h.runningVM()
	other := h.create(map[string]any{})
	h.putPolicy(id, []string{"a.com"}, nil)

	all := h.req("GET", "/_mock/events?sandbox_id="+id, nil).must(t, 200).body["events"].([]any)
	var types []string
	last := 0.0
	for _, raw := range all {
		e := raw.(map[string]any)
		if e["sandbox_id"] != id {
			t.Errorf("filter leaked %v", e)
		}
		if e["seq"].(float64) <= last {
			t.Errorf("events out of order: %v", all)
		}
		last = e["seq"].(float64)
		if _, err := time.Parse(time.RFC3339Nano, e["time"].(string)); err != nil {
			t.Errorf("time %v: %v", e["time"], err)
		}
		types = append(types, e["type"].(string))
		if e["type"] == "policy_put" {
			keysOf(t, "policy_put", e, "seq", "time", "type", "sandbox_id", "generation", "policy")
		}
	}
	// An untouched VM's generation 0 is never applied; the PUT's
	// generation 1 is.
	want := "sandbox_created sandbox_provisioning sandbox_running policy_put policy_applied"
	if got := strings.Join(types, " "); got != want {
		t.Errorf("events = %s\nwant      %s", got, want)
	}
	since := h.req("GET", fmt.Sprintf("/_mock/events?sandbox_id=%s&since=%d", id, int(last)-1), nil).must(t, 200).body["events"].([]any)
	if len(since) != 1 {
		t.Errorf("since=%d gave %d events", int(last)-1, len(since))
	}
	_ = other

	// policy_observed: the first answer that reports generation 1 applied.
	h.req("GET", "/api/v1/sandbox/"+id+"/egress-policy", nil).must(t, 200)
	h.req("GET", "/api/v1/sandbox/"+id+"/egress-policy", nil).must(t, 200)
	n := 0
	var applied, observed primemock.Event
	for _, e := range h.srv.Events() {
		switch {
		case e.Type == primemock.EventPolicyObserved && e.Generation == 1:
			n++
			observed = e
		case e.Type == primemock.EventPolicyApplied && e.Generation == 1:
			applied = e
		}
	}
	if n != 1 || observed.Seq < applied.Seq {
		t.Errorf("policy_observed for generation 1: %d events, observed %+v applied %+v", n, observed, applied)
	}
}
