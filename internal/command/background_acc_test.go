package command_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

// bgFleetHCL is an in-process fleet with a background agent.
func bgFleetHCL(m *mocktest.Mock, size int, command string, timeout int) string {
	return m.Config(fmt.Sprintf(`
resource "prime_sandbox_fleet" "eval" {
  name_prefix  = "bg"
  size         = %d
  docker_image = "python:3.12-slim"
}

resource "prime_fleet_command" "agent" {
  sandbox_ids     = prime_sandbox_fleet.eval.sandbox_ids
  commands        = [%q]
  background      = true
  timeout_seconds = %d
}
`, size, command, timeout))
}

// onEvent runs fn once, in the background, when the mock records an event
// that match accepts (no sleeps: the mock's event log wakes it).
func onEvent(t *testing.T, m *mocktest.Mock, match func(primemock.Event) bool, fn func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if _, err := m.WaitForEvent(ctx, match); err == nil {
			fn()
		}
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// With gateway calls cut for 10 s mid-run, the apply succeeds and nothing
// runs twice: polls fail, the job goes on, the provider keeps waiting.
func TestAccBackground_gatewayOutageMidRun(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	const size = 5
	starts := 0
	var once sync.Once
	onEvent(t, m, func(e primemock.Event) bool {
		if e.Type == primemock.EventCommandStarted && e.Transport == primemock.TransportBackground && strings.Contains(e.Command, "outage-agent") {
			starts++
		}
		return starts == size
	}, func() {
		once.Do(func() {
			m.Configure(func(o *primemock.Options) { o.GatewayOutageUntil = time.Now().Add(10 * time.Second) })
		})
	})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config: bgFleetHCL(m, size, "echo outage-agent; sleep 2; echo finished", 300),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("prime_fleet_command.agent", "results.%", fmt.Sprint(size)),
				resource.TestCheckResourceAttr("prime_fleet_command.agent", "results.0.steps.0.stdout", "finished"),
				func(*terraform.State) error {
					if m.Stats().OutageRefusals == 0 {
						return fmt.Errorf("the outage cut no gateway call: the test did not test it")
					}
					if n := acctest.CountStarts(m.Events(), "outage-agent"); n != size {
						return fmt.Errorf("the agent started %d times for %d members", n, size)
					}
					return nil
				},
			),
		}},
	})
}

// With the batch endpoint answering 404, the same fleet completes on
// per-job reads of the exit files, and the endpoint is not asked again.
func TestAccBackground_batchUnsupportedFallsBackToReads(t *testing.T) {
	o := mocktest.Fast()
	o.JobBatchUnsupported = true
	m := mocktest.New(t, o)
	const size = 4
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config: bgFleetHCL(m, size, "echo fallback; sleep 1", 300),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("prime_fleet_command.agent", "results.%", fmt.Sprint(size)),
				func(*terraform.State) error {
					st := m.Stats().Requests
					if n := st["POST /api/v1/sandbox/background-jobs/status:batchGet"]; n != 1 {
						return fmt.Errorf("the unsupported batch endpoint was asked %d times, want once", n)
					}
					if st["GET /gateway/{user_ns}/{job_id}/read-file"] == 0 {
						return fmt.Errorf("no per-job reads: %v", st)
					}
					return nil
				},
			),
		}},
	})
}

// A background command past its timeout is stopped in the sandbox (SIGTERM
// to its process group), and the apply says so.
func TestAccBackground_timeoutStopsTheJob(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config:      m.Config(acctest.SandboxHCL("box", "files") + acctest.BackgroundCommandHCL("agent", "prime_sandbox.box.id", "echo slow-agent; sleep 1000000", "timeout_seconds = 2")),
			ExpectError: acctest.ExpectInOrder(`Command timed out`, `did not finish within timeout_seconds (2s`, `it was stopped (SIGTERM`),
		}, {
			Config: m.Config(acctest.SandboxHCL("box", "files")),
			Check: func(*terraform.State) error {
				for _, e := range m.Events() {
					if e.Type == primemock.EventCommandSignalled && strings.Contains(e.Command, "slow-agent") {
						return nil
					}
				}
				return fmt.Errorf("the timed-out job was never signalled in the sandbox")
			},
		}},
	})
}

// A sandbox the platform terminates mid-job is reported as exactly that.
func TestAccBackground_sandboxTerminatedMidJob(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	onEvent(t, m, func(e primemock.Event) bool {
		return e.Type == primemock.EventCommandStarted && e.Transport == primemock.TransportBackground && strings.Contains(e.Command, "doomed-agent")
	}, func() {
		ids := LiveSandboxIDs(m)
		for _, id := range ids {
			_ = m.Client(t).DeleteSandbox(context.Background(), id)
		}
	})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config:      m.Config(acctest.SandboxHCL("box", "files") + acctest.BackgroundCommandHCL("agent", "prime_sandbox.box.id", "echo doomed-agent; sleep 1000000", "timeout_seconds = 300")),
			ExpectError: acctest.ExpectInOrder(`Sandbox terminated mid-job`, `TERMINATED`),
		}},
	})
}

// LiveSandboxIDs lists the mock's sandboxes that were created and not
// deleted, from its event log.
func LiveSandboxIDs(m *mocktest.Mock) []string {
	live := map[string]bool{}
	for _, e := range m.Events() {
		switch e.Type {
		case primemock.EventSandboxCreated:
			live[e.SandboxID] = true
		case primemock.EventSandboxDeleted:
			delete(live, e.SandboxID)
		}
	}
	return tfkit.SortedKeys(live)
}

