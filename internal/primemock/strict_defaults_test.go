package primemock_test

// The probes that found the mock accepting what the platform refuses, each
// against a mock with its default knobs: lifetimes, owners, create and
// update input rules, state rules, rate limits and the validation error
// shape.

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// advance moves the mock clock forward by d through POST /_mock/clock.
func (h *harness) advance(d time.Duration) {
	h.t.Helper()
	h.req("POST", "/_mock/clock", map[string]any{"advance": d.String()}).must(h.t, 200)
}

func (h *harness) status(id string) string {
	h.t.Helper()
	s, _ := h.req("GET", "/api/v1/sandbox/"+id, nil).must(h.t, 200).body["status"].(string)
	return s
}

// validationDetail asserts a 422 in the platform's list form and returns
// its first item.
func validationDetail(t *testing.T, a answer) map[string]any {
	t.Helper()
	a.must(t, 422)
	items, ok := a.body["detail"].([]any)
	if !ok || len(items) == 0 {
		t.Fatalf("422 detail is not a list of validation errors: %s", a.raw)
	}
	item, _ := items[0].(map[string]any)
	if _, ok := item["loc"].([]any); !ok || item["msg"] == nil || item["type"] == nil {
		t.Fatalf("validation error item lacks loc, msg or type: %s", a.raw)
	}
	return item
}

func TestProbeLifetimeEnds(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: 10 * time.Millisecond})
	id := h.running(map[string]any{"timeout_minutes": 1})
	h.advance(59 * time.Second)
	if got := h.status(id); got != "RUNNING" {
		t.Fatalf("after 59 s of a 1-minute lifetime: %s, want RUNNING", got)
	}
	h.advance(2 * time.Second)
	sb := h.req("GET", "/api/v1/sandbox/"+id, nil).must(t, 200).body
	if sb["status"] != "TIMEOUT" || sb["terminatedAt"] == nil {
		t.Fatalf("after 61 s of a 1-minute lifetime: %v, want TIMEOUT with terminatedAt", sb)
	}
}

func TestProbeIdleTimeoutIgnoresStatusReads(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: 10 * time.Millisecond})
	id := h.running(map[string]any{"idle_timeout_minutes": 1})
	for range 3 {
		h.advance(25 * time.Second)
		h.req("GET", "/api/v1/sandbox/"+id, nil).must(t, 200)
		h.req("POST", "/api/v1/sandbox/status:batchGet", map[string]any{"sandbox_ids": []string{id}}).must(t, 200)
	}
	if got := h.status(id); got != "TIMEOUT" {
		t.Fatalf("idle for 75 s with only status reads: %s, want TIMEOUT", got)
	}
}

// The platform's default lifetime (60 minutes) ends every forgotten
// sandbox; with the clock running 3600 times faster the mock shows it in
// about a second of wall time.
func TestProbeDefaultLifetimeEndsInSeconds(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: 10 * time.Millisecond, ClockRate: 3600})
	start := time.Now()
	id := h.create(map[string]any{})
	e := h.waitFor("the default lifetime's end", func(e primemock.Event) bool {
		return e.Type == primemock.EventSandboxEnded && e.SandboxID == id
	})
	if e.Status != "TIMEOUT" {
		t.Fatalf("ended %s, want TIMEOUT", e.Status)
	}
	t.Logf("a 60-minute lifetime ended after %s of wall time", time.Since(start).Round(time.Millisecond))
}

func TestProbeForeignSandboxIsNotFound(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: 10 * time.Millisecond})
	id := h.running(map[string]any{"labels": []string{"mine"}})
	const other = "key-b"
	h.reqKey(other, "GET", "/api/v1/sandbox/"+id, nil).must(t, 404)
	if l := h.reqKey(other, "GET", "/api/v1/sandbox", nil).must(t, 200).body; l["total"] != 0.0 {
		t.Errorf("key B's list shows %v sandboxes of key A", l["total"])
	}
	h.reqKey(other, "DELETE", "/api/v1/sandbox/"+id, nil).must(t, 404)
	bulk := h.reqKey(other, "DELETE", "/api/v1/sandbox", map[string]any{"sandbox_ids": []string{id}}).must(t, 200).body
	if len(bulk["succeeded"].([]any)) != 0 {
		t.Errorf("key B's bulk delete deleted key A's sandbox: %v", bulk)
	}
	if got := h.status(id); got != "RUNNING" {
		t.Fatalf("key A's sandbox is %s after key B's deletes", got)
	}
}

