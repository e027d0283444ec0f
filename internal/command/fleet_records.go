package command

// What prime_fleet_command records per member: its result (every step's
// exit code and output, cut as step_output says), or, with failures, what
// failed; which members succeeded; which members' jobs an interrupted
// apply left running. And the texts that say what was stored.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/memberkit"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

// on_member_failure values.
const (
	onFailureFail   = "fail"   // a failed member fails the apply
	onFailureRecord = "record" // a failed member is recorded as its result; the apply goes on
)

// step_output values: how much of each step's output results keeps.
const (
	stepOutputLastLine = "last_line" // the last non-empty line, at most lastLineBytes
	stepOutputTail     = "tail"      // the last FleetStepOutput bytes
	stepOutputNone     = "none"      // nothing (output_dir has it all)
)

// lastLineBytes bounds a last_line: a summary line, not a log.
const lastLineBytes = 512

// maxMemberError bounds a failed member's error: one line, so that a plan
// that runs the member again stays short.
const maxMemberError = 512

// cutStepOutput cuts one recorded stream as step_output says: what is kept
// and whether anything was dropped. It is idempotent, and cutting a tail
// gives what cutting the whole output gives, so recorded results can be cut
// again when step_output changes.
func cutStepOutput(mode string, s types.String) (types.String, bool) {
	if s.IsNull() || s.IsUnknown() {
		return s, false
	}
	text := s.ValueString()
	switch mode {
	case stepOutputNone:
		return types.StringNull(), text != ""
	case stepOutputLastLine:
		line := lastLine(text)
		return types.StringValue(line), strings.TrimRight(text, "\r\n") != line
	}
	t, cut := tail(text, FleetStepOutput)
	return types.StringValue(t), cut
}

// lastLine is the last line of s that is not blank, without its line
// ending, cut to its last lastLineBytes bytes at a character boundary.
func lastLine(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.TrimSpace(lines[i]) == "" {
			continue
		}
		l, _ := tail(strings.TrimSuffix(lines[i], "\r"), lastLineBytes)
		return l
	}
	return ""
}

// fleetStepOf records one step's result as prime_sandbox_command records a
// command's (outputOf), cut as step_output says.
func fleetStepOf(res *commandResult, sensitive bool, mode string) (fleetCommandStep, types.Object) {
	out := outputOf(res, sensitive)
	step := fleetCommandStep{ExitCode: types.Int64Value(int64(res.ExitCode)), Stdout: out.Stdout, Stderr: out.Stderr,
		OutputTruncated: types.BoolValue(res.Truncated)}
	return cutStep(step, out.SensitiveStreams, mode)
}

// cutStep cuts a recorded step's output (in stdout/stderr, or in its
// sensitive_streams object) as step_output says.
func cutStep(s fleetCommandStep, streams types.Object, mode string) (fleetCommandStep, types.Object) {
	var cutOut, cutErr bool
	s.Stdout, cutOut = cutStepOutput(mode, s.Stdout)
	s.Stderr, cutErr = cutStepOutput(mode, s.Stderr)
	if !streams.IsNull() && !streams.IsUnknown() {
		stdout, stderr := streamsOf(streams)
		stdout, cutOut = cutStepOutput(mode, stdout)
		stderr, cutErr = cutStepOutput(mode, stderr)
		streams = streamsValue(stdout, stderr)
	}
	if cutOut || cutErr {
		s.OutputTruncated = types.BoolValue(true)
	}
	return s, streams
}

// stepOutputOf is step_output, its default while unknown or unset.
func stepOutputOf(m fleetCommandModel) string {
	if m.StepOutput.IsNull() || m.StepOutput.IsUnknown() {
		return stepOutputLastLine
	}
	return m.StepOutput.ValueString()
}

// memberOutcome is how one member's run ended.
type memberOutcome struct {
	// results are the steps that produced a result, in order: every step
	// when it succeeded, else those before the failed one and the failed
	// one when it exited (with a disallowed code).
	results []*commandResult
	// err is the failure (nil when every step succeeded); step its index.
	err  error
	step int
	// pending: the member was left mid-way (interrupted, or a job whose
	// outcome is unknown), in fleetRunResult.pending; nothing is recorded.
	pending bool
}

