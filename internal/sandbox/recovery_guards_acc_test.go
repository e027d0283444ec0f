package sandbox_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
)

// Sandboxes that Terraform holds carry the same labels as a lost apply's
// would when a configuration creates several alike (a count with one
// name): growing the count must create a new sandbox, never adopt one
// another instance holds. The plan walk of the growing apply, on a new
// runner with an empty cache directory, notes what state holds; the create
// skips it.
func TestAccSandbox_sameNameCountGrowsWithoutAdopting(t *testing.T) {
	cli := acctest.RequireCLI(t)
	provider := acctest.DevProvider(t)
	t.Parallel()
	m := mocktest.New(t, mocktest.Fast())
	hcl := func(n int) string {
		return fmt.Sprintf(`
provider "prime" {}

resource "prime_sandbox" "worker" {
  count        = %d
  name         = "worker"
  docker_image = "python:3.12-slim"
}
`, n)
	}
	w := acctest.NewMockWork(t, m, provider(), cli, hcl(1))
	w.OnNewRunner()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	w.Must(ctx, "apply", "-auto-approve")

	w.Write(hcl(3))
	w.OnNewRunner()
	w.Must(ctx, "apply", "-auto-approve")
	if st := m.Stats(); st.LiveSandboxes != 3 || st.SandboxesCreated != 3 {
		t.Errorf("count 1 → 3 with one name: %d live, %d created; want 3 and 3 (worker[0]'s sandbox is held, not a leftover)",
			st.LiveSandboxes, st.SandboxesCreated)
	}
	ids := map[string]bool{}
	for i := range 3 {
		ids[w.StateAttr(ctx, fmt.Sprintf("prime_sandbox.worker[%d]", i), "id")] = true
	}
	if len(ids) != 3 {
		t.Errorf("three instances hold %d distinct sandboxes", len(ids))
	}
	w.Must(ctx, "destroy", "-auto-approve")
	if live := m.Stats().LiveSandboxes; live != 0 {
		t.Errorf("%d sandboxes live after destroy", live)
	}
}

// The provider's own labels are reserved: a configuration that uses their
// prefix is refused at plan, naming the label, before any API call.
func TestAccSandbox_reservedLabelPrefixRefused(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	for _, hcl := range []string{`
resource "prime_sandbox" "x" {
  name         = "x"
  docker_image = "python:3.12-slim"
  labels       = ["eval", "tfprime-ws-0123456789abcdef"]
}`, `
resource "prime_sandbox_fleet" "x" {
  name_prefix  = "x"
  size         = 1
  docker_image = "python:3.12-slim"
  labels       = ["tfprime-mine"]
}`} {
		resource.UnitTest(t, resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProviderFactories(t),
			Steps: []resource.TestStep{{
				Config:      m.Config(hcl),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)labels: "tfprime-.*reserves`),
			}},
		})
	}
	m.NoAPICalls(t)
}
