package prime

import (
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestNewCheckpointID(t *testing.T) {
	cks := func(ids ...string) []Checkpoint {
		out := make([]Checkpoint, len(ids))
		for i, id := range ids {
			out[i] = Checkpoint{ID: id}
		}
		return out
	}
	for _, c := range []struct {
		name          string
		before, after []Checkpoint
		want          string
	}{
		{"the pause's", cks("ours"), cks("ours", "pause"), "pause"},
		{"none yet", cks("ours"), cks("ours"), ""},
		{"two new: not ours to guess", cks("ours"), cks("ours", "a", "b"), ""},
		{"order does not matter", cks("old", "ours"), cks("pause", "ours", "old"), "pause"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := newCheckpointID(c.before, c.after); got != c.want {
				t.Fatalf("newCheckpointID = %q, want %q", got, c.want)
			}
		})
	}
}

// pauseCheckpointFake is one sandbox whose pause takes a checkpoint, listed
// once the sandbox is PAUSED, next to the user's own.
type pauseCheckpointFake struct {
	mu        sync.Mutex
	status    string
	cks       []string
	failLists int // list answers after the pause that fail
}

func (f *pauseCheckpointFake) api() *fakeAPI {
	api := newFakeAPI()
	api.mux.HandleFunc("POST /api/v1/sandbox/{id}/pause", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.status != StatusPaused {
			f.status = StatusPaused
			f.cks = append(f.cks, "ck-pause")
		}
		writeJSON(w, http.StatusAccepted, map[string]any{})
	})
	api.mux.HandleFunc("POST /api/v1/sandbox/status:batchGet", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		writeJSON(w, http.StatusOK, BatchStatusResponse{Statuses: []SandboxStatus{{SandboxID: "sbx-1", Status: f.status}}, Errors: []SandboxStatusError{}})
	})
	api.mux.HandleFunc("GET /api/v1/sandbox/checkpoints", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if r.URL.Query().Get("sandbox_id") != "sbx-1" {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": "want sandbox_id"})
			return
		}
		if f.status == StatusPaused && f.failLists > 0 {
			f.failLists--
			writeJSON(w, http.StatusBadRequest, map[string]any{"detail": "listing broke"})
			return
		}
		out := []map[string]any{}
		for _, id := range f.cks {
			out = append(out, checkpointJSON(id, CheckpointDurable))
		}
		writeJSON(w, http.StatusOK, map[string]any{"checkpoints": out, "next_cursor": nil})
	})
	return api
}

// The pause's checkpoint is the one listed after the pause and not
// before; the user's own is never it. A sandbox already PAUSED takes none;
// a listing that fails after the pause says the sandbox is paused.
func TestPauseTakingCheckpoint(t *testing.T) {
	for _, tc := range []struct {
		name      string
		status    string
		failLists int
		want      string
		wantErr   error
	}{
		{"running: the pause's", StatusRunning, 0, "ck-pause", nil},
		{"already paused: none", StatusPaused, 0, "", nil},
		{"unlisted", StatusRunning, 5, "", ErrPauseCheckpointUnlisted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &pauseCheckpointFake{status: tc.status, cks: []string{"ck-user"}, failLists: tc.failLists}
			c, _ := newTestClient(t, f.api(), nil)
			c.poller = NewStatusPoller(c, fastStatusBackoff)
			c.pollerOnce.Do(func() {})
			got, err := c.PauseTakingCheckpoint(testContext(t), "sbx-1")
			if got != tc.want || !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("PauseTakingCheckpoint = %q, %v; want %q, %v", got, err, tc.want, tc.wantErr)
			}
			if f.status != StatusPaused {
				t.Fatalf("sandbox %s, want PAUSED", f.status)
			}
		})
	}
}

// A checkpoint still uploading (409) is waited for, then deleted; one gone
// (404, or lost while waited for) counts as deleted; another refusal is an
// error.
func TestDeleteCheckpointOnceUploaded(t *testing.T) {
	for _, tc := range []struct {
		name      string
		first     int    // the first DELETE's answer
		afterWait string // the state the wait finds ("" = NOT_FOUND)
		deletes   int
		ok        bool
	}{
		{"deleted", http.StatusNoContent, CheckpointDurable, 1, true},
		{"already gone", http.StatusNotFound, CheckpointDurable, 1, true},
		{"uploading, then deleted", http.StatusConflict, CheckpointDurable, 2, true},
		{"uploading, then lost", http.StatusConflict, "", 1, true},
		{"uploading, then failed: deleted", http.StatusConflict, CheckpointFailed, 2, true},
		{"refused", http.StatusBadRequest, CheckpointDurable, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeAPI()
			var n atomic.Int32
			f.mux.HandleFunc("DELETE /api/v1/sandbox/checkpoints/{id}", func(w http.ResponseWriter, r *http.Request) {
				if n.Add(1) == 1 && tc.first != http.StatusNoContent {
					writeJSON(w, tc.first, map[string]any{"detail": "no"})
					return
				}
				w.WriteHeader(http.StatusNoContent)
			})
			f.mux.HandleFunc("POST /api/v1/sandbox/checkpoints:batchGet", func(w http.ResponseWriter, r *http.Request) {
				if tc.afterWait == "" {
					writeJSON(w, http.StatusOK, map[string]any{"checkpoints": []any{}, "errors": []any{
						map[string]any{"checkpoint_id": "ck-1", "code": BatchCodeNotFound, "message": "Checkpoint not found"}}})
					return
				}
				writeJSON(w, http.StatusOK, map[string]any{"checkpoints": []any{checkpointJSON("ck-1", tc.afterWait)}, "errors": []any{}})
			})
			c := checkpointClient(t, f)
			err := c.DeleteCheckpointOnceUploaded(testContext(t), "ck-1", time.Minute)
			if (err == nil) != tc.ok || int(n.Load()) != tc.deletes {
				t.Fatalf("err = %v after %d deletes; want ok=%t after %d", err, n.Load(), tc.ok, tc.deletes)
			}
		})
	}
}
