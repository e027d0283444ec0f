package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

func defaultConfig() benchConfig {
	return benchConfig{
		fleetNs: []int{200, 1000}, fleetPs: []int{10, 50}, instNs: []int{200, 1000}, instPs: []int{10, 50},
		extra: []runSpec{{pathInstances, 200, 200}}, sdkNs: []int{200, 1000}, sdkWorkers: 200,
		instBudget: 4 * time.Minute, latency: 5 * time.Millisecond, boot: 2 * time.Second, apply: time.Second,
		gatewayLag: 300 * time.Millisecond,
	}
}

// The platform limit: the gateway runs beside the policy, so with a lag
// shorter than the apply W is the previous benchmark's 3010 ms; a longer lag
// takes its place.
func TestChainW(t *testing.T) {
	c := defaultConfig()
	if w := chainW(c); w != 3010*time.Millisecond {
		t.Fatalf("W = %s, want 3.01 s", w)
	}
	if w := fleetChain(c); w != 3315*time.Millisecond {
		t.Fatalf("fleet chain = %s, want 3.315 s", w)
	}
	c.gatewayLag = 2 * time.Second
	if w := chainW(c); w != 4010*time.Millisecond {
		t.Fatalf("W with a 2 s lag = %s, want 4.01 s", w)
	}
	if l := instanceLimit(defaultConfig(), 200, 50); l != 12040*time.Millisecond {
		t.Fatalf("per-instance limit N=200 P=50 = %s, want 12.04 s", l)
	}
}

// The default matrix leaves out exactly the per-instance run whose apply
// alone needs more than the budget, says why, and runs the fleet paths
// first within each N.
func TestMatrixBudget(t *testing.T) {
	specs, skips := defaultConfig().matrix()
	if len(skips) != 1 || skips[0].spec != (runSpec{pathInstances, 1000, 10}) || !strings.Contains(skips[0].reason, "-instances-budget 0") {
		t.Fatalf("skipped %+v, want only instances N=1000 P=10 with the way to run it", skips)
	}
	var got []string
	for _, s := range specs {
		got = append(got, s.String())
	}
	want := "fleet N=200 P=10,fleet N=200 P=50,instances N=200 P=10,instances N=200 P=50,instances N=200 P=200," +
		"fleet N=1000 P=10,fleet N=1000 P=50,instances N=1000 P=50"
	if strings.Join(got, ",") != want {
		t.Fatalf("runs %s\nwant %s", strings.Join(got, ","), want)
	}
	c := defaultConfig()
	c.instBudget = 0
	if _, skips := c.matrix(); len(skips) != 0 {
		t.Fatalf("-instances-budget 0 skipped %+v", skips)
	}
}

// The stand-in's schedules are the SDK's: creation polls 1 s × 1.5^k
// capped at 10 s, ±25 %; verifiers' applied wait 0.1 s doubling to 3 s.
func TestSDKSchedules(t *testing.T) {
	nominal := 1.0
	for i := range 12 {
		want := time.Duration(min(nominal, 10) * float64(time.Second))
		for range 50 {
			if d := sdkPollDelay(i); d < want*3/4 || d > want*5/4 {
				t.Fatalf("poll delay %d = %s, want %s ±25 %%", i, d, want)
			}
		}
		nominal *= 1.5
	}
	var got []string
	for i := range 8 {
		got = append(got, verifiersApplyDelay(i).String())
	}
	if s := strings.Join(got, " "); s != "100ms 200ms 400ms 800ms 1.6s 3s 3s 3s" {
		t.Fatalf("applied-wait sleeps %s", s)
	}
}

