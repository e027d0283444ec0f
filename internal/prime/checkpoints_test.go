package prime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeAPI records every request and serves the handlers registered on it.
type fakeAPI struct {
	mux  *http.ServeMux
	mu   sync.Mutex
	reqs []fakeReq
}

type fakeReq struct {
	method, path, query string
	body                string
}

func newFakeAPI() *fakeAPI { return &fakeAPI{mux: http.NewServeMux()} }

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.reqs = append(f.reqs, fakeReq{r.Method, r.URL.Path, r.URL.RawQuery, string(b)})
	f.mu.Unlock()
	r.Body = io.NopCloser(strings.NewReader(string(b)))
	f.mux.ServeHTTP(w, r)
}

func (f *fakeAPI) requests(method, path string) []fakeReq {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fakeReq
	for _, r := range f.reqs {
		if r.method == method && r.path == path {
			out = append(out, r)
		}
	}
	return out
}

func checkpointJSON(id, state string) map[string]any {
	return map[string]any{
		"id": id, "sandbox_id": "sbx-1", "parent_id": nil, "team_id": nil, "state": state, "depth": 1,
		"docker_image": "python:3.11-slim", "created_at": "2026-07-17T00:00:00", "updated_at": "2026-07-17T00:00:00+00:00",
	}
}

var fastCheckpointBackoff = Backoff{Initial: 5 * time.Millisecond, Factor: 1.5, Max: 20 * time.Millisecond}

// checkpointClient is a client whose checkpoint poller polls quickly.
func checkpointClient(t *testing.T, h http.Handler) *Client {
	t.Helper()
	c, _ := newTestClient(t, h, nil)
	c.res.checkpointPoller = NewCheckpointPoller(c, fastCheckpointBackoff)
	return c
}

// Create sends no body without a TTL (as the SDK) and {"ttl_seconds"} with
// one; a 503 is not retried, since the first attempt may have created a
// checkpoint.
func TestCreateCheckpoint(t *testing.T) {
	f := newFakeAPI()
	var fail atomic.Bool
	f.mux.HandleFunc("POST /api/v1/sandbox/{id}/checkpoints", func(w http.ResponseWriter, r *http.Request) {
		if fail.Load() {
			writeJSON(w, http.StatusServiceUnavailable, map[string]any{"detail": "busy"})
			return
		}
		writeJSON(w, http.StatusOK, checkpointJSON("ck-1", CheckpointPending))
	})
	c := checkpointClient(t, f)
	ctx := context.Background()
	ck, err := c.CreateCheckpoint(ctx, "sbx-1", CreateCheckpointOptions{})
	if err != nil || ck.ID != "ck-1" || ck.State != CheckpointPending || ck.CreatedAt.IsZero() {
		t.Fatalf("CreateCheckpoint = %+v, %v", ck, err)
	}
	ttl := 3600
	if _, err := c.CreateCheckpoint(ctx, "sbx-1", CreateCheckpointOptions{TTLSeconds: &ttl}); err != nil {
		t.Fatal(err)
	}
	reqs := f.requests("POST", "/api/v1/sandbox/sbx-1/checkpoints")
	if len(reqs) != 2 || reqs[0].body != "" || reqs[1].body != `{"ttl_seconds":3600}` {
		t.Fatalf("bodies %q", reqs)
	}
	zero := 0
	if _, err := c.CreateCheckpoint(ctx, "sbx-1", CreateCheckpointOptions{TTLSeconds: &zero}); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("ttl 0: %v", err)
	}
	fail.Store(true)
	if _, err := c.CreateCheckpoint(ctx, "sbx-1", CreateCheckpointOptions{}); StatusCodeOf(err) != 503 {
		t.Fatalf("err = %v, want the 503", err)
	}
	if n := len(f.requests("POST", "/api/v1/sandbox/sbx-1/checkpoints")); n != 3 {
		t.Fatalf("%d creates, want the failed one sent once", n-2)
	}
}

