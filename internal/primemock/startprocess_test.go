package primemock_test

import (
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// TestStartProcessExitStopsTheVM: a VM's start command runs as a process of
// its own once the VM runs; when it exits, the sandbox stops (TERMINATED
// with the exit code, [guess]); one that keeps running keeps the VM up, and
// a VM without one stays up.
func TestStartProcessExitStopsTheVM(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: 10 * time.Millisecond, GatewayLag: -1, SleepScale: 0.01})
	argv := func(args ...string) map[string]any {
		return map[string]any{"start_command": map[string]any{"executable": args[0], "args": args[1:]}}
	}

	exits := h.create(argv("/bin/sh", "-c", "echo starting; sleep 1; exit 3"))
	started := h.waitFor("the start process", func(e primemock.Event) bool {
		return e.Type == primemock.EventCommandStarted && e.SandboxID == exits && e.Transport == primemock.TransportStart
	})
	if started.Command != `'/bin/sh' '-c' 'echo starting; sleep 1; exit 3'` {
		t.Errorf("the start process runs %q", started.Command)
	}
	stopped := h.waitEvent(primemock.EventSandboxStopped, exits)
	if stopped.ExitCode != 3 || stopped.Status != "TERMINATED" {
		t.Errorf("stopped %+v", stopped)
	}
	sb := h.req("GET", "/api/v1/sandbox/"+exits, nil).must(t, 200).body
	if sb["status"] != "TERMINATED" || sb["exitCode"] != 3.0 || sb["terminationReason"] != "START_COMMAND_EXITED" ||
		sb["terminatedAt"] == nil || sb["errorMessage"] == nil {
		t.Errorf("after the start process exited: %v", sb)
	}
	ec := h.req("GET", "/api/v1/sandbox/"+exits+"/error-context", nil).must(t, 200).body
	if ec["status"] != "TERMINATED" || ec["errorMessage"] == nil {
		t.Errorf("error context %v", ec)
	}

	// An unknown program exits 127 (command not found): the VM stops too.
	missing := h.create(argv("python", "-m", "http.server"))
	if e := h.waitEvent(primemock.EventSandboxStopped, missing); e.ExitCode != 127 {
		t.Errorf("a start command the mock cannot run: %+v", e)
	}

	// sleep infinity keeps it up; so does no start command. A delete
	// ends the process without a stop of its own.
	// A command named by its path in a system bin directory (as on a real
	// image) is the mock's own.
	pathSleep := h.ready(argv("/bin/sleep", "infinity"))
	up := h.ready(argv("/bin/sh", "-c", "echo up > /tmp/up; sleep infinity"))
	bare := h.ready(map[string]any{})
	h.waitFile(up, "/tmp/up") // the start process is in its sleep
	for _, id := range []string{pathSleep, up, bare} {
		if st := h.req("GET", "/api/v1/sandbox/"+id, nil).must(t, 200).body["status"]; st != "RUNNING" {
			t.Errorf("%s: %v, want RUNNING", id, st)
		}
	}
	h.req("DELETE", "/api/v1/sandbox/"+up, nil).must(t, 200)
	h.waitFor("the start process's end", func(e primemock.Event) bool {
		return e.Type == primemock.EventCommandExecuted && e.SandboxID == up && e.Transport == primemock.TransportStart
	})
	for _, e := range h.srv.Events() {
		if e.Type == primemock.EventSandboxStopped && (e.SandboxID == up || e.SandboxID == bare || e.SandboxID == pathSleep) {
			t.Errorf("stopped by its start process: %+v", e)
		}
	}
	if st := h.req("GET", "/api/v1/sandbox/"+up, nil).must(t, 200).body; st["status"] != "TERMINATED" || st["exitCode"] != nil {
		t.Errorf("deleted: %v", st)
	}
}
