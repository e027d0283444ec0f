package prime

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// clockFleet answers status:batchGet for sandboxes that each boot a fixed
// time after their create was answered (create), and counts the lookups of
// each.
type clockFleet struct {
	boot    time.Duration
	mu      sync.Mutex
	created map[string]time.Time
	lookups map[string]int
}

func newClockFleet(boot time.Duration) *clockFleet {
	return &clockFleet{boot: boot, created: map[string]time.Time{}, lookups: map[string]int{}}
}

// create stands for the client's create of id: the fleet boots it from now,
// and the client remembers the answer's time as its own create does.
func (f *clockFleet) create(c *Client, id string) {
	now := time.Now()
	f.mu.Lock()
	f.created[id] = now
	f.mu.Unlock()
	c.kinds.rememberCreated(Sandbox{ID: id}, now)
}

func (f *clockFleet) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req BatchStatusRequest
	_ = json.NewDecoder(r.Body).Decode(&req)
	resp := BatchStatusResponse{Statuses: []SandboxStatus{}, Errors: []SandboxStatusError{}}
	now := time.Now()
	f.mu.Lock()
	for _, id := range req.SandboxIDs {
		f.lookups[id]++
		st := StatusProvisioning
		if created, ok := f.created[id]; ok && !now.Before(created.Add(f.boot)) {
			st = StatusRunning
		}
		resp.Statuses = append(resp.Statuses, SandboxStatus{SandboxID: id, Status: st})
	}
	f.mu.Unlock()
	writeJSON(w, 200, resp)
}

func (f *clockFleet) lookupCounts() (total int, each []int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, n := range f.lookups {
		total += n
		each = append(each, n)
	}
	slices.Sort(each)
	return total, each
}

// bootSamples is how many boot times the client's cohort has learned.
func bootSamples(c *Client) int {
	c.bootLatency.mu.Lock()
	defer c.bootLatency.mu.Unlock()
	return len(c.bootLatency.upper)
}

// A fleet's boot waits share the work: a few scouts learn the boot time and
// every other member checks once at it. Each status:batchGet lookup counts
// against the token's 30,000 a minute; on their own backoffs 3,000 members
// read about 4.6 lookups each (13,900), which with three refreshes and a
// plan in the same minute left a destroy waiting for the window.
func TestBootCohortCostsAboutOneLookupPerMember(t *testing.T) {
	const n = 1000
	fleet := newClockFleet(time.Second)
	c, _ := newTestClient(t, fleet, nil)
	ctx := testContext(t)
	var wg sync.WaitGroup
	for i := range n {
		id := fmt.Sprintf("sbx-%04d", i)
		fleet.create(c, id)
		wg.Go(func() {
			if err := c.WaitForRunning(ctx, id, WaitRunningOptions{}); err != nil {
				t.Error(err)
			}
		})
		if i%4 == 0 {
			time.Sleep(time.Millisecond) // creates spread as a fleet's are
		}
	}
	wg.Wait()
	total, each := fleet.lookupCounts()
	t.Logf("%d lookups for %d members: median %d, max %d", total, n, each[n/2], each[n-1])
	if total > n*3/2 {
		t.Fatalf("%d lookups for %d booting members, want at most 1.5 each", total, n)
	}
	if bootSamples(c) == 0 {
		t.Fatal("the scouts taught no boot time")
	}
}

