package command_test

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
)

// A background member's result says when it finished, as a foreground
// member's does.
func TestAccFleetCommand_backgroundMembersHaveExecutedAt(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	rfc3339 := knownvalue.StringRegexp(regexpRFC3339)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config: bgFleetHCL(m, 2, "echo done", 60),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("prime_fleet_command.agent", tfjsonpath.New("results").AtMapKey("0").AtMapKey("executed_at"), rfc3339),
				statecheck.ExpectKnownValue("prime_fleet_command.agent", tfjsonpath.New("results").AtMapKey("1").AtMapKey("executed_at"), rfc3339),
			},
		}},
	})
}

var regexpRFC3339 = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)
