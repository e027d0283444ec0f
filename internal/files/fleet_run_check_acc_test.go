package files_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
)

// keptResultHCL is an agent that clears /results every run but, when
// WRITE is "yes", also writes /keep/old.json, outside its result paths —
// a result no clear removes. Every reader is given the runs it expects:
// the fleet and single data sources, the fleet artifact, and a data source
// that expects member 1's run in member 0's sandbox.
func keptResultHCL(m *mocktest.Mock, write string, allowMissing bool, outDir string) string {
	return m.Config(acctest.SandboxFleetHCL("eval", "kept", 2) + fmt.Sprintf(`
resource "prime_fleet_command" "agent" {
  sandbox_ids  = prime_sandbox_fleet.eval.sandbox_ids
  commands     = ["test \"$WRITE\" = yes && mkdir -p /keep && echo old > /keep/old.json; mkdir -p /results && echo '{\"reward\": 1}' > /results/reward.json"]
  env          = { WRITE = %q }
  result_paths = ["/results"]
}

locals {
  runs = { for k, r in prime_fleet_command.agent.results : k => r.run_id }
  ids  = { for k, r in prime_fleet_command.agent.results : k => r.sandbox_id }
}

data "prime_fleet_file" "kept" {
  sandbox_ids   = local.ids
  path          = "/keep/old.json"
  run_ids       = local.runs
  allow_missing = %t
}

data "prime_sandbox_file" "kept" {
  sandbox_id    = local.ids["0"]
  path          = "/keep/old.json"
  run_id        = local.runs["0"]
  allow_missing = %[2]t
}

data "prime_fleet_file" "foreign" {
  sandbox_ids   = { "0" = local.ids["0"] }
  path          = "/results/reward.json"
  run_ids       = { "0" = local.runs["1"] }
  allow_missing = true
}

resource "prime_fleet_artifact" "kept" {
  sandbox_ids   = local.ids
  remote_path   = "/keep"
  kind          = "directory"
  local_path    = "%[3]s/{key}"
  allow_missing = true
  run_ids       = local.runs
}
`, write, allowMissing, outDir))
}

// A reader given a run never returns another run's result as that run's:
// a file older than the run's start (written by an earlier run, outside
// the result paths it cleared) reads as missing and stale, the artifact
// does not download it and removes the earlier run's download from disk;
// a run that never started in the sandbox reads as stale; without
// allow_missing an earlier run's file is an error that says so; a run ID
// that is not one is refused at plan time.
func TestAccFleetFile_runIDsNeverReadAnEarlierRun(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	out := t.TempDir()
	file := func(k, attr string) tfjsonpath.Path { return tfjsonpath.New("files").AtMapKey(k).AtMapKey(attr) }
	member := func(k, attr string) tfjsonpath.Path { return tfjsonpath.New("members").AtMapKey(k).AtMapKey(attr) }
	stale := func(isStale bool) []statecheck.StateCheck {
		return []statecheck.StateCheck{
			statecheck.ExpectKnownValue("data.prime_fleet_file.kept", file("1", "exists"), knownvalue.Bool(!isStale)),
			statecheck.ExpectKnownValue("data.prime_fleet_file.kept", file("1", "stale"), knownvalue.Bool(isStale)),
			statecheck.ExpectKnownValue("data.prime_sandbox_file.kept", tfjsonpath.New("stale"), knownvalue.Bool(isStale)),
			statecheck.ExpectKnownValue("data.prime_sandbox_file.kept", tfjsonpath.New("exists"), knownvalue.Bool(!isStale)),
			statecheck.ExpectKnownValue("prime_fleet_artifact.kept", member("0", "exists"), knownvalue.Bool(!isStale)),
			// The other member's run, in member 0's sandbox: never its.
			statecheck.ExpectKnownValue("data.prime_fleet_file.foreign", file("0", "stale"), knownvalue.Bool(true)),
			statecheck.ExpectKnownValue("data.prime_fleet_file.foreign", file("0", "exists"), knownvalue.Bool(false)),
			statecheck.ExpectKnownValue("data.prime_fleet_file.foreign", file("0", "run_id"), knownvalue.Null()),
		}
	}
	onDisk := func(want bool) resource.TestCheckFunc {
		return func(*terraform.State) error {
			_, err := os.Stat(filepath.Join(out, "0", "old.json"))
			if got := err == nil; got != want {
				return fmt.Errorf("member 0's download of /keep on disk: %t, want %t (%w)", got, want, err)
			}
			return nil
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: keptResultHCL(m, "yes", true, out),
				ConfigStateChecks: append(stale(false),
					statecheck.CompareValuePairs("data.prime_fleet_file.kept", file("1", "run_id"),
						"prime_fleet_command.agent", tfjsonpath.New("results").AtMapKey("1").AtMapKey("run_id"), compare.ValuesSame()),
					statecheck.CompareValuePairs("prime_fleet_artifact.kept", member("0", "run_id"),
						"prime_fleet_command.agent", tfjsonpath.New("results").AtMapKey("0").AtMapKey("run_id"), compare.ValuesSame())),
				Check: onDisk(true),
			},
			{
				// New runs that write nothing outside /results: the file
				// there is the earlier run's.
				Config: keptResultHCL(m, "no", true, out),
				ConfigStateChecks: append(stale(true),
					statecheck.ExpectKnownValue("prime_fleet_artifact.kept", member("0", "run_id"), knownvalue.Null())),
				Check: onDisk(false),
			},
			{
				Config:      keptResultHCL(m, "no", false, out),
				ExpectError: regexp.MustCompile(`(?s)/keep/old\.json\s+in\s+sandbox\s+\S+\s+is\s+older\s+than\s+run\s+[0-9a-f]{16}'s\s+start`),
			},
		},
	})
}

// A run ID names a file in the sandbox: anything but what a command
// records is refused at plan time, before any API call, by every reader.
func TestAccFleetFile_runIDsValidatedAtPlan(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	for _, c := range []struct{ block, want string }{
		{`data "prime_fleet_file" "x" {
  sandbox_ids = { "0" = "sb-1" }
  path        = "/results/reward.json"
  run_ids     = { "0" = "../../etc" }
}`, `"../../etc" is not a run ID`},
		{`data "prime_sandbox_file" "x" {
  sandbox_id = "sb-1"
  path       = "/results/reward.json"
  run_id     = "ABC"
}`, `"ABC" is not a run ID`},
		{`resource "prime_fleet_artifact" "x" {
  sandbox_ids = { "0" = "sb-1" }
  remote_path = "/results"
  local_path  = "out/{key}"
  run_ids     = { "0" = "x y" }
}`, `"x y" is not a run ID`},
		{`resource "prime_sandbox_artifact" "x" {
  sandbox_id  = "sb-1"
  remote_path = "/results"
  local_path  = "out"
  run_id      = ""
}`, `"" is not a run ID`},
	} {
		resource.UnitTest(t, resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProviderFactories(t),
			Steps: []resource.TestStep{{
				Config:      m.Config("\n" + c.block + "\n"),
				PlanOnly:    true,
				ExpectError: acctest.ExpectErr(c.want),
			}},
		})
	}
	if n := m.APIRequests(); n != 0 {
		t.Errorf("%d API requests; a refused run ID must be refused before any", n)
	}
}