// The background result is the foreground one: exit codes judged the same,
// output tails recorded the same, env_wo values scrubbed from them, and a
// disallowed exit code fails with the same message.
func TestAccBackground_resultMatchesForeground(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cmd := func(name string, background bool, command string, allowed string) string {
		return fmt.Sprintf(`
resource "prime_sandbox_command" %q {
  sandbox_id         = prime_sandbox.box.id
  command            = %q
  background         = %t
  allowed_exit_codes = %s
  env_wo             = { TOKEN = "tok-secret-1234" }
}
`, name, command, background, allowed)
	}
	const script = "echo out $TOKEN; echo err >&2; exit 3"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: m.Config(acctest.SandboxHCL("box", "files") + cmd("fg", false, script, "[3]") + cmd("bg", true, script, "[3]")),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("prime_sandbox_command.bg", "exit_code", "3"),
					resource.TestCheckResourceAttr("prime_sandbox_command.bg", "stdout", "out ***\n"),
					resource.TestCheckResourceAttr("prime_sandbox_command.bg", "stderr", "err\n"),
					resource.TestCheckResourceAttrPair("prime_sandbox_command.bg", "stdout", "prime_sandbox_command.fg", "stdout"),
					resource.TestCheckResourceAttrPair("prime_sandbox_command.bg", "stderr", "prime_sandbox_command.fg", "stderr"),
					resource.TestCheckResourceAttr("prime_sandbox_command.bg", "job_status", "completed"),
					resource.TestMatchResourceAttr("prime_sandbox_command.bg", "job_id", regexpHex8),
					resource.TestCheckNoResourceAttr("prime_sandbox_command.fg", "job_id"),
				),
			},
			{
				Config:      m.Config(acctest.SandboxHCL("box", "files") + cmd("bg2", true, script, "[0]")),
				ExpectError: acctest.ExpectInOrder(`Command exited with a disallowed code`, `exited with code 3 (allowed: [0])`, `Last of stderr:`, `err`),
			},
		},
	})
}

var regexpHex8 = regexp.MustCompile(`^[0-9a-f]{8}$`)

// output_dir keeps the whole stdout and stderr of a background run on
// local disk, with env_wo values scrubbed, while state keeps the tails and
// the files' hashes.
func TestAccBackground_outputDirKeepsTheWholeOutput(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	dir := t.TempDir()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config: m.Config(acctest.SandboxHCL("box", "files") + fmt.Sprintf(`
resource "prime_sandbox_command" "agent" {
  sandbox_id = prime_sandbox.box.id
  command    = "repeat 30000 line-$TOKEN; echo to-stderr >&2"
  background = true
  output_dir = %q
  env_wo     = { TOKEN = "tok-secret-5678" }
}
`, dir)),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("prime_sandbox_command.agent", "output_truncated", "true"),
				resource.TestCheckResourceAttr("prime_sandbox_command.agent", "output_files.#", "2"),
				func(s *terraform.State) error {
					a := s.RootModule().Resources["prime_sandbox_command.agent"].Primary.Attributes
					job := a["job_id"]
					stdout, err := os.ReadFile(filepath.Join(dir, job+".stdout.log"))
					if err != nil {
						return err
					}
					if strings.Contains(string(stdout), "tok-secret-5678") {
						return fmt.Errorf("the saved stdout holds the env_wo value")
					}
					if want := strings.Repeat("line-***\n", 30000); string(stdout) != want {
						return fmt.Errorf("saved stdout is %d bytes, want the whole %d", len(stdout), len(want))
					}
					if a["output_files.0.sha256"] != acctest.SHA256Hex(stdout) {
						return fmt.Errorf("output_files.0.sha256 %s does not match the file", a["output_files.0.sha256"])
					}
					if strings.Contains(a["stdout"], "tok-secret-5678") || !strings.HasSuffix(a["stdout"], "line-***\n") {
						return fmt.Errorf("the stdout tail in state is wrong: %q…", a["stdout"][:40])
					}
					return nil
				},
			),
		}},
	})
}

// In the background every member's job runs at the same time:
// max_concurrency bounds the members starting or collecting a job, not the
// jobs (a fleet of 6 with max_concurrency = 2 has all 6 started before the
// first ends; in the foreground only 2 would be).
func TestAccBackground_allMembersRunAtOnce(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config: m.Config(acctest.SandboxFleetHCL("eval", "together", 6) + acctest.FleetBackgroundCommandHCL("agent", "prime_sandbox_fleet.eval.sandbox_ids", []string{"echo together-agent; sleep 5"}, "max_concurrency = 2")),
			Check: func(*terraform.State) error {
				started := 0
				for _, e := range m.Events() {
					if !strings.Contains(e.Command, "together-agent") || e.Transport != primemock.TransportBackground {
						continue
					}
					switch e.Type {
					case primemock.EventCommandStarted:
						started++
					case primemock.EventCommandExecuted:
						if started < 6 {
							return fmt.Errorf("only %d of 6 jobs had started when the first ended", started)
						}
						return nil
					}
				}
				return fmt.Errorf("no job ended (started %d)", started)
			},
		}},
	})
}
