package command

import (
	"context"
	"maps"
	"path/filepath"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/primeintellect/terraform-provider-prime/internal/journal"
	"github.com/primeintellect/terraform-provider-prime/internal/memberkit"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

// fleetRun is what Create and Update run: the arguments every member shares.
type fleetRun struct {
	base      commandSpec // without SandboxID and Command
	commands  []string
	limit     int
	memberEnv map[string]map[string]string
	// progress, when set, hears of every member's output and finished
	// steps (prime_fleet_exec shows them; see fleetRunProgress).
	progress *fleetRunProgress
	// reporter counts the members by state (INFO log lines, and the
	// progress file in output_dir); runMembers sets it.
	reporter *progressReporter
}

// progressFileOf is where a fleet command keeps its progress file:
// output_dir/progress.json ("" without output_dir).
func progressFileOf(outputDir types.String) string {
	if outputDir.IsNull() || outputDir.IsUnknown() || outputDir.ValueString() == "" {
		return ""
	}
	return filepath.Join(outputDir.ValueString(), ProgressFileName)
}

// memberSpec is the base spec with member key's environment: env, then
// its member_env entry, then its key.
func (run fleetRun) memberSpec(key string) commandSpec {
	spec := run.base
	spec.Env = make(map[string]string, len(run.base.Env)+len(run.memberEnv[key])+1)
	maps.Copy(spec.Env, run.base.Env)
	maps.Copy(spec.Env, run.memberEnv[key])
	spec.Env[memberKeyEnv] = key
	spec.OnOutput = run.memberOutput(key)
	spec.learned = &learnedSecrets{} // the sandbox's secrets are read once for all steps
	return spec
}

// fleetRunOf reads the plan (and env_wo from the configuration) into the
// specs runCommand takes, through the reader every form of a command shares (specOf).
func fleetRunOf(ctx context.Context, plan fleetCommandModel, envWO types.Map, diags *diag.Diagnostics) fleetRun {
	base, d := specOf(ctx, plan.runArguments, envWO) // no AfterFailure: the fleet's one error says what was stored
	diags.Append(d...)
	base.Background = plan.Background.ValueBool()
	base.ResultPaths = resultPathsOf(ctx, plan.ResultPaths, diags)
	commands, d := tfkit.StringList(ctx, plan.Commands)
	diags.Append(d...)
	run := fleetRun{base: base, commands: commands, limit: int(plan.MaxConcurrency.ValueInt64()), memberEnv: map[string]map[string]string{}}
	if !plan.MemberEnv.IsNull() && !plan.MemberEnv.IsUnknown() {
		for key, v := range plan.MemberEnv.Elements() {
			vars, ok := v.(types.Map)
			if !ok {
				continue
			}
			m, d := tfkit.StringMap(ctx, vars)
			diags.Append(d...)
			run.memberEnv[key] = m
		}
	}
	return run
}

// runMembers runs the steps on the members in ids (key → sandbox ID),
// members concurrently (at most run.limit), each member's steps in order —
// through runCommand, or as background jobs resuming from progress —
// stopping a member at its first failed step. Members that succeeded are in
// the result's done, failed members in its failed (and in problems, with
// the whole story); members left mid-way are in its pending (and in
// problems when their outcome is unknown rather than interrupted).
func (r *fleetCommandResource) runMembers(ctx context.Context, plan fleetCommandModel, run fleetRun, ids map[string]string,
	progress map[string]memberProgress, problems *memberkit.Problems) *fleetRunResult {
	var mu sync.Mutex
	lock := func() func() { mu.Lock(); return mu.Unlock }
	fr := &fleetRunResult{done: map[string]*commandMemberRecord{}, failed: map[string]*commandMemberRecord{},
		pending: map[string]memberProgress{}, entries: map[string][]*journal.JobEntry{}}
	tflog.Info(ctx, "running fleet command", map[string]any{
		"members": len(ids), "steps": len(run.commands), "max_concurrency": run.limit, "timeout": run.base.Timeout.String(),
		"background": run.base.Background,
	})
	// In the background every member's job runs at once; max_concurrency
	// bounds the members talking to the gateway (starting, collecting).
	limit, slots := run.limit, chan struct{}(nil)
	if run.base.Background {
		limit, slots = 0, make(chan struct{}, max(run.limit, 1))
	}
	mode := stepOutputOf(plan)
	run.reporter = newProgressReporter(ctx, progressOptions{What: "prime_fleet_command", Keys: tfkit.SortedKeys(ids),
		States: commandProgressStates, File: progressFileOf(plan.OutputDir)})
	defer func() {
		if err := run.reporter.stop(); err != nil {
			fr.warnings = append(fr.warnings, err.Error())
		}
	}()
	memberkit.ForEachMember(ctx, tfkit.SortedKeys(ids), limit, func(ctx context.Context, key string) {
		id := ids[key]
		run.reporter.update(key, func(m *memberProgressState) {
			m.State, m.SandboxID, m.Steps = ProgressRunning, id, len(run.commands)
		})
		var out memberOutcome
		if run.base.Background {
			var prog *memberProgress
			if p, ok := progress[key]; ok {
				prog = &p
			}
			out = r.runMemberInBackground(ctx, plan, run, key, id, prog, slots, fr, lock)
		} else {
			out = r.runMemberInForeground(ctx, run, key, id)
		}
		if out.err != nil {
			problems.Add(key, "sandbox %s, step %d of %d: %s. %s", id, out.step+1, len(run.commands), commandErrorSummary(out.err), out.err)
		}
		if out.pending {
			run.reporter.set(key, ProgressLeft)
			return
		}
		rec := memberRecord(id, out, len(run.commands), run.base.SensitiveOutput, mode)
		run.reporter.update(key, func(m *memberProgressState) {
			m.State, m.Error = ProgressSucceeded, rec.Result.Error.ValueString()
			if out.err != nil {
				m.State = ProgressFailed
			}
		})
		defer lock()()
		if out.err != nil {
			fr.failed[key] = rec
		} else {
			fr.done[key] = rec
		}
	})
	return fr
}

// runMemberInForeground runs one member's steps through runCommand,
// stopping at the first that fails.
func (r *fleetCommandResource) runMemberInForeground(ctx context.Context, run fleetRun, key, id string) memberOutcome {
	var out memberOutcome
	memberSpec := run.memberSpec(key)
	for i, command := range run.commands {
		spec := memberSpec
		spec.SandboxID, spec.Command = id, command
		spec.RequireOpenEgress = run.base.RequireOpenEgress && i == 0
		if i > 0 {
			spec.ResultPaths = nil // removed before the member's first step only
		}
		run.reporter.update(key, func(m *memberProgressState) { m.Step = i + 1 })
		res, err := runCommand(ctx, r.client, spec)
		run.stepDone(key, id, i, res, err)
		if res != nil {
			out.results = append(out.results, res)
		}
		if err != nil {
			out.err, out.step = err, i
			return out
		}
	}
	return out
}
