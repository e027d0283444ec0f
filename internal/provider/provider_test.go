package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// providerFactories serves the provider to one test. Each test gets its own
// create journal directory: the provider runs in this process, so the
// default (the user cache, keyed by working directory) would be shared by
// every parallel test.
func providerFactories(t *testing.T) map[string]func() (tfprotov6.ProviderServer, error) {
	dir := t.TempDir()
	return map[string]func() (tfprotov6.ProviderServer, error){
		"prime": func() (tfprotov6.ProviderServer, error) {
			return NewProtocol6Server(&primeProvider{version: "test", journalDir: dir})(), nil
		},
	}
}

// TestMain makes the acceptance tests hermetic: no PRIME_* settings or
// ~/.prime/config.json of the developer leak in, and the Terraform CLI gets
// an existing (empty) CLI configuration file.
func TestMain(m *testing.M) {
	for _, k := range []string{"PRIME_API_KEY", "PRIME_TEAM_ID", "PRIME_BASE_URL", "PRIME_API_BASE_URL", "PRIME_USER_ID"} {
		_ = os.Unsetenv(k)
	}
	tmp, err := os.MkdirTemp("", "prime-acc-")
	if err != nil {
		panic(err)
	}
	_ = os.Setenv("HOME", tmp)
	_ = os.Unsetenv("XDG_CACHE_HOME") // the create journal lives in the user cache
	if f := os.Getenv("TF_CLI_CONFIG_FILE"); f == "" || !fileExists(f) {
		rc := filepath.Join(tmp, "terraformrc")
		_ = os.WriteFile(rc, nil, 0o600)
		_ = os.Setenv("TF_CLI_CONFIG_FILE", rc)
	}
	_ = os.Setenv("CHECKPOINT_DISABLE", "1")
	code := m.Run()
	_ = os.RemoveAll(tmp)
	os.Exit(code)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// testMock is one in-process Prime API for one test, with a recorder of the
// request bodies the provider sent.
type testMock struct {
	*primemock.Server
	URL string

	mu       sync.Mutex
	requests []recordedRequest
}

type recordedRequest struct {
	Method, Path string
	Body         []byte
	At           time.Time
}

// fastMockOptions keep acceptance tests quick while every lifecycle step
// still happens on a timer.
func fastMockOptions() primemock.Options {
	return primemock.Options{BootDelay: 60 * time.Millisecond, ApplyDelay: 40 * time.Millisecond, APIKey: "test-key"}
}

func newTestMock(t *testing.T, o primemock.Options) *testMock {
	t.Helper()
	return newHookedMock(t, o, nil)
}

// mockHook sees every /api/v1 request (and its body) before the mock does;
// it may delay it, or answer it itself and return true.
type mockHook func(w http.ResponseWriter, r *http.Request, body []byte) bool

// newHookedMock is newTestMock with a hook in front of the mock: for races
// and refusals the mock has no knob for.
func newHookedMock(t *testing.T, o primemock.Options, hook mockHook) *testMock {
	t.Helper()
	m := &testMock{Server: primemock.New(o)}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, prime.APIPrefix) {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			m.mu.Lock()
			m.requests = append(m.requests, recordedRequest{Method: r.Method, Path: r.URL.Path, Body: body, At: time.Now()})
			m.mu.Unlock()
			if hook != nil && hook(w, r, body) {
				return
			}
		}
		m.Server.ServeHTTP(w, r)
	}))
	m.URL = ts.URL
	t.Cleanup(func() {
		ts.Close()
		m.Server.Close()
	})
	return m
}

// providerBlock configures the provider against this mock.
func (m *testMock) providerBlock() string {
	return fmt.Sprintf(`
provider "prime" {
  base_url = %q
  api_key  = "test-key"
}
`, m.URL)
}

// config prepends the provider block to HCL.
func (m *testMock) config(hcl string) string { return m.providerBlock() + hcl }

// apiRequests is the number of /api/v1 requests the mock received.
func (m *testMock) apiRequests() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.requests)
}

// createBodies returns the JSON bodies of POST /api/v1/sandbox.
func (m *testMock) createBodies(t *testing.T) []map[string]any {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []map[string]any
	for _, r := range m.requests {
		if r.Method == http.MethodPost && r.Path == prime.APIPrefix+"/sandbox" {
			var body map[string]any
			if err := json.Unmarshal(r.Body, &body); err != nil {
				t.Fatalf("create body: %v", err)
			}
			out = append(out, body)
		}
	}
	return out
}

