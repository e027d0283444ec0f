package command_test

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// Mock routes of commands: the gateway's command-session protocol, and the
// containers' REST exec, which no sandbox has any more.
const (
	connectStartRoute = "POST /gateway/{user_ns}/{job_id}/command_session.CommandSession/Start"
	restExecRoute     = "POST /gateway/{user_ns}/{job_id}/exec"
)

// Commands go over the command-session protocol and never touch REST
// /exec (the containers' transport, retired with them). env and
// working_dir reach the command, relative and absolute.
func TestAccSandboxCommand_transport(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config: m.Config(acctest.SandboxHCL("box", "box") + `resource "prime_sandbox_command" "absolute" {
  sandbox_id  = prime_sandbox.box.id
  command     = "echo $GREETING from absolute; pwd"
  env         = { GREETING = "hello" }
  working_dir = "/srv/task"
}
resource "prime_sandbox_command" "relative" {
  sandbox_id  = prime_sandbox.box.id
  command     = "echo $GREETING from relative; pwd"
  env         = { GREETING = "hi" }
  working_dir = "task"
}
`),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("prime_sandbox_command.absolute", tfjsonpath.New("stdout"), knownvalue.StringExact("hello from absolute\n/srv/task\n")),
				statecheck.ExpectKnownValue("prime_sandbox_command.relative", tfjsonpath.New("stdout"), knownvalue.StringExact("hi from relative\n/root/task\n")),
			},
			Check: func(s *terraform.State) error {
				box, err := acctest.StateID(s, "prime_sandbox.box")
				if err != nil {
					return err
				}
				n := 0
				for _, e := range m.Events() {
					if e.Type != primemock.EventCommandExecuted {
						continue
					}
					if e.Transport != "connect" {
						return fmt.Errorf("command %q on sandbox %s went over %q, want connect", e.Command, e.SandboxID, e.Transport)
					}
					if e.SandboxID == box {
						n++
					}
				}
				// The create's gateway probe and the two commands.
				if n != 3 {
					return fmt.Errorf("%d commands ran on the sandbox, want 3 (the create's probe and two commands)", n)
				}
				st := m.Stats()
				if st.Requests[connectStartRoute] < 3 || st.Requests[restExecRoute] != 0 {
					return fmt.Errorf("transport counters: Start %d, exec %d", st.Requests[connectStartRoute], st.Requests[restExecRoute])
				}
				return nil
			},
		}},
	})
}

// A command that outlives timeout_seconds fails the apply as a timeout, and
// on a VM the provider stops it (SIGTERM) instead of leaving it running
// while egress gets locked.
func TestAccSandboxCommand_timeoutStopsTheCommand(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config:      m.Config(commandSandbox + acctest.CommandHCL("slow", "prime_sandbox.box.id", "echo starting; sleep 30; echo never", `timeout_seconds = 1`)),
			ExpectError: acctest.ExpectErr("timed out"),
		}},
	})
	var started, signalled bool
	for _, e := range m.Events() {
		if !strings.HasPrefix(e.Command, "echo starting") && e.Type != primemock.EventCommandSignalled {
			continue
		}
		switch e.Type {
		case primemock.EventCommandStarted:
			started = true
		case primemock.EventCommandSignalled:
			signalled = started && e.Signal != ""
		case primemock.EventCommandExecuted:
			if e.ExitCode == 0 && !e.Signalled {
				t.Fatalf("the timed-out command finished normally: %+v", e)
			}
		}
	}
	if !started || !signalled {
		t.Fatalf("started %t, signalled %t: a timed-out VM command must be stopped", started, signalled)
	}
}

// The platform's RUNNING can lead the gateway's registration: with the
// gateway lagging RUNNING by 3 s, a sandbox and a command on it apply the
// first time, because the create waits until the gateway answers.
func TestAccSandboxCommand_gatewayLagsRunning(t *testing.T) {
	o := mocktest.Fast()
	o.GatewayLag = 3 * time.Second
	m := mocktest.New(t, o)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config: m.Config(acctest.SandboxHCL("vm", "lagging") + `resource "prime_sandbox_command" "first" {
  sandbox_id = prime_sandbox.vm.id
  command    = "echo first"
}
`),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("prime_sandbox_command.first", tfjsonpath.New("stdout"), knownvalue.StringExact("first\n")),
			},
			Check: func(*terraform.State) error {
				ready, first := int64(-1), int64(-1)
				for _, e := range m.Events() {
					switch {
					case e.Type == primemock.EventGatewayReady:
						ready = e.Seq
					case e.Type == primemock.EventCommandExecuted && e.Command == "echo first":
						first = e.Seq
					}
				}
				if ready < 0 || first < ready {
					return fmt.Errorf("gateway ready at %d, first command at %d: the command must follow readiness", ready, first)
				}
				return nil
			},
		}},
	})
}

// A foreground command whose stream is cut after it started fails the
// apply as one that may still be running (the process it started keeps
// going), and is not run again by the provider. The summary names that
// outcome, not the retired containers' edge proxy.
func TestAccSandboxCommand_cutStreamMayStillRun(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	var once sync.Once
	onEvent(t, m, func(e primemock.Event) bool {
		return e.Type == primemock.EventCommandStarted && strings.Contains(e.Command, "cut-stream-step")
	}, func() {
		once.Do(func() {
			m.Configure(func(o *primemock.Options) { o.GatewayOutageUntil = time.Now().Add(5 * time.Second) })
		})
	})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config:      m.Config(commandSandbox + acctest.CommandHCL("step", "prime_sandbox.box.id", "echo cut-stream-step; sleep 3")),
			ExpectError: regexp.MustCompile(`(?s)Command may still be running.*keeps\s+running:\s+the\s+command\s+may\s+still\s+be\s+running`),
		}},
	})
	starts := 0
	for _, e := range m.Events() {
		if e.Type == primemock.EventCommandStarted && strings.Contains(e.Command, "cut-stream-step") {
			starts++
		}
	}
	if starts != 1 {
		t.Fatalf("the step started %d times, want once", starts)
	}
}
