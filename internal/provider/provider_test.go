package provider_test

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
)

func TestAccProvider_missingAPIKey(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
provider "prime" {
  base_url = %q
}
data "prime_sandbox" "x" {
  id = "nope"
}
`, m.URL),
			ExpectError: acctest.ExpectErr("No API key was found. Set api_key in the provider block, the PRIME_API_KEY environment variable"),
		}},
	})
	m.NoAPICalls(t)
}

func TestAccProvider_badKeyIsUnauthorized(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
provider "prime" {
  base_url = %q
  api_key  = "wrong-key"
}`+acctest.SandboxHCL("x", "x"), m.URL),
			ExpectError: acctest.ExpectErr("HTTP 401: unauthorized: check the API key"),
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
	o := mocktest.Fast()
	o.Latency = 30 * time.Millisecond
	m := mocktest.New(t, o)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
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
				return checkRate(m, rate)
			},
		}},
	})
}

// checkRate fails when some interval of the recorded requests holds more
// than a token bucket of rate per second with a burst of rate admits. A
// request is recorded when it arrives, after the client's limiter let it go.
func checkRate(m *mocktest.Mock, rate float64) error {
	reqs := m.Requests()
	at := make([]time.Time, len(reqs))
	for i, r := range reqs {
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
	o := mocktest.Fast()
	o.FailRate = 1
	m := mocktest.New(t, o)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
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
			ExpectError: acctest.ExpectErr("HTTP 503"),
		}},
	})
	if got := m.Stats().Requests["GET /api/v1/sandbox/{id}"]; got != 4 {
		t.Fatalf("the read was sent %d times, want 4 (1 + max_retries)", got)
	}
}

func TestAccProvider_pacingValidation(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
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
			ExpectError: acctest.ExpectErr("Attribute max_concurrent_requests value must be at least 0"),
		}},
	})
	m.NoAPICalls(t)
}
