package tfcli

import (
	"fmt"
	"strings"
	"time"
)

// Result is one finished Terraform command.
type Result struct {
	Args     []string
	Start    time.Time
	Duration time.Duration
	// ExitCode is -1 when the command did not start or was killed.
	ExitCode int
	// Output is standard output and standard error, in the order written.
	Output string
	// Err is set when the command could not be started or waited for, or
	// was killed because its context ended; a non-zero exit is not an
	// error (see ExitCode).
	Err error
	// CPU is the user+system time of terraform and of the children it
	// waited for (its provider processes), from wait4(2).
	CPU time.Duration
}

// OK reports exit status 0.
func (r Result) OK() bool { return r.Err == nil && r.ExitCode == 0 }

// Check is nil when the command exited 0, else what went wrong: "exit
// status N", or why it did not run to its end.
func (r Result) Check() error {
	switch {
	case r.Err != nil:
		return r.Err
	case r.ExitCode != 0:
		return fmt.Errorf("exit status %d", r.ExitCode)
	}
	return nil
}

// Tail is the end of the output, for error messages.
func (r Result) Tail(n int) string {
	if len(r.Output) <= n {
		return r.Output
	}
	return "…" + r.Output[len(r.Output)-n:]
}

// Describe is "terraform ARGS: exit N after D".
func (r Result) Describe() string {
	s := fmt.Sprintf("terraform %s: exit %d after %s", strings.Join(r.Args, " "), r.ExitCode, r.Duration.Round(time.Millisecond))
	if r.Err != nil {
		s += " (" + r.Err.Error() + ")"
	}
	return s
}
