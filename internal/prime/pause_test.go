package prime

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// pauseFake is one sandbox whose pause and resume take effect after a
// number of status answers, with knobs for refusals and failures.
type pauseFake struct {
	mu       sync.Mutex
	status   string
	errMsg   *string
	target   string // status after `after` more answers
	after    int
	answer   int    // status code of pause/resume (default 200)
	empty    bool   // answer with no body
	refuse   string // resume: answer 409 with this detail
	failWith string // the transition fails: status stays, with this message
}

func (f *pauseFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case r.Method == http.MethodPost && (strings.HasSuffix(r.URL.Path, "/pause") || strings.HasSuffix(r.URL.Path, "/resume")):
		if f.refuse != "" {
			writeJSON(w, http.StatusConflict, map[string]any{"detail": f.refuse})
			return
		}
		f.target, f.after = StatusPaused, 2
		if strings.HasSuffix(r.URL.Path, "/resume") {
			f.target = StatusRunning
		}
		code := f.answer
		if code == 0 {
			code = 200
		}
		if f.empty {
			w.WriteHeader(code)
			return
		}
		writeJSON(w, code, map[string]any{"accepted": true})
	case r.URL.Path == "/api/v1/sandbox/status:batchGet":
		var req BatchStatusRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		if f.target != "" {
			if f.after--; f.after <= 0 {
				if f.failWith != "" {
					f.errMsg = &f.failWith
				} else {
					f.status = f.target
				}
				f.target = ""
			}
		}
		writeJSON(w, 200, BatchStatusResponse{Statuses: []SandboxStatus{{SandboxID: req.SandboxIDs[0], Status: f.status, ErrorMessage: f.errMsg}}, Errors: []SandboxStatusError{}})
	default:
		writeJSON(w, 404, map[string]any{"detail": "Not Found"})
	}
}

func pauseClient(t *testing.T, f *pauseFake) *Client {
	t.Helper()
	c, _ := newTestClient(t, f, nil)
	c.poller = NewStatusPoller(c, fastStatusBackoff)
	c.pollerOnce.Do(func() {})
	return c
}

// Pause and resume accept any 2xx, with or without a body, and wait for
// PAUSED and RUNNING; a sandbox already there is left alone.
func TestPauseAndResume(t *testing.T) {
	for _, tc := range []struct {
		name  string
		code  int
		empty bool
	}{{"200 with a body", 200, false}, {"202 empty", 202, true}, {"204", 204, true}} {
		t.Run(tc.name, func(t *testing.T) {
			f := &pauseFake{status: StatusRunning, answer: tc.code, empty: tc.empty}
			c := pauseClient(t, f)
			ctx := testContext(t)
			if err := c.PauseAndWait(ctx, "sbx"); err != nil {
				t.Fatal(err)
			}
			if err := c.PauseAndWait(ctx, "sbx"); err != nil {
				t.Fatal(err)
			}
			if err := c.ResumeAndWait(ctx, "sbx"); err != nil {
				t.Fatal(err)
			}
			if f.status != StatusRunning {
				t.Fatalf("status %s", f.status)
			}
		})
	}
}

// A resume refused at a limit is a *ResumeRefusedError carrying the
// platform's words, synchronously (a 409) or after the request was
// accepted (PAUSED with a new error message); an old message is not a
// failure of this resume.
func TestResumeRefused(t *testing.T) {
	f := &pauseFake{status: StatusPaused, refuse: "active sandbox limit reached (10)"}
	c := pauseClient(t, f)
	ctx := testContext(t)
	err := c.ResumeAndWait(ctx, "sbx")
	var refused *ResumeRefusedError
	if !errors.As(err, &refused) || refused.StatusCode != http.StatusConflict || !errors.Is(err, ErrResumeRefused) || !errors.Is(err, ErrConflict) ||
		!strings.Contains(err.Error(), "active sandbox limit reached (10)") || !strings.Contains(err.Error(), "stays PAUSED") {
		t.Fatalf("refused resume: %v", err)
	}

	old := "an earlier failure"
	f = &pauseFake{status: StatusPaused, errMsg: &old, failWith: "not enough capacity"}
	c = pauseClient(t, f)
	err = c.ResumeAndWait(ctx, "sbx")
	if !errors.As(err, &refused) || refused.StatusCode != 0 || refused.Message != "not enough capacity" {
		t.Fatalf("failed resume: %v", err)
	}

	f = &pauseFake{status: StatusRunning, failWith: "pause failed: device busy"}
	c = pauseClient(t, f)
	var pauseErr *PauseFailedError
	if err := c.PauseAndWait(ctx, "sbx"); !errors.As(err, &pauseErr) || !strings.Contains(err.Error(), "stays RUNNING: pause failed: device busy") {
		t.Fatalf("failed pause: %v", err)
	}
}

// The deadline names the last status; the wait does not end on a message
// the sandbox already had.
func TestWaitForResumedDeadline(t *testing.T) {
	old := "an earlier failure"
	f := &pauseFake{status: StatusPaused, errMsg: &old}
	c := pauseClient(t, f)
	ctx, cancel := context.WithTimeout(testContext(t), 100*time.Millisecond)
	defer cancel()
	err := c.WaitForResumed(ctx, "sbx", WaitTransitionOptions{PriorErrorMessage: &old})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "last status PAUSED") {
		t.Fatalf("err = %v", err)
	}
}

// A sandbox that has ended is neither paused nor resumed: no request is
// sent, and the error says it ended (a *SandboxFailedError), never that it
// "stays PAUSED" or that an account limit refused a resume.
func TestPauseResumeEndedSandbox(t *testing.T) {
	for _, status := range []string{StatusTerminated, StatusTimeout, StatusError} {
		f := &pauseFake{status: status, refuse: "Sandbox sbx is " + status + "; only a PAUSED sandbox can be resumed"}
		c := pauseClient(t, f)
		ctx := testContext(t)
		for name, call := range map[string]func(context.Context, string) error{"pause": c.PauseAndWait, "resume": c.ResumeAndWait} {
			err := call(ctx, "sbx")
			var ended *SandboxFailedError
			if !errors.As(err, &ended) || ended.Status != status || errors.Is(err, ErrResumeRefused) ||
				strings.Contains(err.Error(), "PAUSED") || strings.Contains(err.Error(), "limit") {
				t.Errorf("%s of a %s sandbox: %v", name, status, err)
			}
		}
	}
}