// DELETE answers 204 with no body; a repeat finds nothing (404).
func TestDeleteCheckpointNoContent(t *testing.T) {
	f := newFakeAPI()
	var deleted atomic.Bool
	f.mux.HandleFunc("DELETE /api/v1/sandbox/checkpoints/{id}", func(w http.ResponseWriter, r *http.Request) {
		if deleted.Swap(true) {
			writeJSON(w, http.StatusNotFound, map[string]any{"detail": "Checkpoint not found"})
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	c := checkpointClient(t, f)
	if err := c.DeleteCheckpoint(context.Background(), "ck-1"); err != nil {
		t.Fatalf("204: %v", err)
	}
	if err := c.DeleteCheckpoint(context.Background(), "ck-1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("repeat: %v, want ErrNotFound", err)
	}
}

// The owner's list follows next_cursor until it is null, and refuses a
// cursor that comes back.
func TestListCheckpointsFollowsCursor(t *testing.T) {
	f := newFakeAPI()
	loop := false
	f.mux.HandleFunc("GET /api/v1/sandbox/checkpoints", func(w http.ResponseWriter, r *http.Request) {
		switch cur := r.URL.Query().Get("cursor"); {
		case cur == "":
			writeJSON(w, 200, map[string]any{"checkpoints": []any{checkpointJSON("a", "DURABLE"), checkpointJSON("b", "DURABLE")}, "next_cursor": "p2"})
		case cur == "p2" && loop:
			writeJSON(w, 200, map[string]any{"checkpoints": []any{checkpointJSON("c", "DURABLE")}, "next_cursor": "p2"})
		default:
			writeJSON(w, 200, map[string]any{"checkpoints": []any{checkpointJSON("c", "FAILED")}, "next_cursor": nil})
		}
	})
	team := "team-1"
	c, _ := newTestClient(t, f, func(o *Options) { o.Config.TeamID = &team })
	all, err := c.ListCheckpoints(context.Background(), ListCheckpointsOptions{SandboxID: "sbx-1"})
	if err != nil || len(all) != 3 || all[2].State != CheckpointFailed {
		t.Fatalf("ListCheckpoints = %+v, %v", all, err)
	}
	if q := f.requests("GET", "/api/v1/sandbox/checkpoints")[0].query; q != "sandbox_id=sbx-1&team_id=team-1" {
		t.Fatalf("first query %q: the configured team and the sandbox filter", q)
	}
	loop = true
	if _, err := c.ListCheckpoints(context.Background(), ListCheckpointsOptions{}); err == nil || !strings.Contains(err.Error(), "repeated cursor") {
		t.Fatalf("a looping cursor: %v", err)
	}
}

// checkpointFleet answers checkpoints:batchGet: each id goes PENDING,
// FROZEN, then DURABLE one answer later each, except ids starting with
// "fail-" (FAILED), "del-" (DELETING) and "gone-" (NOT_FOUND); "stuck-"
// stays FROZEN and "merge-" is DURABLE with merge pending for two answers.
type checkpointFleet struct {
	mu       sync.Mutex
	seen     map[string]int
	requests atomic.Int32
	maxIDs   atomic.Int32
}

func (f *checkpointFleet) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/api/v1/sandbox/checkpoints:batchGet" {
		writeJSON(w, 404, map[string]any{"detail": "Not Found"})
		return
	}
	f.requests.Add(1)
	var req BatchCheckpointsRequest
	_ = json.NewDecoder(r.Body).Decode(&req)
	if n := int32(len(req.CheckpointIDs)); n > f.maxIDs.Load() {
		f.maxIDs.Store(n)
	}
	out := map[string]any{"checkpoints": []any{}, "errors": []any{}}
	var cks, errs []any
	f.mu.Lock()
	for _, id := range req.CheckpointIDs {
		f.seen[id]++
		n := f.seen[id]
		ck := checkpointJSON(id, []string{CheckpointPending, CheckpointFrozen, CheckpointDurable}[min(n-1, 2)])
		switch {
		case strings.HasPrefix(id, "gone-"):
			errs = append(errs, map[string]any{"checkpoint_id": id, "code": "NOT_FOUND", "message": "Checkpoint not found"})
			continue
		case strings.HasPrefix(id, "fail-"):
			ck["state"], ck["error"] = CheckpointFailed, "upload failed"
		case strings.HasPrefix(id, "del-"):
			ck["state"] = CheckpointDeleting
		case strings.HasPrefix(id, "stuck-"):
			ck["state"] = CheckpointFrozen
		case strings.HasPrefix(id, "merge-"):
			ck["state"] = CheckpointDurable
			if n <= 2 {
				ck["merge"] = MergePending
			} else {
				ck["merge"] = "merged"
			}
		}
		cks = append(cks, ck)
	}
	f.mu.Unlock()
	if cks != nil {
		out["checkpoints"] = cks
	}
	if errs != nil {
		out["errors"] = errs
	}
	writeJSON(w, 200, out)
}

// Many waiters share checkpoints:batchGet rounds of at most 100 ids, as
// sandbox waiters share status:batchGet.
func TestWaitForCheckpointBatchesWaiters(t *testing.T) {
	fleet := &checkpointFleet{seen: map[string]int{}}
	c := checkpointClient(t, fleet)
	const n = 150
	errs := make(chan error, n)
	for i := range n {
		go func() {
			ck, err := c.WaitForCheckpoint(testContext(t), fmt.Sprintf("ck-%03d", i), WaitCheckpointOptions{})
			if err == nil && ck.State != CheckpointDurable {
				err = fmt.Errorf("returned %s", ck.State)
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	// Three answers each; one request per waiter per answer would be 450.
	t.Logf("%d checkpoints:batchGet requests for %d waiters of three answers each", fleet.requests.Load(), n)
	if got := fleet.requests.Load(); got > 30 {
		t.Fatalf("%d batchGet requests for %d waiters, want them batched", got, n)
	}
	if fleet.maxIDs.Load() > MaxBatchCheckpointIDs {
		t.Fatalf("a request carried %d ids", fleet.maxIDs.Load())
	}
}

// The wait fails closed: FAILED, DELETING and gone are typed errors at
// once; the deadline names the state last seen; a volume publish also
// waits for its merge.
func TestWaitForCheckpointOutcomes(t *testing.T) {
	c := checkpointClient(t, &checkpointFleet{seen: map[string]int{}})
	ctx := testContext(t)
	for _, tc := range []struct {
		id    string
		state string
		gone  bool
		text  string
	}{
		{"fail-1", CheckpointFailed, false, "checkpoint fail-1 is FAILED: upload failed"},
		{"del-1", CheckpointDeleting, false, "checkpoint del-1 is DELETING"},
		{"gone-1", "", true, "checkpoint gone-1 is gone"},
	} {
		_, err := c.WaitForCheckpoint(ctx, tc.id, WaitCheckpointOptions{})
		var failed *CheckpointFailedError
		if !errors.As(err, &failed) || failed.State != tc.state || failed.Gone != tc.gone || !errors.Is(err, ErrCheckpointFailed) ||
			!strings.Contains(err.Error(), tc.text) || errors.Is(err, ErrNotFound) != tc.gone {
			t.Errorf("%s: %v", tc.id, err)
		}
	}

	short, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
	defer cancel()
	_, err := c.WaitForCheckpoint(short, "stuck-1", WaitCheckpointOptions{})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "still FROZEN") {
		t.Fatalf("deadline: %v", err)
	}

	var progress []string
	ck, err := c.WaitForCheckpoint(ctx, "merge-1", WaitCheckpointOptions{Merged: true, OnProgress: func(ck Checkpoint) {
		progress = append(progress, ck.State+"/"+deref(ck.Merge))
	}})
	if err != nil || deref(ck.Merge) != "merged" {
		t.Fatalf("merge wait: %+v, %v", ck, err)
	}
	if strings.Join(progress, ",") != "DURABLE/pending,DURABLE/merged" {
		t.Fatalf("progress %v", progress)
	}
	ck, err = c.WaitForCheckpoint(ctx, "merge-2", WaitCheckpointOptions{})
	if err != nil || deref(ck.Merge) != MergePending {
		t.Fatalf("without Merged the first DURABLE answer ends the wait: %+v, %v", ck, err)
	}
}

// Without checkpoints:batchGet (404), the client reads one GET per id from
// then on, and an unknown id is NOT_FOUND, not a failed round.
func TestBatchGetCheckpointsFallsBack(t *testing.T) {
	f := newFakeAPI()
	f.mux.HandleFunc("POST /api/v1/sandbox/checkpoints:batchGet", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]any{"detail": "Not Found"})
	})
	f.mux.HandleFunc("GET /api/v1/sandbox/checkpoints/{id}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") == "nope" {
			writeJSON(w, http.StatusNotFound, map[string]any{"detail": "Checkpoint not found"})
			return
		}
		writeJSON(w, 200, checkpointJSON(r.PathValue("id"), CheckpointDurable))
	})
	c := checkpointClient(t, f)
	for range 2 {
		resp, err := c.BatchGetCheckpoints(context.Background(), []string{"a", "nope"})
		if err != nil || len(resp.Checkpoints) != 1 || len(resp.Errors) != 1 || resp.Errors[0].Code != BatchCodeNotFound {
			t.Fatalf("BatchGetCheckpoints = %+v, %v", resp, err)
		}
	}
	if n := len(f.requests("POST", "/api/v1/sandbox/checkpoints:batchGet")); n != 1 {
		t.Fatalf("batchGet asked %d times, want once", n)
	}
	if _, err := c.WaitForCheckpoint(testContext(t), "a", WaitCheckpointOptions{}); err != nil {
		t.Fatal(err)
	}
}

