package files_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// fleetTaskHCL is a 20-member evaluation: each member gets its own task
// file and its key in the environment, the agent runs as a background job
// and writes a result per member, the results come back through the fleet
// data source and to disk.
func fleetTaskHCL(m *mocktest.Mock, size int, taskFor func(i int) string, outDir string) string {
	var tasks strings.Builder
	for i := range size {
		fmt.Fprintf(&tasks, "    %q = %q\n", fmt.Sprint(i), taskFor(i))
	}
	return m.Config(fmt.Sprintf(`
locals {
  tasks = {
%s  }
}

resource "prime_sandbox_fleet" "eval" {
  name_prefix  = "tasks"
  size         = %d
  docker_image = "python:3.12-slim"
}

resource "prime_fleet_file" "task" {
  sandbox_ids = prime_sandbox_fleet.eval.sandbox_ids
  path        = "/task/input.txt"
  members     = { for k, t in local.tasks : k => { content = t } }
}

resource "prime_fleet_command" "agent" {
  sandbox_ids = prime_fleet_file.task.sandbox_ids
  commands    = ["cat /task/input.txt > /task/result.txt && echo \" by $PRIME_MEMBER_KEY with $MODE\" >> /task/result.txt"]
  member_env  = { for k, t in local.tasks : k => { MODE = "mode-${k}" } }
  background  = true

  member_triggers = { for k, f in prime_fleet_file.task.files : k => f.sha256 }
}

data "prime_fleet_file" "result" {
  sandbox_ids = { for k, r in prime_fleet_command.agent.results : k => r.sandbox_id }
  path        = "/task/result.txt"
}

resource "prime_fleet_artifact" "result" {
  sandbox_ids     = { for k, r in prime_fleet_command.agent.results : k => r.sandbox_id }
  remote_path     = "/task/result.txt"
  local_path      = "%s/{key}/result.txt"
  member_triggers = { for k, r in prime_fleet_command.agent.results : k => r.run_id }
}

output "results" {
  value = { for k, f in data.prime_fleet_file.result.files : k => f.content }
}
`, tasks.String(), size, outDir))
}

func TestAccFleetFile_distinctTasksAndResults(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	out := t.TempDir()
	const size = 20
	task := func(i int) string { return fmt.Sprintf("task-%02d", i) }
	want := func(i int) string { return fmt.Sprintf("task-%02d by %d with mode-%d\n", i, i, i) }
	changed := func(i int) string {
		if i == 3 {
			return "task-03-v2"
		}
		return task(i)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: fleetTaskHCL(m, size, task, out),
				Check: func(s *terraform.State) error {
					outputs := s.RootModule().Outputs["results"]
					if outputs == nil {
						return fmt.Errorf("no results output")
					}
					got, _ := outputs.Value.(map[string]any)
					if len(got) != size {
						return fmt.Errorf("%d results, want %d: %v", len(got), size, got)
					}
					seen := map[string]bool{}
					for i := range size {
						v, _ := got[fmt.Sprint(i)].(string)
						if v != want(i) {
							return fmt.Errorf("member %d: result %q, want %q", i, v, want(i))
						}
						seen[v] = true
						disk, err := os.ReadFile(filepath.Join(out, fmt.Sprint(i), "result.txt"))
						if err != nil || string(disk) != want(i) {
							return fmt.Errorf("member %d on disk: %q (%w)", i, disk, err)
						}
					}
					if len(seen) != size {
						return fmt.Errorf("results are not distinct: %v", got)
					}
					if n := acctest.CountStarts(m.Events(), "cat /task/input.txt"); n != size {
						for _, e := range m.Events() {
							if e.Type == primemock.EventCommandStarted {
								t.Logf("%s %q", e.Transport, e.Command)
							}
						}
						return fmt.Errorf("the agent started %d times, want %d", n, size)
					}
					return nil
				},
			},
			{
				Config:   fleetTaskHCL(m, size, task, out),
				PlanOnly: true,
			},
			{
				// One member's task changes: only that member uploads, runs
				// and downloads again.
				Config: fleetTaskHCL(m, size, changed, out),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_fleet_file.task", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("prime_sandbox_fleet.eval", plancheck.ResourceActionNoop),
				}},
				Check: func(s *terraform.State) error {
					if n := acctest.CountStarts(m.Events(), "cat /task/input.txt"); n != size+1 {
						return fmt.Errorf("the agent started %d times in all, want %d (one member again)", n, size+1)
					}
					disk, err := os.ReadFile(filepath.Join(out, "3", "result.txt"))
					if err != nil || string(disk) != "task-03-v2 by 3 with mode-3\n" {
						return fmt.Errorf("member 3 on disk after its change: %q (%w)", disk, err)
					}
					return nil
				},
			},
			{
				Config:   fleetTaskHCL(m, size, changed, out),
				PlanOnly: true,
			},
		},
	})
}

// Every member whose own source is invalid or unreadable is named in one
// error, at plan time and before any API call: a fleet of tasks with three
// missing directories says so once, naming all three, not one at a time.
func TestAccFleetFile_memberSourceErrorsNamedTogether(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	dir := t.TempDir()
	present := filepath.Join(dir, "present")
	if err := os.MkdirAll(present, 0o755); err != nil {
		t.Fatal(err)
	}
	config := func(members string) string {
		return m.Config(`
resource "prime_fleet_file" "task" {
  sandbox_ids = { a = "sbx-a", b = "sbx-b", c = "sbx-c", d = "sbx-d" }
  path        = "/task"
  members = {
` + members + `
  }
}`)
	}
	missing := func(k string) string { return filepath.Join(dir, "missing-"+k) }
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		Steps: []resource.TestStep{
			{
				Config: config(fmt.Sprintf(`    a = { source_dir = %q }
    b = { source_dir = %q }
    c = { source_dir = %q }
    d = { source_dir = %q }`, missing("a"), present, missing("c"), missing("d"))),
				PlanOnly: true,
				ExpectError: acctest.ExpectInOrder(`The sources of 3 members are invalid:`,
					fmt.Sprintf(`Member "a": source_dir: local directory %q: does not exist`, missing("a")),
					fmt.Sprintf(`Member "c": source_dir: local directory %q: does not exist`, missing("c")),
					fmt.Sprintf(`Member "d": source_dir: local directory %q: does not exist`, missing("d"))),
			},
			{
				Config: config(`    a = { content = "x", content_base64 = "eA==" }
    b = { content = "y" }
    c = { content = "z", source = "z.txt" }
    d = { content = "w" }`),
				PlanOnly: true,
				ExpectError: acctest.ExpectInOrder(`The sources of 2 members are invalid:`,
					`Member "a": content and content_base64 are all set`, `Member "c": content and source are all set`),
			},
		},
	})
	m.NoAPICalls(t)
}