func TestProbeCreateInputRules(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: time.Hour})
	for _, tc := range []struct {
		name string
		body map[string]any
		loc  string
	}{
		{"name of 101 characters", map[string]any{"name": strings.Repeat("n", 101)}, "name"},
		{"empty name", map[string]any{"name": ""}, "name"},
		{"empty image", map[string]any{"docker_image": ""}, "docker_image"},
		{"variable name starting with a digit", map[string]any{"environment_vars": map[string]string{"1BAD": "x"}}, "environment_vars"},
		{"variable name with a dash", map[string]any{"environment_vars": map[string]string{"A-B": "x"}}, "environment_vars"},
		{"secret name with a dash", map[string]any{"secrets": map[string]string{"A-B": "x"}}, "secrets"},
		{"NUL in a value", map[string]any{"environment_vars": map[string]string{"A": "x\x00y"}}, "environment_vars"},
		{"NUL in a secret", map[string]any{"secrets": map[string]string{"A": "x\x00y"}}, "secrets"},
		{"variable and secret of one name", map[string]any{"environment_vars": map[string]string{"TOKEN": "a"}, "secrets": map[string]string{"TOKEN": "b"}}, "secrets"},
		{"4096 vCPUs", map[string]any{"cpu_cores": 4096}, "cpu_cores"},
		{"1e5 GB of memory", map[string]any{"memory_gb": 1e5}, "memory_gb"},
		{"1e6 GB of disk", map[string]any{"disk_size_gb": 1e6}, "disk_size_gb"},
		{"1000 GPUs", map[string]any{"gpu_count": 1000, "gpu_type": "H100_80GB"}, "gpu_count"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := map[string]any{"name": "n", "docker_image": "python:3.12"}
			for k, v := range tc.body {
				body[k] = v
			}
			item := validationDetail(t, h.req("POST", "/api/v1/sandbox", body))
			if loc := fmt.Sprint(item["loc"]); !strings.Contains(loc, tc.loc) {
				t.Errorf("loc %s, want it to name %s", loc, tc.loc)
			}
			if strings.Contains(fmt.Sprint(item), "x\x00y") {
				t.Error("the refusal echoes the value")
			}
		})
	}
	if st := h.srv.Stats(); st.SandboxesCreated != 0 {
		t.Errorf("%d sandboxes created from refused bodies", st.SandboxesCreated)
	}
	// per_page is 1 to 1,000, never silently cut.
	item := validationDetail(t, h.req("GET", "/api/v1/sandbox?per_page=1001", nil))
	if fmt.Sprint(item["loc"]) != "[query per_page]" {
		t.Errorf("loc %v, want [query per_page]", item["loc"])
	}
	h.create(map[string]any{})
	if l := h.req("GET", "/api/v1/sandbox?per_page=1000", nil).must(t, 200).body; l["perPage"] != 1000.0 {
		t.Errorf("per_page=1000 answered perPage %v", l["perPage"])
	}
}

func TestProbeValidationErrorsAreLists(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: time.Hour})
	missing := validationDetail(t, h.req("POST", "/api/v1/sandbox", map[string]any{"docker_image": "i"}))
	if fmt.Sprint(missing["loc"]) != "[body name]" || missing["type"] != "missing" {
		t.Errorf("missing name: %v", missing)
	}
	frac := validationDetail(t, h.req("POST", "/api/v1/sandbox", map[string]any{"name": "n", "docker_image": "i", "cpu_cores": 1.5}))
	if fmt.Sprint(frac["loc"]) != "[body cpu_cores]" {
		t.Errorf("fractional cpu_cores: %v", frac)
	}
	// The overview's other form, on request.
	h.req("POST", "/_mock/config", map[string]any{"validation_errors": "errors"}).must(t, 200)
	a := h.req("POST", "/api/v1/sandbox", map[string]any{"docker_image": "i"}).must(t, 422)
	errs, _ := a.body["errors"].([]any)
	if len(errs) != 1 || errs[0].(map[string]any)["param"] != "name" {
		t.Errorf("errors form: %s", a.raw)
	}
}

