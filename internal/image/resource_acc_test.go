package image_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// imageGuardedFleet is a fleet of image guarded by a precondition on the
// prime_image data source; extra goes into the fleet block.
func imageGuardedFleet(image, dataExtra, fleetExtra string) string {
	return fmt.Sprintf(`
data "prime_image" "agent" {
  reference = %[1]q
  %[2]s
}
resource "prime_sandbox_fleet" "f" {
  name_prefix  = "eval"
  docker_image = %[1]q
  size         = 3
  %[3]s
  lifecycle {
    precondition {
      condition     = data.prime_image.agent.vm_ready
      error_message = "Image ${data.prime_image.agent.name}:${data.prime_image.agent.tag} cannot boot a VM sandbox (VM artifact: ${coalesce(data.prime_image.agent.vm_status, "none")}); add a prime_image_vm_build."
    }
  }
}
`, image, dataExtra, fleetExtra)
}

// An image without a VM artifact stops the fleet at plan: the precondition
// names the image, and no sandbox create reaches the platform.
func TestAccImage_preconditionFailsAtPlan(t *testing.T) {
	o := mocktest.Fast()
	o.ImagesWithoutVM = []string{"u1/legacy-agent:v1"}
	m := mocktest.New(t, o)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		Steps: []resource.TestStep{{
			Config:      m.Config(imageGuardedFleet("u1/legacy-agent:v1", "", "")),
			PlanOnly:    true,
			ExpectError: acctest.ExpectErr("Image legacy-agent:v1 cannot boot a VM sandbox (VM artifact: none); add a prime_image_vm_build."),
		}, {
			Config:      m.Config(imageGuardedFleet("u1/legacy-agent:v1", "", "")),
			ExpectError: acctest.ExpectErr("Resource precondition failed"),
		}},
	})
	if n := len(m.CreateBodies(t)); n != 0 {
		t.Fatalf("%d sandbox creates reached the platform; the precondition must stop the fleet at plan", n)
	}
}

// prime_image_vm_build requests the vm-build and waits for it; the fleet
// that depends on it boots the image; a second plan is empty.
func TestAccImage_vmBuildThenFleet(t *testing.T) {
	o := mocktest.Fast()
	o.ImagesWithoutVM = []string{"legacy-agent:v1"}
	m := mocktest.New(t, o)
	cfg := m.Config(`
resource "prime_image_vm_build" "agent" {
  name = "legacy-agent"
  tag  = "v1"
}
` + imageGuardedFleet("legacy-agent:v1", "depends_on = [prime_image_vm_build.agent]", ""))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config: cfg,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("prime_image_vm_build.agent", tfjsonpath.New("vm_status"), knownvalue.StringExact("COMPLETED")),
				statecheck.ExpectKnownValue("prime_image_vm_build.agent", tfjsonpath.New("build_id"), knownvalue.NotNull()),
				statecheck.ExpectKnownValue("prime_image_vm_build.agent", tfjsonpath.New("id"), knownvalue.StringExact("legacy-agent:v1")),
				statecheck.ExpectKnownValue("data.prime_image.agent", tfjsonpath.New("vm_ready"), knownvalue.Bool(true)),
				statecheck.ExpectKnownValue("data.prime_image.agent", tfjsonpath.New("vm_status"), knownvalue.StringExact("COMPLETED")),
				statecheck.ExpectKnownValue("data.prime_image.agent", tfjsonpath.New("found"), knownvalue.Bool(true)),
				statecheck.ExpectKnownValue("prime_sandbox_fleet.f", tfjsonpath.New("sandbox_ids"), knownvalue.MapSizeExact(3)),
			},
		}},
	})
	builds := 0
	for _, e := range m.Events() {
		if e.Type == primemock.EventImageBuild && e.State == "COMPLETED" {
			builds++
		}
	}
	if builds != 1 {
		t.Fatalf("%d vm-builds completed, want 1", builds)
	}
}

// A vm-build that fails, or outlasts timeouts.create, fails the apply
// closed: nothing is recorded and the fleet is never created.
func TestAccImage_vmBuildFailsClosed(t *testing.T) {
	failing := "legacy-" + primemock.MagicVMBuildFailName
	for _, c := range []struct {
		name, image, timeouts, want string
		delay                       time.Duration
	}{
		{"failed", failing, "", "ended FAILED: VM sandboxes still cannot boot the image, and nothing that depends on this resource was started. (image build", 0},
		{"timeout", "slow-agent", `timeouts {
    create = "1s"
  }`, "had not completed after 1s (timeouts.create). Failing closed: nothing is recorded", time.Minute},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := mocktest.Fast()
			o.ImagesWithoutVM = []string{c.image + ":v1"}
			o.VMBuildDelay = c.delay
			m := mocktest.New(t, o)
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: acctest.ProviderFactories(t),
				CheckDestroy:             m.CheckNoLiveSandboxes,
				Steps: []resource.TestStep{{
					Config: m.Config(fmt.Sprintf(`
resource "prime_image_vm_build" "agent" {
  name = %q
  tag  = "v1"
  %s
}
`, c.image, c.timeouts) + imageGuardedFleet(c.image+":v1", "depends_on = [prime_image_vm_build.agent]", "")),
					ExpectError: acctest.ExpectErr(c.want),
				}},
			})
			if n := len(m.CreateBodies(t)); n != 0 {
				t.Fatalf("%d sandbox creates: nothing may start on an image whose build did not complete", n)
			}
		})
	}
}