// The batcher coalesces lookups made while no dispatch runs into requests
// of at most 100 ids, sent one after another.
func TestSDKBatcherCoalesces(t *testing.T) {
	var mu sync.Mutex
	var sizes []int
	inFlight, maxInFlight := 0, 0
	b := &sdkBatcher{pending: map[string][]chan sdkStatusResult{}}
	b.fetch = func(_ context.Context, ids []string) (map[string]sdkStatusResult, error) {
		mu.Lock()
		sizes = append(sizes, len(ids))
		inFlight++
		maxInFlight = max(maxInFlight, inFlight)
		mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		mu.Lock()
		inFlight--
		mu.Unlock()
		out := map[string]sdkStatusResult{}
		for _, id := range ids {
			out[id] = sdkStatusResult{SandboxStatus: prime.SandboxStatus{SandboxID: id, Status: prime.StatusRunning}}
		}
		return out, nil
	}
	var wg sync.WaitGroup
	for i := range 250 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := b.get(context.Background(), fmt.Sprintf("sbx%03d", i))
			if err != nil || st.SandboxID != fmt.Sprintf("sbx%03d", i) {
				t.Errorf("lookup %d: %+v, %v", i, st, err)
			}
		}()
	}
	wg.Wait()
	total := 0
	for _, s := range sizes {
		if s > sdkMaxStatusBatch {
			t.Fatalf("a request carried %d ids", s)
		}
		total += s
	}
	if total != 250 || maxInFlight != 1 {
		t.Fatalf("%d ids in %d requests (%v), %d at once; want 250 ids, one request at a time", total, len(sizes), sizes, maxInFlight)
	}
}

// A sections-only run replaces its own section and leaves the rest of
// the report as it was; a report without the section gets it appended.
func TestSpliceSection(t *testing.T) {
	doc := "# Benchmarks\n\n## Fleet\n\nfigures\n"
	once := splice(doc, setupOnceBegin, setupOnceEnd, "## Setup once\n\nv1\n")
	if !strings.HasPrefix(once, doc) || !strings.Contains(once, setupOnceBegin+"\n## Setup once\n\nv1\n"+setupOnceEnd) {
		t.Fatalf("appended:\n%s", once)
	}
	twice := splice(once+"\n## After\n", setupOnceBegin, setupOnceEnd, "## Setup once\n\nv2\n")
	if strings.Contains(twice, "v1") || !strings.Contains(twice, "v2") || !strings.HasPrefix(twice, doc) || !strings.HasSuffix(twice, "## After\n") {
		t.Fatalf("replaced:\n%s", twice)
	}
	if strings.Count(twice, setupOnceBegin) != 1 {
		t.Fatalf("markers duplicated:\n%s", twice)
	}
}

func TestSetupFloors(t *testing.T) {
	c := benchConfig{boot: 2 * time.Second, gatewayLag: 300 * time.Millisecond, apply: time.Second}
	per, once := setupFloors(c, 200, 3*time.Second)
	// ⌈200/32⌉ = 7 waves.
	if want := 2*time.Second + 300*time.Millisecond + 7*3*time.Second + time.Second; per != want {
		t.Fatalf("per-member floor %s, want %s", per, want)
	}
	if once <= 3*time.Second+2*c.boot || once >= per {
		t.Fatalf("once floor %s: want one setup, two boots and the checkpoint, below per member's %s", once, per)
	}
}

// The fleet limit is W until a published per-token limit binds: creates
// beyond 15,000 members need another minute's window.
func TestFleetLimitWherePublishedLimitsBind(t *testing.T) {
	c := defaultConfig()
	for _, tc := range []struct {
		n    int
		want time.Duration
	}{{1000, 3010 * time.Millisecond}, {10000, 3010 * time.Millisecond}, {15000, 3010 * time.Millisecond},
		{15001, 63010 * time.Millisecond}, {30001, 123010 * time.Millisecond}} {
		if got := fleetLimit(c, tc.n); got != tc.want {
			t.Errorf("fleet limit at N=%d: %s, want %s", tc.n, got, tc.want)
		}
	}
}

// make bench-scale writes its section into the report and leaves the rest
// as it was; a second run replaces the first one's section.
func TestWriteScaleOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "BENCHMARKS.md")
	doc := "# Benchmarks\n\n## Fleet path\n\nfigures\n"
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	c := benchConfig{argv: []string{"prime-bench", "bench", "-scale-only"}, rateLimits: true, fleetPs: []int{10}}
	for range 2 {
		if err := writeScaleOnly(path, c, machine{}, &report{}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(got)
	if !strings.HasPrefix(s, doc) || strings.Count(s, scaleBegin) != 1 || strings.Count(s, "## Scale (`make bench-scale`)") != 1 ||
		!strings.Contains(s, "`prime-bench bench -scale-only`") || !strings.Contains(s, "| fleet N=10000: provider peak RSS | ") {
		t.Fatalf("the report after two scale-only writes:\n%s", s)
	}
}
