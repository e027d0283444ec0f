package command

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/memberkit"
)

func TestCutStepOutput(t *testing.T) {
	long := strings.Repeat("é", 400) // 800 bytes on one line
	big := strings.Repeat("x", FleetStepOutput+10)
	for _, c := range []struct {
		mode, in string
		want     string
		null     bool
		cut      bool
	}{
		{stepOutputLastLine, "", "", false, false},
		{stepOutputLastLine, "done\n", "done", false, false},
		{stepOutputLastLine, "done", "done", false, false},
		{stepOutputLastLine, "a\nb\n", "b", false, true},
		{stepOutputLastLine, "a\r\nb\r\n", "b", false, true},
		{stepOutputLastLine, "result: 3 passed\n\n  \n", "result: 3 passed", false, true},
		{stepOutputLastLine, "\n\n", "", false, false},
		{stepOutputLastLine, long + "\n", strings.Repeat("é", lastLineBytes/2), false, true},
		{stepOutputTail, "a\nb\n", "a\nb\n", false, false},
		{stepOutputTail, big, big[10:], false, true},
		{stepOutputNone, "a\n", "", true, true},
		{stepOutputNone, "", "", true, false},
	} {
		got, cut := cutStepOutput(c.mode, types.StringValue(c.in))
		if got.IsNull() != c.null || (!c.null && got.ValueString() != c.want) || cut != c.cut {
			t.Errorf("cutStepOutput(%s, %.20q) = %.20q (null %t), cut %t; want %.20q (null %t), cut %t",
				c.mode, c.in, got.ValueString(), got.IsNull(), cut, c.want, c.null, c.cut)
		}
		// Idempotent: a recorded result cut again is unchanged.
		again, recut := cutStepOutput(c.mode, got)
		if !again.Equal(got) || recut && !c.null {
			t.Errorf("cutStepOutput(%s) again: %.20q, cut %t", c.mode, again.ValueString(), recut)
		}
		// A tail cut as last_line gives what the whole output gives.
		if c.mode == stepOutputLastLine {
			tailed, _ := cutStepOutput(stepOutputTail, types.StringValue(c.in))
			fromTail, _ := cutStepOutput(stepOutputLastLine, tailed)
			if !fromTail.Equal(got) {
				t.Errorf("last_line of the tail of %.20q is %.20q, of the whole %.20q", c.in, fromTail.ValueString(), got.ValueString())
			}
		}
	}
	if got, cut := cutStepOutput(stepOutputLastLine, types.StringNull()); !got.IsNull() || cut {
		t.Errorf("a null output must stay null")
	}
}

func TestMemberRecord(t *testing.T) {
	ok := &commandResult{ExitCode: 0, Stdout: "step one\nok\n"}
	crash := &commandResult{ExitCode: 139, Stderr: "Segmentation fault\n"}
	disallowed := &commandError{Summary: "Command exited with a disallowed code",
		Err: errors.New("The command in sandbox sb-1 exited with code 139 (allowed: [0]).\n\nLast of stderr:\nSegmentation fault")}
	timeout := &commandError{Summary: "Command timed out", Err: errors.New("sandbox sb-1: command timed out after 5m0s")}
	for _, c := range []struct {
		name     string
		out      memberOutcome
		steps    int
		failed   bool
		exitCode string
		err      string
	}{
		{"success", memberOutcome{results: []*commandResult{ok, ok}}, 2, false, "0", ""},
		{"crash", memberOutcome{results: []*commandResult{ok, crash}, err: disallowed, step: 1}, 2, true, "139",
			"step 2 of 2: Command exited with a disallowed code: The command in sandbox sb-1 exited with code 139 (allowed: [0])."},
		{"timeout", memberOutcome{results: []*commandResult{ok}, err: timeout, step: 1}, 3, true, "<null>",
			"step 2 of 3: Command timed out: sandbox sb-1: command timed out after 5m0s"},
	} {
		rec := memberRecord("sb-1", c.out, c.steps, false, stepOutputLastLine)
		r := rec.Result
		code := "<null>"
		if !r.ExitCode.IsNull() {
			code = fmt.Sprint(r.ExitCode.ValueInt64())
		}
		if r.Failed.ValueBool() != c.failed || code != c.exitCode || r.Error.ValueString() != c.err ||
			r.Error.IsNull() == c.failed || r.RunID.ValueString() == "" || r.ExecutedAt.IsNull() != (c.name == "success") {
			t.Errorf("%s: failed %v, exit code %s, error %q, run_id %q, executed_at %s", c.name, r.Failed, code, r.Error.ValueString(),
				r.RunID.ValueString(), r.ExecutedAt)
		}
		if len(r.Steps) != len(c.out.results) || r.Steps[0].Stdout.ValueString() != "ok" {
			t.Errorf("%s: steps %+v", c.name, r.Steps)
		}
	}
	long := &commandError{Summary: "Background job failed", Err: errors.New(strings.Repeat("é", 600))}
	if line := memberErrorLine(0, 1, long); len(line) > maxMemberError || !strings.HasSuffix(line, "…") || strings.Contains(line, "\n") {
		t.Errorf("a long error is cut to one line of at most %d bytes: %d bytes", maxMemberError, len(line))
	}
}