// memberRecord is a member's entry of results (and sensitive_streams) for
// its outcome: a new run_id, failed and error set when it failed.
func memberRecord(sandboxID string, out memberOutcome, steps int, sensitive bool, mode string) *commandMemberRecord {
	rec := &commandMemberRecord{}
	rec.Result.SandboxID = types.StringValue(sandboxID)
	rec.Result.RunID = types.StringValue(prime.NewIdempotencyKey()[:16])
	rec.Result.ExitCode, rec.Result.ExecutedAt = types.Int64Null(), types.StringNull()
	rec.Result.Failed, rec.Result.Error = types.BoolValue(out.err != nil), types.StringNull()
	rec.Result.Steps = []fleetCommandStep{}
	for _, res := range out.results {
		step, streams := fleetStepOf(res, sensitive, mode)
		rec.Result.Steps = append(rec.Result.Steps, step)
		rec.Streams = append(rec.Streams, streams)
		rec.Result.ExitCode = step.ExitCode
		if !res.ExecutedAt.IsZero() { // an outcome a build before executed_at journaled
			rec.Result.ExecutedAt = types.StringValue(res.ExecutedAt.Format(time.RFC3339))
		}
	}
	if out.err != nil {
		if len(out.results) <= out.step {
			rec.Result.ExitCode = types.Int64Null() // the failed step has no exit code (a timeout, a lost sandbox)
		}
		rec.Result.ExecutedAt = types.StringValue(time.Now().UTC().Format(time.RFC3339))
		rec.Result.Error = types.StringValue(memberErrorLine(out.step, steps, out.err))
	}
	return rec
}

// memberErrorLine is a failed member's error as results records it: the
// step, the failure's title and the first line of its text, on one
// bounded line (the whole text is in the apply's diagnostic).
func memberErrorLine(step, steps int, err error) string {
	first, _, _ := strings.Cut(strings.TrimSpace(err.Error()), "\n")
	line := fmt.Sprintf("step %d of %d: %s: %s", step+1, steps, commandErrorSummary(err), strings.TrimSpace(first))
	if len(line) > maxMemberError {
		cut := maxMemberError - len("…")
		for cut > 0 && !utf8.RuneStart(line[cut]) {
			cut--
		}
		line = line[:cut] + "…"
	}
	return line
}

// keepFleetResult: a recorded result stays when it is a success, from the
// same sandbox, and every step's exit code is still allowed
// (recordedExitCodeDisallowed, per member). A recorded failure never
// stays: the member runs again.
func keepFleetResult(r fleetCommandResult, sandboxID string, allowed []int64) bool {
	if r.Failed.ValueBool() || r.SandboxID.ValueString() != sandboxID {
		return false
	}
	for _, s := range r.Steps {
		if !slices.Contains(allowed, s.ExitCode.ValueInt64()) {
			return false
		}
	}
	return true
}

// movedRecord places each step's recorded output where sensitive_output
// wants it, with prime_sandbox_command's rule (recordedOutput.moved), cut as
// step_output now says (a cut output cannot grow back: "tail" keeps what
// is recorded).
func movedRecord(r commandMemberRecord, wasSensitive, sensitive bool, mode string) commandMemberRecord {
	out := commandMemberRecord{Result: r.Result, Streams: make([]types.Object, len(r.Result.Steps))}
	out.Result.Steps = make([]fleetCommandStep, len(r.Result.Steps))
	for i, s := range r.Result.Steps {
		moved := recordedOutput{Stdout: s.Stdout, Stderr: s.Stderr, SensitiveStreams: stepStreamAt(r.Streams, i)}.moved(wasSensitive, sensitive)
		s.Stdout, s.Stderr = moved.Stdout, moved.Stderr
		out.Result.Steps[i], out.Streams[i] = cutStep(s, moved.SensitiveStreams, mode)
	}
	return out
}

// stepStreamAt is step i's sensitive_streams object, null when none is
// recorded.
func stepStreamAt(streams []types.Object, i int) types.Object {
	if i < len(streams) {
		return streams[i]
	}
	return types.ObjectNull(streamsType().AttrTypes)
}

// commandMemberRecordsOf reads results and sensitive_streams; nil when
// results is null or unknown.
func commandMemberRecordsOf(m fleetCommandModel, diags *diag.Diagnostics) map[string]commandMemberRecord {
	if m.Results.IsNull() || m.Results.IsUnknown() {
		return nil
	}
	results := fleetCommandResultsOfMap(m.Results, diags)
	streams := map[string][]types.Object{}
	if !m.SensitiveStreams.IsNull() && !m.SensitiveStreams.IsUnknown() {
		streams = memberkit.ObjectListsOfMap(m.SensitiveStreams, diags)
	}
	out := make(map[string]commandMemberRecord, len(results))
	for k, r := range results {
		if r.Failed.IsNull() {
			// Recorded before failures were: only successes were kept.
			// false, so that `if !r.failed` works on them.
			r.Failed = types.BoolValue(false)
		}
		out[k] = commandMemberRecord{Result: r, Streams: streams[k]}
	}
	return out
}

