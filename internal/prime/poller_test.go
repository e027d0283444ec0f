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

// heldUntilTogether serves next once n requests are in flight at the same
// time; a request that waits 5 s for the others gets a 400 instead, so
// code that sends them one after another fails. requests counts them all.
func heldUntilTogether(n int, next http.Handler) (http.Handler, *atomic.Int32) {
	var arrived sync.WaitGroup
	arrived.Add(n)
	all := make(chan struct{})
	go func() { arrived.Wait(); close(all) }()
	requests := &atomic.Int32{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requests.Add(1) <= int32(n) {
			arrived.Done()
		}
		select {
		case <-all:
			next.ServeHTTP(w, r)
		case <-time.After(5 * time.Second):
			writeJSON(w, 400, map[string]any{"detail": "the chunks were not sent together"})
		}
	}), requests
}

// A round's chunks of 100 ids go out together: the handler holds every
// request until all three of the round arrived, so polling chunk by chunk
// would time out and fail every waiter.
func TestStatusPollerSendsARoundsChunksTogether(t *testing.T) {
	h, requests := heldUntilTogether(3, &fakeFleet{polls: 1, seen: map[string]int{}})
	c, _ := newTestClient(t, h, nil)
	p := NewStatusPoller(c, fastStatusBackoff)
	batch := map[string][]*statusWaiter{}
	for i := range 250 {
		id := fmt.Sprintf("sbx-%03d", i)
		batch[id] = []*statusWaiter{{id: id, ctx: context.Background(), done: make(chan error, 1),
			check: func(obs StatusObservation) (bool, error) {
				return obs.Status != nil && obs.Status.Status == StatusRunning, nil
			}}}
		p.waiters[batch[id][0]] = struct{}{}
	}
	p.pollOnce(context.Background(), batch)
	for id, ws := range batch {
		select {
		case err := <-ws[0].done:
			if err != nil {
				t.Fatalf("%s: %v", id, err)
			}
		default:
			t.Fatalf("%s: not answered by the round", id)
		}
	}
	if n := requests.Load(); n != 3 {
		t.Fatalf("requests = %d, want 3", n)
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

// stepSchedule waits steps[n] before check n, and the last step from then on.
type stepSchedule []time.Duration

func (s stepSchedule) Delay(n int) time.Duration { return s[min(n, len(s)-1)] }

// testContext ends a little before the test binary's own deadline, so a
// wait that never finishes fails with a message instead of a panic. It is
// a guard against hangs, not a bound on how long anything may take.
func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx := context.Background()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-5*time.Second))
		t.Cleanup(cancel)
	}
	return ctx
}

// A waiter that joins late gets its own schedule: it is checked although
// the waiter already there is not due for another hour.
func TestStatusPollerLateJoinerGetsItsOwnSchedule(t *testing.T) {
	c, fleet, ctx := withIdleEarlyWaiter(t, nil)
	checks := 0
	err := c.StatusPoller().Watch(ctx, "late", nil, func(StatusObservation) (bool, error) {
		checks++
		return true, nil
	})
	if err != nil {
		t.Fatalf("the late waiter was never checked: %v", err)
	}
	fleet.mu.Lock()
	early, late := len(fleet.polls["early"]), len(fleet.polls["late"])
	fleet.mu.Unlock()
	// One extra round, triggered by the late waiter, carried both.
	if checks != 1 || late != 1 || early != 3 {
		t.Fatalf("late checks %d, late polls %d, early polls %d; want 1, 1 and 3", checks, late, early)
	}
}

