package volume_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

func volumeAttachHCL(mount string, readOnly bool) string {
	return fmt.Sprintf(`
resource "prime_volume" "data" {
  name    = "eval-data"
  size_gb = 5
}
resource "prime_sandbox" "box" {
  name         = "box"
  docker_image = "python:3.12-slim"
  volumes      = [{ name = prime_volume.data.name, mount_path = %q, read_only = %t }]
}
resource "prime_sandbox_fleet" "boxes" {
  name_prefix  = "eval"
  size         = 2
  docker_image = "python:3.12-slim"
  volumes      = [{ name = prime_volume.data.name, mount_path = %q }]
}
`, mount, readOnly, mount)
}

// Volumes are attached at create (the mock records each attachment, and
// the create body carries them); the second plan is empty; a changed
// attachment replaces the sandbox and the fleet.
func TestAccVolume_attachedAtCreateReplacedOnChange(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	attached := func(mount string, want int) resource.TestCheckFunc {
		return func(*terraform.State) error {
			n := 0
			for _, e := range m.Events() {
				if e.Type == primemock.EventVolumeAttached && e.Path == mount && e.Volume == "eval-data" {
					n++
				}
			}
			if n != want {
				return fmt.Errorf("%d attachments at %s, want %d", n, mount, want)
			}
			return nil
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: m.Config(volumeAttachHCL("/data", true)),
				Check: resource.ComposeAggregateTestCheckFunc(attached("/data", 3), func(*terraform.State) error {
					for _, b := range m.CreateBodies(t) {
						vols, _ := b["volumes"].([]any)
						if len(vols) != 1 {
							return fmt.Errorf("create body volumes = %v, want one", b["volumes"])
						}
					}
					return nil
				}),
			},
			{Config: m.Config(volumeAttachHCL("/data", true)), ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
			{
				Config: m.Config(volumeAttachHCL("/mnt/data", false)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox.box", plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectResourceAction("prime_sandbox_fleet.boxes", plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectResourceAction("prime_volume.data", plancheck.ResourceActionNoop),
				}},
				Check: attached("/mnt/data", 3),
			},
		},
	})
}
