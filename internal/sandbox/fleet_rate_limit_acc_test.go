package sandbox_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
)

// A burst over the platform's published limits: with the limits scaled
// down to a few requests per window (the status batch 1 per sandbox, the
// egress GET 1, creates 75, deletes 2) and the mock clock at 30 times real
// time (a 60-second window lasts 2 s), a fleet of 12 locked by a fleet
// policy and destroyed meets 429s on the way; the provider waits out each
// Retry-After, and the apply and the destroy complete. The boot takes
// 800 ms, so the boot's scouts (which check their sandboxes from 250 ms on,
// 100 ms apart, to learn the boot time for the other members) check twice
// within one 2-second window and meet the status limit however slowly the
// machine runs; a faster boot left the 429s to two requests seconds apart
// (the policy's wait and the next refresh), which a loaded machine spread
// over two windows.
func TestAccSandboxFleet_rateLimitBurstIsWaitedOut(t *testing.T) {
	o := mocktest.Fast()
	o.RateLimitScale, o.ClockRate, o.BootDelay = 0.005, 30, 800*time.Millisecond
	m := mocktest.New(t, o)
	cfg := m.Config(`
resource "prime_sandbox_fleet" "f" {
  name_prefix  = "burst"
  docker_image = "python:3.12-slim"
  size         = 12
}

resource "prime_fleet_egress_policy" "lock" {
  sandbox_ids = prime_sandbox_fleet.f.sandbox_ids
  allow       = ["example.com"]
}
`)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy: func(s *terraform.State) error {
			if err := m.CheckNoLiveSandboxes(s); err != nil {
				return err
			}
			if n := m.Stats().RateLimited429; n == 0 {
				return fmt.Errorf("no request met a 429 (peaks %v): the burst did not reach a limit, so this test shows nothing", m.Stats().RatePeaks)
			}
			return nil
		},
		Steps: []resource.TestStep{{
			Config: cfg,
			Check: func(*terraform.State) error {
				if live := m.Stats().LiveSandboxes; live != 12 {
					return fmt.Errorf("%d live sandboxes, want 12", live)
				}
				return nil
			},
		}},
	})
}
