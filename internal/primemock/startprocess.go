package primemock

// A VM's start process. The platform runs a create's start_command (an
// executable and its arguments, without a shell) once the sandbox runs, and
// "when the process exits, the sandbox stops"; without one the sandbox
// stays up. The mock runs the argv in its shell, each element quoted, so
// ["/bin/sh", "-c", "sleep infinity"] is the shell's own sh -c. [I: start-process-shell] The
// stop: status TERMINATED, exitCode the process's exit code,
// terminationReason START_COMMAND_EXITED and an errorMessage naming the
// exit (the contract says the sandbox stops, not in which status or with
// which fields). [I: start-process-pause] A pause stops the process with the sandbox's
// others, and a resume starts it again (the mock keeps no process across a
// pause).

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock/shell"
)

// TransportStart labels the events of a sandbox's start process.
const TransportStart = "start"

// startReasonExited is the terminationReason of a sandbox whose start
// process exited. [I: start-process-exit]
const startReasonExited = "START_COMMAND_EXITED"

// startProcessLocked starts a RUNNING sandbox's start process, if its
// create had one; the caller holds s.mu.
func (s *Server) startProcessLocked(sb *sandbox) {
	sc := sb.req.StartCommand
	if sc == nil || sc.Argv == nil || s.closed {
		return
	}
	x := &execution{transport: TransportStart, script: argvScript(*sc.Argv)}
	s.launchLocked(context.Background(), sb, x, nil, "")
	go func() {
		<-x.done
		s.startProcessExited(sb, x)
	}()
}

// startProcessExited stops the sandbox when its start process ended on its
// own: not when the sandbox stopping (a delete, a pause, a timeout) ended it.
func (s *Server) startProcessExited(sb *sandbox, x *execution) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.sandboxes[sb.id] != sb || sb.status != prime.StatusRunning || errors.Is(x.err, shell.ErrVanished) {
		return
	}
	code := x.out.Exit
	if x.err != nil {
		code = 1
	}
	sb.stopTimers()
	now := s.now()
	sb.status = prime.StatusTerminated
	sb.updatedAt = now
	sb.terminated = &now
	sb.exitCode = &code
	sb.terminationReason = strPtr(startReasonExited)
	sb.errorMsg = strPtr(fmt.Sprintf("The start command exited with code %d, which stops the sandbox", code))
	sb.gatewayReady = false
	stopExecutionsLocked(sb)
	sb.m.FS().Release()
	s.sandboxEnded(sb)
	s.emit(Event{Type: EventSandboxStopped, SandboxID: sb.id, Status: sb.status, ExitCode: code})
	s.logf(sb, "the start command exited with code %d; the sandbox stopped", code)
}

// argvScript is a start command as a script for the mock's shell: every
// element single-quoted, so nothing is expanded (there is no shell).
func argvScript(argv prime.StartArgv) string {
	words := make([]string, 0, 1+len(argv.Args))
	for _, w := range append([]string{argv.Executable}, argv.Args...) {
		words = append(words, "'"+strings.ReplaceAll(w, "'", `'"'"'`)+"'")
	}
	return strings.Join(words, " ")
}
