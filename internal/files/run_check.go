package files

// Which run a result belongs to. A command run that clears its
// result_paths leaves a stamp named by its run ID in the sandbox as it
// starts (prime.StampedRunCommand); a reader given the run it expects —
// the data sources' run_id/run_ids, the artifacts' — checks the result
// against that stamp in the sandbox before reading it, so it never returns
// an earlier run's result as that run's: a result older than the run's
// start, or a run that never started there, reads as missing and stale.
// One rule for the four readers.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// runCheckTimeout bounds the check: a few tests of files.
const runCheckTimeout = 60 * time.Second

// runCheck is what the check found.
type runCheck int

const (
	runResultFresh   runCheck = iota // written by the run, or after it started
	runResultMissing                 // no such file
	runResultStale                   // older than the run's start: an earlier run's
	runResultNoStamp                 // the run never started in this sandbox (or /tmp was cleared)
	runResultGone                    // the sandbox is gone
)

// stale: a result was there, but it cannot be the run's.
func (r runCheck) stale() bool { return r == runResultStale || r == runResultNoStamp }

// why says what a stale check found, for messages.
func (r runCheck) why(remote, sandboxID, runID string) string {
	if r == runResultNoStamp {
		return fmt.Sprintf("%s in sandbox %s cannot be run %s's result: that run left no stamp there (%s), so it never "+
			"started in this sandbox with result_paths, or the sandbox's /tmp was cleared since", remote, sandboxID, runID,
			prime.RunStampPath(runID))
	}
	return fmt.Sprintf("%s in sandbox %s is older than run %s's start, so an earlier run wrote it (declare it in the "+
		"producing command's result_paths, so it is removed before every run)", remote, sandboxID, runID)
}

// checkRunResult checks remote in a sandbox against run runID's stamp.
func checkRunResult(ctx context.Context, c *prime.Client, sandboxID, remote, runID string) (runCheck, error) {
	res, err := c.Exec(ctx, sandboxID, prime.ExecRequest{Command: prime.ResultFreshCommand(runID, remote), Timeout: runCheckTimeout})
	switch {
	case prime.GoneWithSandbox(err):
		return runResultGone, nil
	case err != nil:
		return 0, fmt.Errorf("checking %s in sandbox %s against run %s: %w", remote, sandboxID, runID, err)
	}
	switch res.ExitCode {
	case prime.ResultFresh:
		return runResultFresh, nil
	case prime.ResultMissing:
		return runResultMissing, nil
	case prime.ResultStale:
		return runResultStale, nil
	case prime.ResultNoRunStamp:
		return runResultNoStamp, nil
	}
	return 0, fmt.Errorf("checking %s in sandbox %s against run %s: the check exited with code %d: %s", remote, sandboxID,
		runID, res.ExitCode, res.Stderr)
}

// errStaleResult: a result that is not the expected run's.
var errStaleResult = errors.New("not the expected run's result")

// runIDValidator accepts what a command's run_id is.
type runIDValidator struct{}

func (runIDValidator) Description(context.Context) string {
	return "a run ID: 16 lowercase hex characters, a command's run_id"
}

func (v runIDValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (runIDValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if !prime.ValidRunID(req.ConfigValue.ValueString()) {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid run ID",
			fmt.Sprintf("%q is not a run ID: give the run_id of the command that writes the result (lowercase hex).",
				req.ConfigValue.ValueString()))
	}
}

// runIDsValidator checks every value of run_ids.
type runIDsValidator struct{}

func (runIDsValidator) Description(context.Context) string {
	return "member key → a run ID (a fleet command's results[key].run_id)"
}

func (v runIDsValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (runIDsValidator) ValidateMap(ctx context.Context, req validator.MapRequest, resp *validator.MapResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	for k, v := range req.ConfigValue.Elements() {
		s, ok := v.(types.String)
		if !ok {
			continue
		}
		runIDValidator{}.ValidateString(ctx, validator.StringRequest{Path: req.Path.AtMapKey(k), ConfigValue: s}, (*validator.StringResponse)(resp))
	}
}

// runIDOf is member key's entry of run_ids ("" without one).
func runIDOf(runIDs types.Map, key string) string {
	if runIDs.IsNull() || runIDs.IsUnknown() {
		return ""
	}
	if s, ok := runIDs.Elements()[key].(types.String); ok && !s.IsNull() && !s.IsUnknown() {
		return s.ValueString()
	}
	return ""
}

// addStaleWarning reports members whose result was not their run's.
func addStaleWarning(diags *diag.Diagnostics, at path.Path, whys []string) {
	if len(whys) == 0 {
		return
	}
	detail := "These results read as missing (exists = false, stale = true), because they cannot be the runs' named " +
		"in run_ids:"
	for _, w := range whys {
		detail += "\n\n" + w
	}
	diags.AddAttributeWarning(at, "Results of an earlier run", detail)
}