func TestProbeStateRules(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: time.Hour})
	pending := h.create(map[string]any{})
	h.req("PUT", "/api/v1/sandbox/"+pending+"/egress-policy", map[string]any{"allowlist": []string{"example.com"}, "denylist": nil}).must(t, 409)

	// The collection route is not a sandbox.
	a := h.req("DELETE", "/api/v1/sandbox/checkpoints", nil).must(t, 200)
	keysOf(t, "owner delete", a.body, "deleted", "errors", "next_cursor")
}

func TestProbeCheckpointTipOfARunningSandboxIsKept(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: 10 * time.Millisecond,
		ResourceOptions: primemock.ResourceOptions{CheckpointFreezeDelay: time.Millisecond, CheckpointDurableDelay: time.Millisecond}})
	id := h.running(map[string]any{})
	ck := h.req("POST", "/api/v1/sandbox/"+id+"/checkpoints", nil).must(t, 202).body["id"].(string)
	h.waitFor("DURABLE", func(e primemock.Event) bool {
		return e.Type == primemock.EventCheckpointState && e.CheckpointID == ck && e.State == "DURABLE"
	})
	bulk := h.req("DELETE", "/api/v1/sandbox/"+id+"/checkpoints", nil).must(t, 200).body
	errs, _ := bulk["errors"].([]any)
	if len(bulk["deleted"].([]any)) != 0 || len(errs) != 1 || errs[0].(map[string]any)["code"] != "CONFLICT" {
		t.Fatalf("per-sandbox delete of a running sandbox's tip: %v, want it reported CONFLICT and kept", bulk)
	}
	owner := h.req("DELETE", "/api/v1/sandbox/checkpoints", nil).must(t, 200).body
	if len(owner["deleted"].([]any)) != 0 {
		t.Fatalf("owner delete deleted the tip of a running sandbox: %v", owner)
	}
	h.req("GET", "/api/v1/sandbox/checkpoints/"+ck, nil).must(t, 200)
	// Once the sandbox is gone, the checkpoint is no one's tip.
	h.req("DELETE", "/api/v1/sandbox/"+id, nil).must(t, 200)
	owner = h.req("DELETE", "/api/v1/sandbox/checkpoints", nil).must(t, 200).body
	if d := owner["deleted"].([]any); len(d) != 1 || d[0] != ck {
		t.Fatalf("owner delete after the sandbox ended: %v", owner)
	}
}

func TestProbeRateLimitsOnByDefault(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: 10 * time.Millisecond, ApplyDelay: time.Millisecond})
	id := h.running(map[string]any{})
	put := map[string]any{"allowlist": []string{"example.com"}, "denylist": nil}
	for i := range 120 {
		if a := h.req("PUT", "/api/v1/sandbox/"+id+"/egress-policy", put); a.status != 202 {
			t.Fatalf("egress PUT %d: %d %s", i+1, a.status, a.raw)
		}
	}
	a := h.req("PUT", "/api/v1/sandbox/"+id+"/egress-policy", put).must(t, http.StatusTooManyRequests)
	if a.header.Get("Retry-After") == "" {
		t.Error("the 429 has no Retry-After")
	}
	key := map[string]any{"public_key": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJ test"}
	for i := range 20 {
		if a := h.req("POST", "/api/v1/sandbox/"+id+"/ssh-session", key); a.status != 200 {
			t.Fatalf("SSH session %d: %d %s", i+1, a.status, a.raw)
		}
	}
	h.req("POST", "/api/v1/sandbox/"+id+"/ssh-session", key).must(t, http.StatusTooManyRequests)
}

