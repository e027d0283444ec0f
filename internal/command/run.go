package command

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/primeintellect/terraform-provider-prime/internal/egress"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// MaxOutput is how much of stdout and of stderr is kept in state:
// the last 64 KiB, where a failing command usually explains itself.
const MaxOutput = 64 << 10

// defaultCommandTimeout is the command timeout when timeout_seconds is unset
// (the SDK's default).
const defaultCommandTimeout = 300

// commandSpec is one command to run in one sandbox: what prime_sandbox_command
// and each member of prime_fleet_command run.
type commandSpec struct {
	SandboxID  string
	Command    string
	WorkingDir string
	Env        map[string]string
	EnvWO      map[string]string // write-only: scrubbed from logs and errors
	// Secrets are the values of the sandbox's own secrets
	// (learnSandboxSecrets), scrubbed like EnvWO's; learned holds them
	// once read, shared by the steps of a fleet member.
	Secrets           []string
	learned           *learnedSecrets
	Timeout           time.Duration
	Allowed           []int64
	RequireOpenEgress bool
	SensitiveOutput   bool
	// Background runs the command as a job in the sandbox (runBackground)
	// instead of over one held gateway call.
	Background bool
	// ResultPaths are removed right before the command, in the same
	// invocation (commandLine); a fleet member's first step only.
	ResultPaths []string
	// RunStamp, with ResultPaths, is the run's ID: its stamp
	// (prime.RunStampPath) is left right after the removal, before the
	// command, so readers can tell this run's results from earlier ones.
	RunStamp string
	// OnOutput, when set, receives the output while the command runs (the
	// exec actions stream it as progress), through an outputSink: whole
	// lines, write-only values scrubbed (by the client), nothing with
	// SensitiveOutput.
	OnOutput func(stderr bool, chunk []byte)
	// AfterFailure says what a failure leaves behind and what the next
	// apply does, at the end of failure messages: commandNotStored for
	// prime_sandbox_command's create, actionRecordsNothing for an action's
	// run. Empty for a fleet member: the fleet's one error says it once.
	AfterFailure string
}

// What a failure leaves behind (commandSpec.AfterFailure).
const (
	commandNotStored     = "Nothing was stored: the next apply runs the command again."
	actionRecordsNothing = "An action records nothing: invoke it again to run the command again."
	jobFailureRecorded   = "The job's result is recorded with job_status = \"failed\": the next apply runs the command " +
		"again (the resource is replaced)."
)

// commandResult is a finished command, output cut to its tails.
type commandResult struct {
	ExitCode   int
	Stdout     string
	Stderr     string
	Truncated  bool
	ExecutedAt time.Time
}

// commandError is a run that did not produce an allowed result. Summary is a
// diagnostic title; the error text explains.
type commandError struct {
	Summary string
	Err     error
}

func (e *commandError) Error() string { return e.Err.Error() }

// commandLine is what runs in the sandbox: the command, after the removal
// of its result paths.
func (spec commandSpec) commandLine() string {
	return prime.StampedRunCommand(spec.ResultPaths, spec.RunStamp, spec.Command)
}
func (e *commandError) Unwrap() error { return e.Err }

// commandErrorSummary is the diagnostic title of a runCommand error, as the
// command resources title it.
func commandErrorSummary(err error) string {
	var ce *commandError
	if errors.As(err, &ce) {
		return ce.Summary
	}
	return "Command failed"
}

// runCommand checks the egress gate, runs the command once (never retried
// once it may have reached the sandbox) and judges its exit code. The
// result is returned even with a disallowed exit code, together with the
// error.
func runCommand(ctx context.Context, c *prime.Client, spec commandSpec) (*commandResult, error) {
	if spec.RequireOpenEgress {
		if _, err := checkEgressOpen(ctx, c, spec.SandboxID); err != nil {
			return nil, &commandError{Summary: "Egress is restricted", Err: err}
		}
	}
	if err := spec.learnSandboxSecrets(ctx, c); err != nil {
		return nil, err // nothing ran
	}
	sink := newOutputSink(spec)
	res, err := c.Exec(ctx, spec.SandboxID, prime.ExecRequest{
		Command: spec.commandLine(), WorkingDir: spec.WorkingDir, Env: spec.Env, SensitiveEnv: spec.EnvWO, Secrets: spec.Secrets,
		Timeout: spec.Timeout, SensitiveOutput: spec.SensitiveOutput, OnOutput: sink.onOutput(),
	})
	sink.finish()
	if err != nil {
		summary := "Command failed to run"
		switch {
		case errors.Is(err, prime.ErrExecTimeout):
			summary = "Command timed out"
		case errors.Is(err, prime.ErrCommandMayStillRun):
			summary = "Command may still be running"
		}
		return nil, &commandError{Summary: summary, Err: fmt.Errorf("sandbox %s: %w", spec.SandboxID, err)}
	}
	return judgeResult(spec, res, false, time.Now().UTC())
}