// A wait on a sandbox this client did not create starts somewhere in its
// boot: it keeps the plain schedule and teaches nothing, so a resumed or
// adopted sandbox never skews the boot time the fleet's members check at.
func TestBootWaitTeachesOnlyFromItsCreate(t *testing.T) {
	fleet := newClockFleet(300 * time.Millisecond)
	c, _ := newTestClient(t, fleet, nil)
	fleet.mu.Lock()
	fleet.created["adopted"] = time.Now()
	fleet.mu.Unlock()
	if err := c.WaitForRunning(testContext(t), "adopted", WaitRunningOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := bootSamples(c); n != 0 {
		t.Fatalf("%d boot samples after waiting on a sandbox this client did not create, want 0", n)
	}
	fleet.create(c, "created")
	if err := c.WaitForRunning(testContext(t), "created", WaitRunningOptions{}); err != nil {
		t.Fatal(err)
	}
	c.bootLatency.mu.Lock()
	got := slices.Clone(c.bootLatency.upper)
	c.bootLatency.mu.Unlock()
	if len(got) != 1 || got[0] < fleet.boot {
		t.Fatalf("boot samples %v after a wait on a created sandbox, want one of at least %s (the request that saw RUNNING was sent after the boot)", got, fleet.boot)
	}
}

// cohortFollower is a moving schedule (a follower's): no check until known,
// then one at once.
type cohortFollower struct{ known func() bool }

func (f cohortFollower) Delay(int) time.Duration {
	if f.known() {
		return 0
	}
	return time.Hour
}

func (cohortFollower) moving() bool { return true }

// What a round's answers teach closes the channel the poller sleeps on: a
// poller that fetched the channel after the round never saw it close, so
// every follower that joined before the boot time was known slept until its
// safety check (the slowest members of a 3,000-member apply were seen 4 s
// after they booted). A follower never rides along in another waiter's
// round either: it checks when due, not whenever a round happens to go.
func TestBatchPollerReschedulesWhatARoundTaught(t *testing.T) {
	est := &latencyEstimate{}
	known := func() bool {
		_, ok := est.expected()
		return ok
	}
	rounds := &roundLog{}
	p := newBatchPoller(DefaultStatusBackoff, strings.Compare, rounds.round)
	p.wakeOn = est.sooner
	// The follower's first schedule says an hour: without the reschedule
	// the wait ends here, with the context's error.
	ctx, cancel := context.WithTimeout(testContext(t), 30*time.Second)
	defer cancel()

	follower := make(chan error, 1)
	go func() {
		follower <- p.Watch(ctx, "follower", cohortFollower{known}, func(int) (bool, error) { return true, nil })
	}()
	waitFor(t, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.waiters) == 1
	})
	// The scout's answer teaches the boot time inside its round.
	err := p.Watch(ctx, "scout", stepSchedule{0}, func(int) (bool, error) {
		est.mu.Lock()
		est.recordUpper(time.Second)
		est.mu.Unlock()
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-follower; err != nil {
		t.Fatalf("the follower was never rescheduled: %v", err)
	}
	if got, want := rounds.keys(), [][]string{{"scout"}, {"follower"}}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rounds %v, want %v (the follower checks once, after the scout taught the time)", got, want)
	}
}

// roundLog is a batch poller's round that settles every key and records
// the keys of each round.
type roundLog struct {
	mu     sync.Mutex
	rounds [][]string
}

func (l *roundLog) round(_ context.Context, keys []string, settle func(string, int, error)) {
	l.mu.Lock()
	l.rounds = append(l.rounds, slices.Clone(keys))
	l.mu.Unlock()
	for _, k := range keys {
		settle(k, 0, nil)
	}
}

func (l *roundLog) keys() [][]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.rounds)
}

// waitFor polls cond until it holds (the test context bounds it).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	if err := Poll(testContext(t), Backoff{Initial: 5 * time.Millisecond}, func(context.Context) (bool, error) {
		return cond(), nil
	}); err != nil {
		t.Fatal(err)
	}
}

// movingOnce is a moving schedule whose waiter is due once (its first due
// time is set by the test).
type movingOnce struct{}

func (movingOnce) Delay(int) time.Duration { return time.Hour }

func (movingOnce) moving() bool { return true }

// Cohort waits are never read early, so their rounds gather instead: a
// round goes pollSlack after the first is due, with every one due by then.
// Followers of a per-instance apply (each created on its own) cost one
// status request per sandbox without it.
func TestBatchPollerGathersCohortWaitsDueTogether(t *testing.T) {
	rounds := &roundLog{}
	p := newBatchPoller(DefaultStatusBackoff, strings.Compare, rounds.round)
	// Registered before the loop starts, with due times set, so how soon
	// each goroutine ran does not matter.
	now := time.Now()
	var waiters []*batchWaiter[string, int]
	for i := range 2 {
		w := &batchWaiter[string, int]{id: fmt.Sprint("w", i), ctx: testContext(t), done: make(chan error, 1),
			check: func(int) (bool, error) { return true, nil }, sched: movingOnce{},
			due: now.Add(time.Duration(i) * pollSlack / 2)}
		waiters = append(waiters, w)
		p.waiters[w] = struct{}{}
	}
	p.running = true
	go p.loop()
	for _, w := range waiters {
		if err := <-w.done; err != nil {
			t.Fatal(err)
		}
	}
	if got, want := rounds.keys(), [][]string{{"w0", "w1"}}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rounds %v, want %v (one round for two waits due %s apart)", got, want, pollSlack/2)
	}
}
