package primemock_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// harness is a mock behind httptest, spoken to with raw HTTP: the
// conformance tests check the wire, not our typed client.
type harness struct {
	t   *testing.T
	srv *primemock.Server
	ts  *httptest.Server
	key string
}

func newHarness(t *testing.T, o primemock.Options) *harness {
	t.Helper()
	if o.Seed == 0 {
		o.Seed = 42
	}
	srv := primemock.New(o)
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		ts.Close()
		srv.Close()
	})
	return &harness{t: t, srv: srv, ts: ts, key: "test-key"}
}

// answer is a decoded response.
type answer struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

// req sends a request with the harness's API key (none when key is "").
func (h *harness) req(method, path string, body any) answer {
	h.t.Helper()
	return h.reqKey(h.key, method, path, body)
}

func (h *harness) reqKey(key, method, path string, body any) answer {
	h.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			h.t.Fatal(err)
		}
		rd = bytes.NewReader(buf)
	}
	r, err := http.NewRequest(method, h.ts.URL+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	if key != "" {
		r.Header.Set("Authorization", "Bearer "+key)
	}
	if rd != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	resp, err := h.ts.Client().Do(r)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	if err := json.Unmarshal(raw, &a.body); err != nil {
		h.t.Fatalf("%s %s: answer is not a JSON object (%v): %q", method, path, err, raw)
	}
	return a
}

// must asserts the status of an answer.
func (a answer) must(t *testing.T, status int) answer {
	t.Helper()
	if a.status != status {
		t.Fatalf("status %d, want %d: %s", a.status, status, a.raw)
	}
	return a
}

// create creates a sandbox (defaults filled by the caller's map) and
// returns its id.
func (h *harness) create(body map[string]any) string {
	h.t.Helper()
	if body["name"] == nil {
		body["name"] = "sbx"
	}
	if body["docker_image"] == nil {
		body["docker_image"] = "python:3.12"
	}
	a := h.req("POST", "/api/v1/sandbox", body).must(h.t, 201)
	return a.body["id"].(string)
}

// waitEvent waits (bounded) for an event of a type for a sandbox, optionally
// with a generation.
func (h *harness) waitEvent(typ, id string, gen ...int64) primemock.Event {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e, err := h.srv.WaitForEvent(ctx, func(e primemock.Event) bool {
		return e.Type == typ && (id == "" || e.SandboxID == id) && (len(gen) == 0 || e.Generation == gen[0])
	})
	if err != nil {
		h.t.Fatalf("waiting for %s of %s %v: %v", typ, id, gen, err)
	}
	return e
}

// waitFor waits (bounded) for the first event that matches.
func (h *harness) waitFor(what string, match func(primemock.Event) bool) primemock.Event {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e, err := h.srv.WaitForEvent(ctx, match)
	if err != nil {
		h.t.Fatalf("waiting for %s: %v", what, err)
	}
	return e
}

// running creates a sandbox and waits until it is RUNNING.
func (h *harness) running(body map[string]any) string {
	h.t.Helper()
	id := h.create(body)
	h.waitEvent(primemock.EventSandboxRunning, id)
	return id
}

// ready creates a sandbox and waits until the gateway knows it (RUNNING
// and past the gateway lag).
func (h *harness) ready(body map[string]any) string {
	h.t.Helper()
	id := h.create(body)
	h.waitEvent(primemock.EventGatewayReady, id)
	return id
}

// runningVM creates a RUNNING VM (untouched: its open generation 0 is not
// applied, as in the SDK fixture).
func (h *harness) runningVM() string {
	h.t.Helper()
	return h.running(map[string]any{})
}

// putPolicy PUTs a policy and waits until the mock applies it.
func (h *harness) putPolicy(id string, allow, deny []string) {
	h.t.Helper()
	a := h.req("PUT", "/api/v1/sandbox/"+id+"/egress-policy", map[string]any{"allowlist": allow, "denylist": deny}).must(h.t, 202)
	h.waitEvent(primemock.EventPolicyApplied, id, int64(a.body["generation"].(float64)))
}

func (h *harness) reachable(id, host string) bool {
	h.t.Helper()
	a := h.req("GET", "/_mock/sandbox/"+id+"/reachable?host="+host, nil).must(h.t, 200)
	return a.body["reachable"].(bool)
}

// keysOf asserts that m has exactly the given keys.
func keysOf(t *testing.T, what string, m map[string]any, want ...string) {
	t.Helper()
	if len(m) != len(want) {
		t.Errorf("%s: keys %v, want exactly %v", what, sortedKeys(m), want)
	}
	for _, k := range want {
		if _, ok := m[k]; !ok {
			t.Errorf("%s: missing key %q in %v", what, k, sortedKeys(m))
		}
	}
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

func strs(v any) []string {
	if v == nil {
		return nil
	}
	out := []string{}
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// mockLacks is the line that follows bash's "command not found".
func mockLacks(name string) string {
	return fmt.Sprintf("prime-mock: %q is not one of the mock's commands (prime-mock -h lists them)\n", name)
}