// withIdleEarlyWaiter starts a client (mod changes its options) whose
// poller has one waiter, "early", checked twice and then not due for an
// hour, and returns once the early sandbox is past its floor, so a later
// round may carry it. The waiter ends with the test.
func withIdleEarlyWaiter(t *testing.T, mod func(*Options)) (*Client, *timedFleet, context.Context) {
	t.Helper()
	fleet := &timedFleet{boot: time.Hour, first: map[string]time.Time{}, polls: map[string][]time.Time{}}
	c, _ := newTestClient(t, fleet, mod)
	c.poller = NewStatusPoller(c, Backoff{Initial: 20 * time.Millisecond, Factor: 2, Max: time.Second})
	c.pollerOnce.Do(func() {})
	ctx, cancel := context.WithCancel(testContext(t))
	earlyDone := make(chan error, 1)
	go func() {
		earlyDone <- c.StatusPoller().Watch(ctx, "early", stepSchedule{20 * time.Millisecond, 20 * time.Millisecond, time.Hour},
			func(StatusObservation) (bool, error) { return false, nil })
	}()
	t.Cleanup(func() {
		cancel()
		<-earlyDone
	})
	if err := Poll(ctx, Backoff{Initial: 5 * time.Millisecond}, func(context.Context) (bool, error) {
		fleet.mu.Lock()
		defer fleet.mu.Unlock()
		return len(fleet.polls["early"]) >= 2 && time.Since(fleet.polls["early"][1]) > statusSandboxFloor, nil
	}); err != nil {
		t.Fatal(err)
	}
	return c, fleet, ctx
}

// Waiters whose checks fall close together share rounds: a round answers
// every waiter, and one due within pollSlack counts it as its check instead
// of asking again a few milliseconds later. Twenty waiters on 100 ms steps,
// first due 5 ms apart, fall into one or two phases: about one request per
// step, not one per waiter's phase.
func TestStatusPollerMergesWaitersDueWithinAStep(t *testing.T) {
	fleet := &timedFleet{boot: 450 * time.Millisecond, first: map[string]time.Time{}, polls: map[string][]time.Time{}}
	c, _ := newTestClient(t, fleet, nil)
	p := NewStatusPoller(c, fastStatusBackoff)
	ctx := testContext(t)
	errs := make(chan error, 20)
	for i := range 20 {
		sched := stepSchedule{time.Duration(i) * 5 * time.Millisecond, statusMinStep}
		go func() {
			errs <- p.Watch(ctx, fmt.Sprintf("sbx-%02d", i), sched, func(obs StatusObservation) (bool, error) {
				return obs.Status.Status == StatusRunning, nil
			})
		}()
	}
	for range 20 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	// RUNNING 450 ms after the first round: rounds at 0, 100, …, 500, or
	// twice as many when the joins split the waiters into two phases.
	// Without merging, each waiter's phase would be a round of its own: one
	// every 5 ms.
	if n := fleet.requests.Load(); n > 14 {
		t.Fatalf("%d status requests for 20 waiters on 100 ms steps over 450 ms, want at most 14", n)
	}
}