// setRecords writes results and sensitive_streams; a nil record is a
// member planned to run (unknown entries).
//
// There is deliberately no aggregate of the members that succeeded (a map
// of their sandbox IDs): it would be unknown whenever any member runs, and
// a plan prints the whole old value of an attribute that becomes unknown,
// one line per member of the fleet even when one member of a thousand runs
// again. A for expression over results (`if !r.failed`) costs the plan
// nothing.
func (r *fleetCommandResource) setRecords(ctx context.Context, m *fleetCommandModel, records map[string]*commandMemberRecord, diags *diag.Diagnostics) {
	results := make(map[string]attr.Value, len(records))
	streams := make(map[string]attr.Value, len(records))
	for k, rec := range records {
		if rec == nil {
			results[k] = types.ObjectUnknown(fleetCommandResultType().AttrTypes)
			streams[k] = types.ListUnknown(streamsType())
			continue
		}
		results[k] = rec.Result.object()
		elems := make([]attr.Value, len(rec.Result.Steps))
		for i := range elems {
			elems[i] = stepStreamAt(rec.Streams, i)
		}
		list, d := types.ListValue(streamsType(), elems)
		diags.Append(d...)
		streams[k] = list
	}
	v, d := types.MapValue(fleetCommandResultType(), results)
	diags.Append(d...)
	m.Results = v
	switch {
	case m.SensitiveOutput.IsUnknown():
		m.SensitiveStreams = types.MapUnknown(fleetStreamsType())
	case !m.SensitiveOutput.ValueBool():
		m.SensitiveStreams = types.MapNull(fleetStreamsType())
	default:
		m.SensitiveStreams, d = types.MapValue(fleetStreamsType(), streams)
		diags.Append(d...)
	}
}

// onFailureOf is on_member_failure ("fail" while unknown or unset).
func onFailureOf(m fleetCommandModel) string {
	if m.OnMemberFailure.IsNull() || m.OnMemberFailure.IsUnknown() {
		return onFailureFail
	}
	return m.OnMemberFailure.ValueString()
}

// fleetCommandFailure is the one diagnostic of a fleet command whose
// members failed, saying truthfully what was stored and what the next
// apply does. tried members ran; stored: a state is saved (an update, or
// on_member_failure = "record"); recorded: how many failures results
// records; succeeded: how many members' successes it holds now.
type fleetCommandFailure struct {
	problems  *memberkit.Problems
	tried     int
	stored    bool
	recorded  int
	succeeded int
	pending   int  // members left with a job whose outcome is unknown
	journaled bool // background: a failed create leaves finished steps in the job journal
	action    bool // prime_fleet_exec: nothing is ever stored
}

// add reports the failure: an error, or with record a warning.
func (f fleetCommandFailure) add(diags *diag.Diagnostics, record bool) {
	body := fmt.Sprintf("The command failed on %d of the %d members that ran:\n\n%s\n\n%s", f.problems.Len(), f.tried,
		f.problems.String(), f.outcome(record))
	if record {
		diags.AddWarning(fmt.Sprintf("Fleet command failed on %d %s", f.problems.Len(), tfkit.PluralVerb(f.problems.Len(), "member", "members")), body)
		return
	}
	diags.AddError("Fleet command failed", body)
}

// outcome says what was stored and what the next apply does.
func (f fleetCommandFailure) outcome(record bool) string {
	var b strings.Builder
	switch {
	case f.action:
		b.WriteString(actionRecordsNothing)
		return b.String()
	case !f.stored:
		b.WriteString("Nothing was stored (the resource was not created), so the next apply runs every member again")
		if f.journaled {
			b.WriteString(", except steps whose jobs this machine's job journal holds: the next apply takes their " +
				"results, or attaches to the jobs still running, instead of running the steps again")
		}
		b.WriteString(". To keep the results of the members that succeeded and record the failures instead, set " +
			"on_member_failure = \"record\".")
		return b.String()
	}
	fmt.Fprintf(&b, "Stored: the results of the %d %s that succeeded", f.succeeded,
		tfkit.PluralVerb(f.succeeded, "member", "members"))
	if f.recorded > 0 {
		fmt.Fprintf(&b, ", and each failure, in results with failed = true and its error")
	}
	b.WriteString(".")
	if f.recorded > 0 {
		fmt.Fprintf(&b, " The next apply runs the %d failed %s again, and only %s; the next plan shows %s.",
			f.recorded, tfkit.PluralVerb(f.recorded, "member", "members"), tfkit.PluralVerb(f.recorded, "it", "them"),
			tfkit.PluralVerb(f.recorded, "it", "them"))
	}
	if f.pending > 0 {
		fmt.Fprintf(&b, " %d %s a job whose outcome is not known yet, recorded in running_jobs: the next apply "+
			"collects %s without running anything again.", f.pending, tfkit.PluralVerb(f.pending, "member has", "members have"),
			tfkit.PluralVerb(f.pending, "it", "them"))
	}
	if record && f.recorded > 0 {
		b.WriteString(" The apply went on (on_member_failure = \"record\"): read the members that succeeded with " +
			"{ for k, r in results : k => r.sandbox_id if !r.failed }.")
	}
	return b.String()
}