// detailText is an error answer's message: a plain detail, or the list
// form's items as "field: msg" (the loc without its root), joined by "; ".
func detailText(a answer) string {
	switch d := a.body["detail"].(type) {
	case string:
		return d
	case []any:
		parts := make([]string, 0, len(d))
		for _, it := range d {
			m, _ := it.(map[string]any)
			loc, _ := m["loc"].([]any)
			var path []string
			for _, l := range loc[min(1, len(loc)):] {
				path = append(path, fmt.Sprint(l))
			}
			if len(path) == 0 {
				parts = append(parts, fmt.Sprint(m["msg"]))
				continue
			}
			parts = append(parts, strings.Join(path, ".")+": "+fmt.Sprint(m["msg"]))
		}
		return strings.Join(parts, "; ")
	}
	return ""
}

// Each key sees and acts on its own only, on every route: another key's
// sandbox, checkpoint, network, volume and image are not found (the status
// and job batches say FORBIDDEN, the checkpoint batch NOT_FOUND), and the
// gateway cannot be reached for it.
func TestOwnersOnEveryRoute(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: 10 * time.Millisecond,
		ResourceOptions: primemock.ResourceOptions{CheckpointFreezeDelay: time.Millisecond, CheckpointDurableDelay: time.Millisecond}})
	id := h.running(map[string]any{"docker_image": "mine/only:1"})
	ck := h.req("POST", "/api/v1/sandbox/"+id+"/checkpoints", nil).must(t, 202).body["id"].(string)
	net := h.req("POST", "/api/v1/sandbox/networks", map[string]any{"name": "n", "rules": []any{}}).must(t, 201).body["id"].(string)
	h.req("POST", "/api/v1/sandbox/volumes", map[string]any{"name": "vol", "size_gb": 1}).must(t, 201)
	const b = "key-b"
	for _, r := range []struct{ method, path string }{
		{"POST", "/api/v1/sandbox/" + id + "/auth"},
		{"GET", "/api/v1/sandbox/" + id + "/logs"},
		{"GET", "/api/v1/sandbox/" + id + "/error-context"},
		{"GET", "/api/v1/sandbox/" + id + "/egress-policy"},
		{"POST", "/api/v1/sandbox/" + id + "/pause"},
		{"POST", "/api/v1/sandbox/" + id + "/checkpoints"},
		{"GET", "/api/v1/sandbox/" + id + "/checkpoints"},
		{"DELETE", "/api/v1/sandbox/" + id + "/checkpoints"},
		{"GET", "/api/v1/sandbox/checkpoints/" + ck},
		{"DELETE", "/api/v1/sandbox/checkpoints/" + ck},
		{"GET", "/api/v1/sandbox/networks/" + net},
		{"DELETE", "/api/v1/sandbox/networks/" + net},
		{"GET", "/api/v1/sandbox/volumes/vol"},
		{"DELETE", "/api/v1/sandbox/volumes/vol"},
		{"POST", "/api/v1/images/only/1/vm-build"},
	} {
		if a := h.reqKey(b, r.method, r.path, nil); a.status != 404 {
			t.Errorf("key B: %s %s: %d %s, want 404", r.method, r.path, a.status, a.raw)
		}
	}
	h.reqKey(b, "PUT", "/api/v1/sandbox/"+id+"/egress-policy", map[string]any{"allowlist": []string{}, "denylist": nil}).must(t, 404)
	bnet := h.reqKey(b, "POST", "/api/v1/sandbox/networks", map[string]any{"name": "n"}).must(t, 201).body["id"].(string)
	h.reqKey(b, "PUT", "/api/v1/sandbox/networks/"+bnet+"/members/"+id, map[string]any{"tags": []string{}}).must(t, 404)

	status := h.reqKey(b, "POST", "/api/v1/sandbox/status:batchGet", map[string]any{"sandbox_ids": []string{id}}).must(t, 200).body
	if errs := status["errors"].([]any); len(errs) != 1 || errs[0].(map[string]any)["code"] != "FORBIDDEN" {
		t.Errorf("key B's status batch: %v, want FORBIDDEN", status)
	}
	jobs := h.reqKey(b, "POST", "/api/v1/sandbox/background-jobs/status:batchGet",
		map[string]any{"jobs": []map[string]string{{"sandbox_id": id, "job_id": "0badcafe"}}}).must(t, 200).body
	if errs := jobs["errors"].([]any); len(errs) != 1 || errs[0].(map[string]any)["code"] != "FORBIDDEN" {
		t.Errorf("key B's job batch: %v, want FORBIDDEN", jobs)
	}
	cks := h.reqKey(b, "POST", "/api/v1/sandbox/checkpoints:batchGet", map[string]any{"checkpoint_ids": []string{ck}}).must(t, 200).body
	if errs := cks["errors"].([]any); len(errs) != 1 || errs[0].(map[string]any)["code"] != "NOT_FOUND" {
		t.Errorf("key B's checkpoint batch: %v, want NOT_FOUND", cks)
	}
	for path, key := range map[string]string{
		"/api/v1/sandbox/checkpoints": "checkpoints", "/api/v1/sandbox/networks": "networks",
		"/api/v1/sandbox/volumes": "volumes", "/api/v1/images": "data",
	} {
		if l := h.reqKey(b, "GET", path, nil).must(t, 200).body[key].([]any); (key == "networks" && len(l) != 1) || (key != "networks" && len(l) != 0) {
			t.Errorf("key B's %s: %v, want only its own", path, l)
		}
	}
	if got := h.status(id); got != "RUNNING" {
		t.Fatalf("key A's sandbox is %s after key B's requests", got)
	}
	h.req("GET", "/api/v1/sandbox/checkpoints/"+ck, nil).must(t, 200)
	h.req("GET", "/api/v1/sandbox/networks/"+net, nil).must(t, 200)
}