// judgeResult turns a finished command's output into the recorded result
// and judges its exit code: one rule for foreground commands and
// background jobs. The result is returned with a disallowed exit code too,
// together with the error.
// cut reports output already cut before it got here (a job's tails).
func judgeResult(spec commandSpec, res *prime.ExecResult, cut bool, executedAt time.Time) (*commandResult, error) {
	// A command that prints a write-only value or a sandbox secret must not
	// carry it into state or an error: the logs scrub it, and so do the
	// results.
	if secrets := spec.secretValues(); len(secrets) > 0 {
		res.Stdout, res.Stderr = prime.ScrubText(res.Stdout, secrets), prime.ScrubText(res.Stderr, secrets)
	}
	out := &commandResult{ExitCode: res.ExitCode, ExecutedAt: executedAt}
	var cutOut, cutErr bool
	out.Stdout, cutOut = tail(res.Stdout, MaxOutput)
	out.Stderr, cutErr = tail(res.Stderr, MaxOutput)
	out.Truncated = cutOut || cutErr || cut
	if !slices.Contains(spec.Allowed, int64(res.ExitCode)) {
		return out, &commandError{Summary: "Command exited with a disallowed code",
			Err: errors.New(commandFailure(spec, res))}
	}
	return out, nil
}

// commandFailure is the error for a disallowed exit code: the code and the
// end of the output, stderr first, where failures explain themselves (unless
// the output is sensitive).
func commandFailure(spec commandSpec, res *prime.ExecResult) string {
	id, allowed, sensitive := spec.SandboxID, spec.Allowed, spec.SensitiveOutput
	const show = 2048
	var b strings.Builder
	fmt.Fprintf(&b, "The command in sandbox %s exited with code %d (allowed: %v).", id, res.ExitCode, sortedCodes(allowed))
	if sensitive {
		b.WriteString(" Its output is not shown: sensitive_output is set.")
	} else {
		for _, s := range []struct{ name, text string }{{"stderr", res.Stderr}, {"stdout", res.Stdout}} {
			if strings.TrimSpace(s.text) == "" {
				continue
			}
			t, cut := tail(s.text, show)
			if cut {
				t = "…" + t
			}
			fmt.Fprintf(&b, "\n\nLast of %s:\n%s", s.name, strings.TrimRight(t, "\n"))
		}
	}
	if spec.AfterFailure != "" {
		b.WriteString("\n\n" + spec.AfterFailure)
	}
	return b.String()
}

func sortedCodes(codes []int64) []int64 {
	out := slices.Clone(codes)
	slices.Sort(out)
	return out
}

// tail returns the last maxBytes bytes of s as valid UTF-8 (state strings must
// be), cut at a character boundary, and whether anything was cut.
func tail(s string, maxBytes int) (string, bool) {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= maxBytes {
		return s, false
	}
	start := len(s) - maxBytes
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	return s[start:], true
}

// checkEgressOpen refuses to run a setup step (require_open_egress) when the
// sandbox's egress is restricted, or may become so: the platform's policy
// must be open and enforced. A fresh VM reports its open generation 0 as not
// yet applied: nothing was ever restricted, so that counts as open.
// It returns the policy it found open (nil when the platform did not
// answer for a sandbox that is not running).
func checkEgressOpen(ctx context.Context, c *prime.Client, sandboxID string) (*prime.EgressPolicyStatus, error) {
	st, err := c.GetEgressPolicy(ctx, sandboxID)
	switch code := prime.StatusCodeOf(err); {
	case err == nil:
	case code == http.StatusNotFound:
		return nil, fmt.Errorf("sandbox %s does not exist", sandboxID)
	case code == http.StatusConflict || code == http.StatusBadRequest:
		// Egress endpoints refuse a sandbox that is not running, which the
		// command itself reports better.
		return nil, nil
	default:
		return nil, fmt.Errorf("reading the egress policy of sandbox %s before running a setup step: %w", sandboxID, err)
	}
	if st.Policy.IsOpen() && !egressOpenForSetup(st) {
		st = egress.AwaitPendingRestore(ctx, c, sandboxID, st) // a destroy's restore in this run
	}
	if egressOpenForSetup(st) {
		return st, nil
	}
	if st.Policy.IsOpen() {
		// A restore (a destroyed policy's, say) the data plane has not
		// enforced yet: the previous restriction still holds.
		return nil, fmt.Errorf("the command has require_open_egress = true, but the open egress policy of sandbox %s "+
			"(generation %d) is accepted and not yet enforced (applied_generation %d): the restriction before it still "+
			"holds, so the command was not run. The platform's data plane applies the restore on its own; apply again "+
			"once it has (the egress policy data source shows applied = true)", sandboxID, st.Generation, st.AppliedGeneration)
	}
	state := "enforced"
	if !st.Enforces(st.Generation) {
		state = fmt.Sprintf("accepted but not yet enforced (applied_generation %d)", st.AppliedGeneration)
	}
	return nil, fmt.Errorf("the command has require_open_egress = true, but sandbox %s holds a restricted egress policy "+
		"(generation %d, %s, %s), so it was not run: a setup step must run with the network open.\n\n"+
		"If this step changed on a sandbox whose lock is already in place, give the lock an after argument that "+
		"names this step, so a change of the step re-opens egress first and locks again after it:\n\n"+
		"  resource \"prime_egress_policy\" \"lock\" {\n"+
		"    ...\n"+
		"    after = [prime_sandbox_command.<this step>.id]\n"+
		"  }", sandboxID, st.Generation, egress.Describe(st.Policy), state)
}

// egressOpenForSetup: open and enforced, or a VM's untouched generation 0.
func egressOpenForSetup(st *prime.EgressPolicyStatus) bool {
	if !st.Policy.IsOpen() {
		return false
	}
	return st.Enforces(st.Generation) || st.Generation == 0
}
