package prime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeFleet answers status:batchGet: each sandbox is RUNNING after `polls`
// answers about it, except ids starting with "err-" (ERROR) and "missing-"
// (left out of the answer).
type fakeFleet struct {
	polls    int
	mu       sync.Mutex
	seen     map[string]int
	requests atomic.Int32
	maxIDs   atomic.Int32
}

func (f *fakeFleet) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	var req BatchStatusRequest
	_ = json.NewDecoder(r.Body).Decode(&req)
	if n := int32(len(req.SandboxIDs)); n > f.maxIDs.Load() {
		f.maxIDs.Store(n)
	}
	resp := BatchStatusResponse{Statuses: []SandboxStatus{}, Errors: []SandboxStatusError{}}
	f.mu.Lock()
	for _, id := range req.SandboxIDs {
		f.seen[id]++
		switch {
		case strings.HasPrefix(id, "missing-"):
		case strings.HasPrefix(id, "gone-"):
			resp.Errors = append(resp.Errors, SandboxStatusError{SandboxID: id, Code: BatchCodeNotFound, Message: "Sandbox not found"})
		case strings.HasPrefix(id, "err-"):
			et, em := "IMAGE_PULL_FAILED", "pull access denied"
			resp.Statuses = append(resp.Statuses, SandboxStatus{SandboxID: id, Status: StatusError, ErrorType: &et, ErrorMessage: &em})
		case f.seen[id] >= f.polls:
			resp.Statuses = append(resp.Statuses, SandboxStatus{SandboxID: id, Status: StatusRunning})
		default:
			resp.Statuses = append(resp.Statuses, SandboxStatus{SandboxID: id, Status: StatusProvisioning})
		}
	}
	f.mu.Unlock()
	writeJSON(w, 200, resp)
}

var fastStatusBackoff = Backoff{Initial: 10 * time.Millisecond, Factor: 1.5, Max: 50 * time.Millisecond}

func TestStatusPollerCoalescesWaiters(t *testing.T) {
	fleet := &fakeFleet{polls: 3, seen: map[string]int{}}
	c, _ := newTestClient(t, fleet, nil)
	c.poller = NewStatusPoller(c, fastStatusBackoff)
	c.pollerOnce.Do(func() {})

	const n = 150 // more than one batch
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- c.WaitForRunning(context.Background(), fmt.Sprintf("sbx-%03d", i), WaitRunningOptions{})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// Each sandbox needs 3 answers; uncoalesced that is 450 requests.
	if got := fleet.requests.Load(); got > 30 {
		t.Fatalf("status requests = %d for %d waiters, want them batched (≤ 30)", got, n)
	}
	if fleet.maxIDs.Load() > MaxBatchStatusIDs {
		t.Fatalf("a request carried %d ids, more than %d", fleet.maxIDs.Load(), MaxBatchStatusIDs)
	}
}

func TestStatusPollerOutcomes(t *testing.T) {
	fleet := &fakeFleet{polls: 1, seen: map[string]int{}}
	c, _ := newTestClient(t, fleet, nil)
	c.poller = NewStatusPoller(c, fastStatusBackoff)
	c.pollerOnce.Do(func() {})
	ctx := context.Background()

	err := c.WaitForRunning(ctx, "err-1", WaitRunningOptions{})
	var failed *SandboxFailedError
	if !errors.As(err, &failed) || failed.ErrorType != "IMAGE_PULL_FAILED" || !strings.Contains(err.Error(), "pull access denied") {
		t.Fatalf("err = %v, want a SandboxFailedError with the platform's type and message", err)
	}
	if err := c.WaitForRunning(ctx, "missing-1", WaitRunningOptions{}); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("err = %v, want an error for an id left out of the answer", err)
	}
	if err := c.WaitForRunning(ctx, "gone-1", WaitRunningOptions{}); err == nil || !strings.Contains(err.Error(), "NOT_FOUND") {
		t.Fatalf("err = %v, want NOT_FOUND", err)
	}
	if err := c.WaitForGone(ctx, "gone-1"); err != nil {
		t.Fatalf("WaitForGone on an unknown id: %v", err)
	}
	tctx, cancel := context.WithTimeoutCause(ctx, 30*time.Millisecond, errors.New("create timeout"))
	defer cancel()
	fleet.polls = 1 << 30
	if err := c.WaitForRunning(tctx, "slow-1", WaitRunningOptions{}); err == nil || err.Error() != "create timeout" {
		t.Fatalf("err = %v, want the context's cause", err)
	}
}