// The failure texts say what was stored and what the next apply does.
func TestFleetCommandFailureOutcome(t *testing.T) {
	var problems memberkit.Problems
	problems.Add("1", "sandbox sb-1, step 1 of 1: crashed")
	for _, c := range []struct {
		name   string
		f      fleetCommandFailure
		record bool
		want   string
	}{
		{"create", fleetCommandFailure{problems: &problems, tried: 3}, false,
			`Nothing was stored (the resource was not created), so the next apply runs every member again. To keep the results of the members that succeeded and record the failures instead, set on_member_failure = "record".`},
		{"background create", fleetCommandFailure{problems: &problems, tried: 3, journaled: true}, false,
			"runs every member again, except steps whose jobs this machine's job journal holds: the next apply takes their results, or attaches to the jobs still running"},
		{"update", fleetCommandFailure{problems: &problems, tried: 1, stored: true, recorded: 1, succeeded: 2}, false,
			"Stored: the results of the 2 members that succeeded, and each failure, in results with failed = true and its error. The next apply runs the 1 failed member again, and only it; the next plan shows it."},
		{"record", fleetCommandFailure{problems: &problems, tried: 3, stored: true, recorded: 1, succeeded: 2}, true,
			`The apply went on (on_member_failure = "record"): read the members that succeeded with { for k, r in results : k => r.sandbox_id if !r.failed }.`},
		{"unknown outcome", fleetCommandFailure{problems: &problems, tried: 1, stored: true, succeeded: 2, pending: 1}, false,
			"1 member has a job whose outcome is not known yet, recorded in running_jobs: the next apply collects it without running anything again."},
		{"action", fleetCommandFailure{problems: &problems, tried: 1, action: true}, false, actionRecordsNothing},
	} {
		if got := c.f.outcome(c.record); !strings.Contains(got, c.want) {
			t.Errorf("%s: %s\nwant it to contain: %s", c.name, got, c.want)
		}
		if got := c.f.outcome(c.record); c.name != "create" && strings.Contains(got, "Nothing was stored") && c.f.stored {
			t.Errorf("%s: says nothing was stored after storing: %s", c.name, got)
		}
	}
}

// A result recorded before failures were has failed = null: it reads as a
// success, so `if !r.failed` works on it and it is kept.
func TestCommandMemberRecordsOfOldState(t *testing.T) {
	old := fleetCommandResult{SandboxID: types.StringValue("sb-0"), ExitCode: types.Int64Value(0),
		ExecutedAt: types.StringValue("2026-12-01T00:00:00Z"), RunID: types.StringValue("r"),
		Failed: types.BoolNull(), Error: types.StringNull(), Steps: []fleetCommandStep{}}
	m := fleetCommandModel{Results: types.MapValueMust(fleetCommandResultType(), map[string]attr.Value{"0": old.object()}),
		SensitiveStreams: types.MapNull(fleetStreamsType())}
	var diags diag.Diagnostics
	recs := commandMemberRecordsOf(m, &diags)
	if diags.HasError() || recs["0"].Result.Failed != types.BoolValue(false) || !keepFleetResult(recs["0"].Result, "sb-0", []int64{0}) {
		t.Fatalf("old record read as %+v (%v)", recs["0"].Result, diags)
	}
}
