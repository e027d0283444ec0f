package sandbox_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
)

// keyedProvider configures the provider against the mock with an API key
// of its own.
func keyedProvider(m *mocktest.Mock, key, hcl string) string {
	return fmt.Sprintf(`
provider "prime" {
  base_url = %q
  api_key  = %q
}
`, m.URL, key) + hcl
}

const foreignSandboxHCL = `
resource "prime_sandbox" "vm" {
  name         = "owned"
  docker_image = "python:3.12-slim"
}
`

const foreignFleetHCL = `
resource "prime_sandbox_fleet" "f" {
  name_prefix  = "owned"
  docker_image = "python:3.12-slim"
  size         = 2
}
`

// ownersMock accepts any API key, so that a state can be read with another.
func ownersMock(t *testing.T) *mocktest.Mock {
	o := mocktest.Fast()
	o.APIKey = ""
	return mocktest.New(t, o)
}

// A sandbox in state that the configured API key does not own is not gone:
// the refresh fails with an error naming the key and team, the state keeps
// it, and with the right key again nothing changes. (A sandbox that is
// gone is dropped and re-created: TestAccSandbox_lifetimeEndIsRecreated.)
func TestAccSandbox_foreignIDIsAnError(t *testing.T) {
	m := ownersMock(t)
	var id string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: keyedProvider(m, "test-key", foreignSandboxHCL),
				Check: func(s *terraform.State) (err error) {
					id, err = acctest.StateID(s, "prime_sandbox.vm")
					return err
				},
			},
			{
				Config:      keyedProvider(m, "other-key", foreignSandboxHCL),
				ExpectError: acctest.ExpectErr("belongs to another account or team"),
			},
			{
				// Destroy as the other key would fail the same way; with
				// the owner's key the state is as it was.
				Config: keyedProvider(m, "test-key", foreignSandboxHCL),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
				Check: func(s *terraform.State) error {
					if got, _ := acctest.StateID(s, "prime_sandbox.vm"); got != id {
						return fmt.Errorf("sandbox %s became %s", id, got)
					}
					if live := m.Stats().LiveSandboxes; live != 1 {
						return fmt.Errorf("%d live sandboxes, want the one", live)
					}
					return nil
				},
			},
		},
	})
}

// A fleet whose members the API key does not own: the refresh fails with
// the members named (FORBIDDEN in the status batch), and neither drops nor
// re-creates them.
func TestAccSandboxFleet_foreignMembersAreAnError(t *testing.T) {
	m := ownersMock(t)
	var first map[string]string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: keyedProvider(m, "test-key", foreignFleetHCL),
				Check:  func(s *terraform.State) error { first = fleetIDs(s); return nil },
			},
			{
				Config:      keyedProvider(m, "other-key", foreignFleetHCL),
				ExpectError: acctest.ExpectErr("Fleet members belong to another account or team"),
			},
			{
				Config: keyedProvider(m, "test-key", foreignFleetHCL),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
				Check: func(s *terraform.State) error {
					if ids := fleetIDs(s); fmt.Sprint(ids) != fmt.Sprint(first) {
						return fmt.Errorf("members %v became %v", first, ids)
					}
					if n := m.Stats().SandboxesCreated; n != 2 {
						return fmt.Errorf("%d sandboxes created, want the fleet's 2", n)
					}
					return nil
				},
			},
		},
	})
}

// A team the API key does not belong to: the create is refused with the
// platform's reason, and nothing is created.
func TestAccSandbox_foreignTeamIsRefused(t *testing.T) {
	o := mocktest.Fast()
	o.TeamMembers = map[string][]string{"team-a": {"someone-else"}}
	m := mocktest.New(t, o)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
provider "prime" {
  base_url = %q
  api_key  = "test-key"
  team_id  = "team-a"
}
`, m.URL) + foreignSandboxHCL,
			ExpectError: acctest.ExpectErr("You are not a member of team team-a"),
		}},
	})
	if n := m.Stats().SandboxesCreated; n != 0 {
		t.Fatalf("%d sandboxes created in a team the key does not belong to", n)
	}
}
