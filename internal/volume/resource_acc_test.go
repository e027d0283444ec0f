package volume_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

func volumeHCL(size int, public bool) string {
	return fmt.Sprintf(`
resource "prime_volume" "data" {
  name    = "eval-data"
  size_gb = %d
  public  = %t
}

data "prime_volume" "data" {
  name = prime_volume.data.name
  depends_on = [prime_volume.data]
}
`, size, public)
}

// mockVolume reads the volume as the platform holds it.
func mockVolume(t *testing.T, m *mocktest.Mock) *prime.Volume {
	v, err := m.Client(t).GetVolume(mocktest.WaitCtx(t), "eval-data", "")
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// A volume grows in place and changes visibility in place; a shrink is
// refused at plan naming both sizes, and nothing is sent for it; import by name and a second plan change nothing; destroy
// deletes it.
func TestAccVolume_growInPlaceShrinkRefused(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy: func(*terraform.State) error {
			if _, err := m.Client(t).GetVolume(mocktest.WaitCtx(t), "eval-data", ""); err == nil {
				return fmt.Errorf("volume eval-data still exists after destroy")
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: m.Config(volumeHCL(10, false)),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("prime_volume.data", tfjsonpath.New("id"), knownvalue.StringExact("eval-data")),
					statecheck.ExpectKnownValue("prime_volume.data", tfjsonpath.New("head_checkpoint_id"), knownvalue.Null()),
					statecheck.ExpectKnownValue("data.prime_volume.data", tfjsonpath.New("size_gb"), knownvalue.Int64Exact(10)),
					statecheck.ExpectKnownValue("data.prime_volume.data", tfjsonpath.New("public"), knownvalue.Bool(false)),
				},
			},
			{
				Config: m.Config(volumeHCL(20, false)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_volume.data", plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error {
					if v := mockVolume(t, m); v.SizeGB != 20 {
						return fmt.Errorf("the platform holds %d GiB, want 20", v.SizeGB)
					}
					return nil
				},
			},
			{
				Config:   m.Config(volumeHCL(5, false)),
				PlanOnly: true,
				ExpectError: acctest.ExpectInOrder("Volume cannot shrink", "size_gb: the volume holds 20 GiB and cannot shrink to 5 GiB. "+
					"Volumes only grow (in place); the provider never replaces a volume to make it smaller"),
			},
			{
				Config: m.Config(volumeHCL(20, true)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_volume.data", plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error {
					if v := mockVolume(t, m); v.Visibility != prime.VolumePublic || v.SizeGB != 20 {
						return fmt.Errorf("the platform holds %+v, want PUBLIC and 20 GiB", v)
					}
					updates := 0
					for _, e := range m.Events() {
						switch e.Type {
						case primemock.EventVolumeDeleted:
							return fmt.Errorf("the volume was deleted (replaced) on the way: %+v", e)
						case primemock.EventVolumeUpdated:
							updates++
						}
					}
					if updates != 2 {
						return fmt.Errorf("%d volume updates, want 2 (the grow and the visibility): the refused shrink sends none", updates)
					}
					return nil
				},
			},
			{
				ResourceName:      "prime_volume.data",
				ImportState:       true,
				ImportStateVerify: true,
			},
		},
	})
}

// A public volume is made public right after its create (the create body
// has no visibility), and sizes beyond the limit and bad names fail at plan
// with no API call.
func TestAccVolume_createPublicAndPlanTimeErrors(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		Steps: []resource.TestStep{{
			Config: m.Config(volumeHCL(1, true)),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("prime_volume.data", tfjsonpath.New("public"), knownvalue.Bool(true)),
				statecheck.ExpectKnownValue("data.prime_volume.data", tfjsonpath.New("public"), knownvalue.Bool(true)),
			},
		}},
	})
	for _, tc := range []struct{ name, hcl, want string }{
		{"too big", `resource "prime_volume" "v" {
  name    = "big"
  size_gb = 101
}`, "size_gb: 101 GiB is not a volume size: a volume holds 1 to 100 GiB."},
		{"zero", `resource "prime_volume" "v" {
  name    = "none"
  size_gb = 0
}`, "size_gb: 0 GiB is not a volume size"},
		{"bad name", `resource "prime_volume" "v" {
  name    = "Eval_Data"
  size_gb = 1
}`, `name: volume name "Eval_Data": use 1 to 40 lowercase letters, digits and hyphens`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := mocktest.New(t, mocktest.Fast())
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: acctest.ProviderFactories(t),
				Steps:                    []resource.TestStep{{Config: m.Config(tc.hcl), PlanOnly: true, ExpectError: acctest.ExpectErr(tc.want)}},
			})
			m.NoAPICalls(t)
		})
	}
}

// prime_volume's identity is its name (and team); importing by identity
// adopts it with no change planned.
func TestAccVolume_identityImport(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	noop := resource.ImportPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("prime_volume.data", plancheck.ResourceActionNoop)}}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		TerraformVersionChecks:   acctest.SkipBelow(acctest.Identity),
		Steps: []resource.TestStep{
			{
				Config: m.Config(volumeHCL(3, false)),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectIdentityValueMatchesState("prime_volume.data", tfjsonpath.New("name")),
				},
			},
			{ResourceName: "prime_volume.data", ImportState: true, ImportStateKind: resource.ImportBlockWithResourceIdentity, ImportPlanChecks: noop},
		},
	})
}

// A volume deleted outside Terraform is drift: the next apply creates it
// again (empty; the warning says so).
func TestAccVolume_deletedOutOfBandIsRecreated(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		Steps: []resource.TestStep{
			{Config: m.Config(volumeHCL(4, false))},
			{
				PreConfig: func() {
					if err := m.Client(t).DeleteVolume(mocktest.WaitCtx(t), "eval-data", ""); err != nil {
						t.Fatal(err)
					}
				},
				Config: m.Config(volumeHCL(4, false)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_volume.data", plancheck.ResourceActionCreate),
				}},
				Check: func(*terraform.State) error {
					if v := mockVolume(t, m); v.SizeGB != 4 {
						return fmt.Errorf("the platform holds %+v, want a 4 GiB volume again", v)
					}
					return nil
				},
			},
		},
	})
}