// client is an API client for out-of-band changes (drift) in tests.
func (m *testMock) client(t *testing.T) *prime.Client {
	t.Helper()
	c, err := prime.New(prime.Options{Config: prime.Config{APIKey: "test-key", BaseURL: m.URL}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// noAPICalls fails when the mock received any API request: plan-time
// validation must reject bad input before that.
func (m *testMock) noAPICalls(t *testing.T) {
	t.Helper()
	if n := m.apiRequests(); n != 0 {
		t.Fatalf("the provider sent %d API requests; plan-time validation must reject the input first", n)
	}
}

// checkNoLiveSandboxes is a CheckDestroy: nothing the test created is left
// running on the platform.
func (m *testMock) checkNoLiveSandboxes(*terraform.State) error {
	if live := m.Stats().LiveSandboxes; live != 0 {
		return fmt.Errorf("%d sandboxes are still live after destroy", live)
	}
	return nil
}

// reachable asks the mock whether a sandbox reaches host under its applied
// egress policy.
func (m *testMock) reachable(t *testing.T, id, host string) bool {
	t.Helper()
	ok, found := m.Reachable(id, host)
	if !found {
		t.Fatalf("sandbox %s unknown to the mock", id)
	}
	return ok
}

// stateID returns the ID of a resource in state.
func stateID(s *terraform.State, addr string) (string, error) {
	rs, ok := s.RootModule().Resources[addr]
	if !ok {
		return "", fmt.Errorf("%s not in state", addr)
	}
	return rs.Primary.ID, nil
}

// expectErr compiles a regexp that matches across line breaks: Terraform
// wraps long diagnostics.
func expectErr(s string) *regexp.Regexp {
	words := strings.Fields(s)
	for i, w := range words {
		words[i] = regexp.QuoteMeta(w)
	}
	return regexp.MustCompile(`(?s)` + strings.Join(words, `\s+`))
}

func waitCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestAccProvider_missingAPIKey(t *testing.T) {
	m := newTestMock(t, fastMockOptions())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories(t),
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
provider "prime" {
  base_url = %q
}
data "prime_sandbox" "x" {
  id = "nope"
}
`, m.URL),
			ExpectError: expectErr("No API key was found. Set api_key in the provider block, the PRIME_API_KEY environment variable"),
		}},
	})
	m.noAPICalls(t)
}

func TestAccProvider_badKeyIsUnauthorized(t *testing.T) {
	m := newTestMock(t, fastMockOptions())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories(t),
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
provider "prime" {
  base_url = %q
  api_key  = "wrong-key"
}`+sandboxHCL("x", "x"), m.URL),
			ExpectError: expectErr("HTTP 401: unauthorized: check the API key"),
		}},
	})
}

// The pacing attributes reach the client: with max_concurrent_requests = 2
// the mock never serves more than two requests at once, and with
// max_requests_per_second = 20 no interval of the run holds more requests
// than a 20/s token bucket with a burst of 20 allows — while thirty
// sandboxes created in parallel would exceed both without the caps.
func TestAccProvider_pacingAttributes(t *testing.T) {
	const rate = 20.0
	o := fastMockOptions()
	o.Latency = 30 * time.Millisecond
	m := newTestMock(t, o)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories(t),
		CheckDestroy:             m.checkNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
provider "prime" {
  base_url                = %q
  api_key                 = "test-key"
  max_requests_per_second = %g
  max_concurrent_requests = 2
}
resource "prime_sandbox" "fleet" {
  count        = 30
  name         = "paced-${count.index}"
  docker_image = "img"
}
`, m.URL, rate),
			Check: func(*terraform.State) error {
				if peak := m.Stats().PeakInFlight; peak > 2 {
					return fmt.Errorf("peak in-flight requests = %d, want ≤ 2", peak)
				}
				return m.checkRate(rate)
			},
		}},
	})
}

// checkRate fails when some interval of the recorded requests holds more
// than a token bucket of rate per second with a burst of rate admits. A
// request is recorded when it arrives, after the client's limiter let it go.
func (m *testMock) checkRate(rate float64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	at := make([]time.Time, len(m.requests))
	for i, r := range m.requests {
		at[i] = r.At
	}
	sort.Slice(at, func(i, j int) bool { return at[i].Before(at[j]) })
	// Arrival jitter after the limiter (scheduling, the mock's latency) can
	// bunch requests; on a loaded 2-core runner (load average 14) 50 ms of
	// slack flaked once. 250 ms keeps that from failing the test while an
	// unpaced run (about 66 requests a second here, against the 45 a 1 s
	// window then admits) still fails.
	const slack = 250 * time.Millisecond
	for i := range at {
		for j := i; j < len(at); j++ {
			allowed := rate + rate*(at[j].Sub(at[i])+slack).Seconds()
			if n := float64(j - i + 1); n > allowed {
				return fmt.Errorf("%d requests within %s; max_requests_per_second = %g admits at most %.0f",
					j-i+1, at[j].Sub(at[i]).Round(time.Millisecond), rate, allowed)
			}
		}
	}
	return nil
}

// max_retries bounds the attempts of a failing idempotent request: with
// every answer a 503, a read is sent 1 + 3 times.
func TestAccProvider_maxRetries(t *testing.T) {
	o := fastMockOptions()
	o.FailRate = 1
	m := newTestMock(t, o)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories(t),
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
provider "prime" {
  base_url    = %q
  api_key     = "test-key"
  max_retries = 3
}
data "prime_sandbox" "x" {
  id = "sbx-1"
}
`, m.URL),
			ExpectError: expectErr("HTTP 503"),
		}},
	})
	if got := m.Stats().Requests["GET /api/v1/sandbox/{id}"]; got != 4 {
		t.Fatalf("the read was sent %d times, want 4 (1 + max_retries)", got)
	}
}

func TestAccProvider_pacingValidation(t *testing.T) {
	m := newTestMock(t, fastMockOptions())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories(t),
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
provider "prime" {
  base_url                = %q
  api_key                 = "k"
  max_concurrent_requests = -1
}
data "prime_sandbox" "x" {
  id = "x"
}
`, m.URL),
			ExpectError: expectErr("Attribute max_concurrent_requests value must be at least 0"),
		}},
	})
	m.noAPICalls(t)
}