// A restore's create body: checkpoint_id, no docker_image, no disk_size_gb.
func TestCreateSandboxFromCheckpointBody(t *testing.T) {
	f := newFakeAPI()
	f.mux.HandleFunc("POST /api/v1/sandbox", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, sandboxJSON("restored"))
	})
	c := checkpointClient(t, f)
	_, err := c.CreateSandbox(context.Background(), CreateSandboxRequest{
		Name: "r", CheckpointID: strp("ck-1"), Volumes: []VolumeMount{{Name: "data", MountPath: "/data", ReadOnly: true}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	_ = json.Unmarshal([]byte(f.requests("POST", "/api/v1/sandbox")[0].body), &body)
	if body["checkpoint_id"] != "ck-1" || body["docker_image"] != nil || body["disk_size_gb"] != nil || body["restore_memory"] != nil {
		t.Fatalf("restore body %v", body)
	}
	vols, _ := json.Marshal(body["volumes"])
	if string(vols) != `[{"mount_path":"/data","name":"data","read_only":true}]` {
		t.Fatalf("volumes %s", vols)
	}
	if _, err := c.CreateSandbox(context.Background(), CreateSandboxRequest{Name: "r", CheckpointID: strp("ck-1"), DockerImage: "img"}); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("a restore with an image must be refused before any request: %v", err)
	}
}
