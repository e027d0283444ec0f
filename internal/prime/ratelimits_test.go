package prime_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// A fleet's protocol — create, wait until the gateway runs a command, lock
// egress and wait until it is enforced, a gateway command, delete — stays
// under the platform's published per-sandbox limits at fleet scale: the mock
// enforces them (429s), and its peaks (the most requests one sandbox made in
// a 60-second window) stay under each limit. PRIME_RATE_N sets the fleet
// size (default 1000; 200 with -short), PRIME_RATE_BOOT the boot time
// (default 2s).
func TestFleetStaysUnderPerSandboxLimits(t *testing.T) {
	n := 1000
	if testing.Short() {
		n = 200
	}
	if v, err := strconv.Atoi(os.Getenv("PRIME_RATE_N")); err == nil && v > 0 {
		n = v
	}
	boot := 2 * time.Second
	if d, err := time.ParseDuration(os.Getenv("PRIME_RATE_BOOT")); err == nil {
		boot = d
	}
	m := primemock.New(primemock.Options{APIKey: "k", BootDelay: boot, ApplyDelay: time.Second})
	srv := httptest.NewServer(m)
	t.Cleanup(func() { srv.Close(); m.Close() })
	c, err := prime.New(prime.Options{Config: prime.Config{APIKey: "k", BaseURL: srv.URL},
		Throttle: prime.NewThrottle(prime.ThrottleOptions{RequestsPerSecond: 200, MaxConcurrent: 64})})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	ids := make([]string, n)
	for i := range n {
		wg.Go(func() {
			var err error
			if ids[i], err = memberProtocol(ctx, c, i); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// A fleet is deleted in bulk: deleting sandboxes one by one is limited
	// to 500 a minute per API key.
	if _, err := c.BulkDeleteSandboxes(ctx, prime.BulkDeleteRequest{SandboxIDs: ids}); err != nil {
		t.Error(err)
	}
	st := m.Stats()
	if st.RateLimited429 != 0 {
		t.Errorf("%d requests were over a per-sandbox limit (429)", st.RateLimited429)
	}
	limits := map[string]int{"status batchGet": 300, "sandbox GET": 300, "egress GET": 300, "egress PUT": 120, "gateway auth": 120, "error-context": 600}
	for name, limit := range limits {
		if st.RatePeaks[name] > limit {
			t.Errorf("%s: one sandbox made %d requests in a minute; the limit is %d", name, st.RatePeaks[name], limit)
		}
	}
	t.Logf("N=%d in %s; most requests one sandbox made in a minute: %v", n, time.Since(start).Round(time.Millisecond), st.RatePeaks)
}

func memberProtocol(ctx context.Context, c *prime.Client, i int) (string, error) {
	sb, err := c.CreateSandbox(ctx, prime.CreateSandboxRequest{Name: fmt.Sprintf("rate-%d", i), DockerImage: "img"})
	if err != nil {
		return "", err
	}
	if err := c.WaitForReady(ctx, sb.ID, prime.WaitReadyOptions{Gateway: true}); err != nil {
		return sb.ID, fmt.Errorf("%s: ready: %w", sb.ID, err)
	}
	put, err := c.PutEgressPolicy(ctx, sb.ID, prime.EgressPolicy{Allowlist: []string{"example.com"}})
	if err != nil {
		return sb.ID, fmt.Errorf("%s: put: %w", sb.ID, err)
	}
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if _, err := c.WaitForEgressApplied(wctx, sb.ID, put.Generation, put); err != nil {
		return sb.ID, fmt.Errorf("%s: wait: %w", sb.ID, err)
	}
	if _, err := c.Exec(ctx, sb.ID, prime.ExecRequest{Command: "echo agent", Timeout: 30 * time.Second}); err != nil {
		return sb.ID, fmt.Errorf("%s: exec: %w", sb.ID, err)
	}
	return sb.ID, nil
}