// A team admits the keys TeamMembers names; a team it does not name admits
// every key.
func TestTeamMembers(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: time.Hour, TeamMembers: map[string][]string{"t1": {"test-key"}}})
	h.create(map[string]any{"team_id": "t1"})
	h.reqKey("key-b", "POST", "/api/v1/sandbox", map[string]any{"name": "n", "docker_image": "i", "team_id": "t1"}).must(t, 403)
	h.reqKey("key-b", "GET", "/api/v1/sandbox?team_id=t1", nil).must(t, 403)
	if l := h.req("GET", "/api/v1/sandbox?team_id=t1", nil).must(t, 200).body; l["total"] != 1.0 {
		t.Errorf("a member's team list: %v", l)
	}
	h.reqKey("key-b", "POST", "/api/v1/sandbox", map[string]any{"name": "n", "docker_image": "i", "team_id": "open"}).must(t, 201)
	if l := h.req("GET", "/api/v1/sandbox?team_id=open", nil).must(t, 200).body; l["total"] != 1.0 {
		t.Errorf("an open team's list, as another key: %v", l)
	}
}

// A bulk delete names at most 500 sandboxes and 50 labels, as the
// published schema allows; more is a 422 and deletes nothing.
func TestBulkDeleteBounds(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: time.Millisecond})
	a := h.running(map[string]any{})
	ids := make([]string, 501)
	for i := range ids {
		ids[i] = fmt.Sprintf("sb-absent-%d", i)
	}
	ids[0] = a
	validationDetail(t, h.req("DELETE", "/api/v1/sandbox", map[string]any{"sandbox_ids": ids}))
	labels := make([]string, 51)
	for i := range labels {
		labels[i] = fmt.Sprintf("l%d", i)
	}
	validationDetail(t, h.req("DELETE", "/api/v1/sandbox", map[string]any{"labels": labels}))
	if s := h.status(a); s != "RUNNING" {
		t.Fatalf("a refused bulk delete left the sandbox %s", s)
	}
	h.req("DELETE", "/api/v1/sandbox", map[string]any{"sandbox_ids": ids[:500]}).must(t, 200)
	if s := h.status(a); s != "TERMINATED" {
		t.Fatalf("a bulk delete of 500 ids left the sandbox %s", s)
	}
}