// With status:batchGet unsupported (404), the per-sandbox GETs keep the
// batch endpoint's per-id errors: a sandbox the key may not read fails its
// own waiter, not a RUNNING sandbox polled in the same round.
func TestBatchFallbackForbiddenFailsOnlyThatID(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v1/sandbox/status:batchGet", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]any{"detail": "Not Found"})
	})
	mux.HandleFunc("GET /api/v1/sandbox/{id}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") == "forbidden" {
			writeJSON(w, http.StatusForbidden, map[string]any{"detail": "not yours"})
			return
		}
		sb := sandboxJSON(r.PathValue("id"))
		sb["status"] = StatusRunning
		writeJSON(w, http.StatusOK, sb)
	})
	c, _ := newTestClient(t, mux, nil)

	resp, err := c.BatchStatus(context.Background(), []string{"ok-1", "forbidden"})
	if err != nil || len(resp.Statuses) != 1 || len(resp.Errors) != 1 || resp.Errors[0].Code != BatchCodeForbidden {
		t.Fatalf("BatchStatus = %+v, %v; want ok-1 RUNNING and FORBIDDEN for the other", resp, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	forbidden := make(chan error, 1)
	go func() { forbidden <- c.WaitForRunning(ctx, "forbidden", WaitRunningOptions{}) }()
	if err := c.WaitForRunning(ctx, "ok-2", WaitRunningOptions{}); err != nil {
		t.Errorf("WaitForRunning(ok-2) = %v; a RUNNING sandbox failed because another was forbidden", err)
	}
	if err := <-forbidden; err == nil || !strings.Contains(err.Error(), "FORBIDDEN") {
		t.Errorf("WaitForRunning(forbidden) = %v; want its FORBIDDEN error", err)
	}
}

// The platform limits status lookups per sandbox (status:batchGet: 300 a
// minute for each sandbox it names). Rounds carry every waiter, and a
// fleet's waiters are due at different times, so without a floor a
// sandbox rode along in nearly every round: hundreds of waiters joined
// 5 ms apart on a fine schedule polled each sandbox every ~50 ms (1,200 a
// minute). No sandbox is polled twice within statusSandboxFloor (4 a
// second, 240 a minute at most), however many waiters are due around it.
func TestStatusPollerKeepsEachSandboxUnderItsLimit(t *testing.T) {
	fleet := &timedFleet{boot: time.Hour, first: map[string]time.Time{}, polls: map[string][]time.Time{}}
	c, _ := newTestClient(t, fleet, nil)
	const waiters = 200
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	fine := stepSchedule{100 * time.Millisecond}
	var wg sync.WaitGroup
	for i := range waiters {
		wg.Go(func() {
			_ = c.StatusPoller().Watch(ctx, fmt.Sprintf("sbx%03d", i), fine, func(StatusObservation) (bool, error) { return false, nil })
		})
		time.Sleep(5 * time.Millisecond)
	}
	wg.Wait()
	fleet.mu.Lock()
	defer fleet.mu.Unlock()
	worst, total := time.Hour, 0
	for _, polls := range fleet.polls {
		total += len(polls)
		for i := 1; i < len(polls); i++ {
			worst = min(worst, polls[i].Sub(polls[i-1]))
		}
	}
	// A request's answer takes a moment: allow the floor minus 20 ms.
	if worst < statusSandboxFloor-20*time.Millisecond {
		t.Errorf("a sandbox was polled twice %s apart; the floor is %s", worst, statusSandboxFloor)
	}
	t.Logf("%d waiters, %d lookups, %.1f per sandbox per second, closest two polls of one sandbox %s, %d requests",
		waiters, total, float64(total)/waiters/3, worst, fleet.requests.Load())
}

// A round carries waiters that are not yet due only while the token's
// lookup ceiling has room: with more than half of it used, the late
// waiter's round reads the late sandbox alone, and the early one keeps its
// own schedule. With room, the same round carries both
// (TestStatusPollerLateJoinerGetsItsOwnSchedule).
func TestStatusPollerRidersOnlyWithLookupsToSpare(t *testing.T) {
	tests := []struct {
		name       string
		used       int // lookups already counted in the window
		wantEarly  int // polls of the early sandbox in the end
		wantWindow int // lookups the window holds in the end
	}{
		{name: "room: the round carries the early waiter", used: 0, wantEarly: 3, wantWindow: 4},
		{name: "half the ceiling used: due waiters only", used: LookupsPerMinute/2 + 1, wantEarly: 2, wantWindow: LookupsPerMinute/2 + 1 + 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th := NewThrottle(ThrottleOptions{})
			c, fleet, ctx := withIdleEarlyWaiter(t, func(o *Options) { o.Throttle = th })
			if err := th.TakeLookups(ctx, tt.used); err != nil {
				t.Fatal(err)
			}
			if err := c.StatusPoller().Watch(ctx, "late", nil, func(StatusObservation) (bool, error) { return true, nil }); err != nil {
				t.Fatal(err)
			}
			fleet.mu.Lock()
			early := len(fleet.polls["early"])
			fleet.mu.Unlock()
			if early != tt.wantEarly {
				t.Errorf("early polled %d times, want %d", early, tt.wantEarly)
			}
			if held := LookupsPerMinute - th.lookups.Free(); held != tt.wantWindow {
				t.Errorf("the lookup window holds %d, want %d (every id a round names counts)", held, tt.wantWindow)
			}
		})
	}
}

func TestRidesFree(t *testing.T) {
	tests := []struct {
		due, extra int
		want       bool
	}{
		{1, 1, true},
		{1, 99, true},
		{1, 100, false},
		{100, 1, false}, // the due ids fill their chunks: a rider costs a request
		{250, 50, true},
		{250, 51, false},
		{3000, 1, false},
	}
	for _, tt := range tests {
		if got := ridesFree(tt.due, tt.extra, MaxBatchStatusIDs); got != tt.want {
			t.Errorf("ridesFree(%d due, %d extra) = %v, want %v", tt.due, tt.extra, got, tt.want)
		}
	}
}