func TestBackoffDelay(t *testing.T) {
	b := Backoff{Initial: 100 * time.Millisecond, Factor: 2, Max: time.Second}
	want := []time.Duration{100, 200, 400, 800, 1000, 1000}
	for i, w := range want {
		if got := b.Delay(i); got != w*time.Millisecond {
			t.Errorf("Delay(%d) = %s, want %s", i, got, w*time.Millisecond)
		}
	}
	j := Backoff{Initial: time.Second, Factor: 1, Jitter: 0.25}
	for range 100 {
		if d := j.Delay(3); d < 750*time.Millisecond || d > 1250*time.Millisecond {
			t.Fatalf("jittered delay %s outside ±25 %%", d)
		}
	}
}

// timedFleet answers status:batchGet from the clock: a sandbox is RUNNING
// boot after it was first asked about. It records when each id was polled.
type timedFleet struct {
	boot     time.Duration
	mu       sync.Mutex
	first    map[string]time.Time
	polls    map[string][]time.Time
	requests atomic.Int32
}

func (f *timedFleet) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	var req BatchStatusRequest
	_ = json.NewDecoder(r.Body).Decode(&req)
	resp := BatchStatusResponse{Statuses: []SandboxStatus{}, Errors: []SandboxStatusError{}}
	now := time.Now()
	f.mu.Lock()
	for _, id := range req.SandboxIDs {
		if _, ok := f.first[id]; !ok {
			f.first[id] = now
		}
		f.polls[id] = append(f.polls[id], now)
		st := StatusProvisioning
		if now.Sub(f.first[id]) >= f.boot {
			st = StatusRunning
		}
		resp.Statuses = append(resp.Statuses, SandboxStatus{SandboxID: id, Status: st})
	}
	f.mu.Unlock()
	writeJSON(w, 200, resp)
}

// A waiter that joins late is checked ~Initial after it joined, even while
// the waiters already there are deep into their backoff.
func TestStatusPollerLateJoinerGetsItsOwnSchedule(t *testing.T) {
	fleet := &timedFleet{boot: time.Hour, first: map[string]time.Time{}, polls: map[string][]time.Time{}}
	c, _ := newTestClient(t, fleet, nil)
	slow := Backoff{Initial: 20 * time.Millisecond, Factor: 4, Max: time.Hour}
	c.poller = NewStatusPoller(c, slow)
	c.pollerOnce.Do(func() {})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_ = c.StatusPoller().Watch(ctx, "early", nil, func(StatusObservation) (bool, error) { return false, nil })
	}()
	// Let the early waiter's interval grow (20, 80, 320 ms, ...).
	if err := Poll(context.Background(), Backoff{Initial: 5 * time.Millisecond}, func(context.Context) (bool, error) {
		fleet.mu.Lock()
		defer fleet.mu.Unlock()
		return len(fleet.polls["early"]) >= 3, nil
	}); err != nil {
		t.Fatal(err)
	}
	joined := time.Now()
	seen := make(chan time.Time, 1)
	go func() {
		_ = c.StatusPoller().Watch(ctx, "late", nil, func(StatusObservation) (bool, error) {
			seen <- time.Now()
			return true, nil
		})
	}()
	select {
	case at := <-seen:
		// The early waiter's next check is ~1.3 s away; the late one must not
		// wait for it.
		if d := at.Sub(joined); d > 500*time.Millisecond {
			t.Fatalf("late waiter first checked %s after joining, want ~20 ms", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("late waiter never checked")
	}
}

// After a few sandboxes the poller knows the usual boot time and checks
// just before it, so a 700 ms boot is seen soon after it happens instead of
// at the next ×1.5 step.
func TestWaitForRunningLearnsBootTime(t *testing.T) {
	const boot = 700 * time.Millisecond // plain ×1.5 checks at 625 ms, then 1.19 s
	fleet := &timedFleet{boot: boot, first: map[string]time.Time{}, polls: map[string][]time.Time{}}
	c, _ := newTestClient(t, fleet, nil)
	var lateness []time.Duration
	for i := range 6 {
		id := fmt.Sprintf("sbx-%d", i)
		fleet.mu.Lock()
		fleet.first[id] = time.Now() // boot starts now
		fleet.mu.Unlock()
		start := time.Now()
		if err := c.WaitForRunning(context.Background(), id, WaitRunningOptions{}); err != nil {
			t.Fatal(err)
		}
		lateness = append(lateness, time.Since(start)-boot)
	}
	for _, late := range lateness[4:] {
		if late > 250*time.Millisecond {
			t.Fatalf("RUNNING seen %v late after learning (all: %v)", late, lateness)
		}
	}
	t.Logf("lateness per wait: %v; %d requests", lateness, fleet.requests.Load())
}
