package egress_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// The platform takes an egress policy only on a RUNNING or PAUSED sandbox.
// A policy on a sandbox made outside Terraform that is still booting waits
// for it to run, then writes and waits for enforcement as usual: the write
// comes after RUNNING, and the policy is enforced when the apply ends.
func TestAccEgressPolicy_bootingSandboxIsWaitedFor(t *testing.T) {
	o := mocktest.Fast()
	o.BootDelay = 3 * time.Second
	m := mocktest.New(t, o)
	sb, err := m.Client(t).CreateSandbox(mocktest.WaitCtx(t), prime.CreateSandboxRequest{Name: "booting", DockerImage: "python:3.12-slim"})
	if err != nil {
		t.Fatal(err)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		Steps: []resource.TestStep{{
			Config: m.Config(fmt.Sprintf(`
resource "prime_egress_policy" "p" {
  sandbox_id = %q
  allow      = ["example.com"]
}
`, sb.ID)),
			Check: func(*terraform.State) error {
				var running, put int64
				for _, e := range m.Events() {
					switch {
					case e.SandboxID != sb.ID:
					case e.Type == primemock.EventSandboxRunning:
						running = e.Seq
					case e.Type == primemock.EventPolicyPut && put == 0:
						put = e.Seq
					}
				}
				if running == 0 || put < running {
					return fmt.Errorf("policy written at event %d, RUNNING at %d: the write must wait for RUNNING", put, running)
				}
				if !m.Reaches(t, sb.ID, "example.com") || m.Reaches(t, sb.ID, "other.com") {
					return fmt.Errorf("the policy is not enforced after the apply")
				}
				return nil
			},
		}},
	})
}
