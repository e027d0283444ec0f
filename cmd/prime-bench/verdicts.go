package main

import (
	"fmt"
	"time"
)

// report is everything one invocation measured.
type report struct {
	runs  []*runFigures
	sdk   []*sdkFigures
	files []*filePair
	jobs  []*jobPair
	// setupOnce: the setup-once runs beside per-member setup (setuponce.go).
	setupOnce []*setupPair
	// recovery: the recovery runs (recovery.go).
	recovery []*recoveryFigures
	skipped  []skipped
	verdicts []verdict
}

func (r *report) run(path string, n, p int) *runFigures {
	for _, f := range r.runs {
		if f.path == path && f.n == n && f.p == p {
			return f
		}
	}
	return nil
}

func (r *report) sdkRun(n int) *sdkFigures {
	for _, f := range r.sdk {
		if f.n == n {
			return f
		}
	}
	return nil
}

// verdict is one target's evaluation.
type verdict struct {
	name, value, target string
	pass                bool
	na                  bool // not measured in this invocation
	note                string
}

func (v verdict) line() string {
	mark := "PASS"
	switch {
	case v.na:
		mark = "N/A "
	case !v.pass:
		mark = "MISS"
	}
	s := fmt.Sprintf("[%s] %s: %s (target %s)", mark, v.name, v.value, v.target)
	if v.note != "" {
		s += " — " + v.note
	}
	return s
}

// Terraform's default -parallelism.
const defaultParallelism = 10

// previous are the per-instance figures of BENCHMARKS.md as recorded on
// 2026-11-29 (commit 7908cc0: N=200, P=50, the same mock settings), before
// prime_sandbox waited for the gateway. Wall-clock figures of another
// invocation are not comparable on a shared machine; ratios to the limit,
// request counts, the client's observation latencies and memory are.
var previous = struct {
	commit                                   string
	applyRatio, spanRatio                    float64
	statusPer, apiPer                        float64
	obsMedian, obsP95                        time.Duration
	refresh, plan, destroy                   time.Duration
	refreshPerRes                            float64
	destroyRatio, destroyAPIPer, destroyStat float64
	destroyObsMedian                         time.Duration
	rssApply, rssRefresh                     float64 // MiB
}{
	commit:     "7908cc0",
	applyRatio: 1.49, spanRatio: 1.25, statusPer: 0.59, apiPer: 9.44,
	obsMedian: 80 * time.Millisecond, obsP95: 312 * time.Millisecond,
	refresh: 2140 * time.Millisecond, plan: 3490 * time.Millisecond, destroy: 14260 * time.Millisecond,
	refreshPerRes: 1.00, destroyRatio: 14.26 / 4.06, destroyAPIPer: 10.20, destroyStat: 0.07,
	destroyObsMedian: 64 * time.Millisecond,
	rssApply:         59.9, rssRefresh: 55.1,
}

func notMeasured(name, target, how string) verdict {
	return verdict{name: name, target: target, na: true, value: "not measured", note: how}
}

func evaluate(r *report, c benchConfig) []verdict {
	var out []verdict
	p := defaultParallelism
	// 1. N=200 fleet + fleet policy at Terraform's default parallelism.
	if f := r.run(pathFleet, 200, p); f != nil {
		out = append(out, verdict{name: fmt.Sprintf("fleet N=200 (P=%d): apply / limit", p), target: "≤ 1.50",
			value: fmt.Sprintf("%.2f (%s / %s)", f.ratio(), secs(f.apply.res.Duration), secs(f.limit)), pass: f.ratio() <= 1.5})
	} else {
		out = append(out, notMeasured(fmt.Sprintf("fleet N=200 (P=%d): apply / limit", p), "≤ 1.50", "-fleet-n 200 -fleet-p 10"))
	}
	// 2. Scale: N=1000, 3000 and 10000 side by side, the SDK stand-in.
	out = append(out, scaleVerdicts(r, c)...)
	// 3. Per-instance N=200 at parallelism 200.
	if f := r.run(pathInstances, 200, 200); f != nil {
		// ≤ 6, decided on issue 13: five requests per sandbox come before any
		// poll (create, the gateway token of the readiness probe, the GET
		// after ready for started_at, the policy PUT, one egress GET), and
		// both the probe and started_at stay.
		per := perMember(f.apply, "", f.n)
		out = append(out, verdict{name: "per-instance N=200 (P=200): API requests per sandbox (apply)", target: "≤ 6 (floor 5)",
			value: fmt.Sprintf("%.2f (%d)", per, f.apply.apiTotal()), pass: per <= 6})
		out = append(out, verdict{name: "per-instance N=200 (P=200): policy applied → seen, median", target: "≤ 150 ms",
			value: ms(f.obs.median), pass: f.obs.n > 0 && f.obs.median <= 150*time.Millisecond})
	} else {
		out = append(out, notMeasured("per-instance N=200 (P=200)", "≤ 6 requests, median ≤ 150 ms", "-runs instances:200:200"))
	}
	// 4. Per-instance N=200 at parallelism 50: no figure worse than before.
	if f := r.run(pathInstances, 200, 50); f != nil {
		out = append(out, previousVerdicts(f)...)
	} else {
		out = append(out, notMeasured("per-instance N=200 (P=50) against the previous BENCHMARKS.md", "no figure worse", "-instances-n 200 -instances-p 50"))
	}
	out = append(out, fileVerdicts(r, c)...)
	out = append(out, jobVerdicts(r, c)...)
	for _, f := range r.runs {
		if !f.planEmpty || !f.refreshEmpty || f.liveAfterApply != f.n || f.appliedN < f.n || f.liveAfterDestroy != 0 {
			out = append(out, verdict{name: fmt.Sprintf("sanity (%s)", f.runSpec), target: "N live, N applied, refresh and plan exit 0, 0 after destroy",
				value: fmt.Sprintf("%d live, %d applied, refresh exit %d, plan exit %d, %d after destroy", f.liveAfterApply, f.appliedN,
					f.refresh.res.ExitCode, f.plan.res.ExitCode, f.liveAfterDestroy)})
		}
	}
	return out
}

// previousVerdicts compares the per-instance N=200, P=50 run with the
// previous BENCHMARKS.md, figure by figure (lower is better for each).
func previousVerdicts(f *runFigures) []verdict {
	const wall = "wall clock of another invocation: the machine's load decides much of it"
	var out []verdict
	cmp := func(name string, now, was float64, format string, note string) {
		out = append(out, verdict{name: "per-instance N=200 (P=50): " + name, target: "≤ " + fmt.Sprintf(format, was) + " (previous)",
			value: fmt.Sprintf(format, now), pass: now <= was+1e-9, note: note})
	}
	d := func(x time.Duration) float64 { return float64(x) / float64(time.Millisecond) }
	cmp("apply / limit", f.ratio(), previous.applyRatio, "%.2f", "")
	cmp("API span / limit", f.span.Seconds()/f.limit.Seconds(), previous.spanRatio, "%.2f", "")
	cmp("status requests per sandbox (apply)", perMember(f.apply, statusRoute, f.n), previous.statusPer, "%.2f", "")
	cmp("API requests per sandbox (apply)", perMember(f.apply, "", f.n), previous.apiPer, "%.2f", "")
	cmp("policy applied → seen, median (ms)", d(f.obs.median), d(previous.obsMedian), "%.0f", "")
	cmp("policy applied → seen, p95 (ms)", d(f.obs.p95), d(previous.obsP95), "%.0f", "")
	cmp("provider peak RSS, apply (MiB)", float64(f.apply.maxRSS())/1024, previous.rssApply, "%.1f", "")
	cmp("refresh requests per resource", f.refreshRes, previous.refreshPerRes, "%.2f", "")
	cmp("refresh wall (s)", f.refresh.res.Duration.Seconds(), previous.refresh.Seconds(), "%.2f", wall)
	cmp("provider peak RSS, refresh (MiB)", float64(f.refresh.maxRSS())/1024, previous.rssRefresh, "%.1f", "")
	cmp("second plan wall (s)", f.plan.res.Duration.Seconds(), previous.plan.Seconds(), "%.2f", wall)
	cmp("destroy / destroy limit", f.destroy.res.Duration.Seconds()/f.destroyLimit.Seconds(), previous.destroyRatio, "%.2f", "")
	cmp("API requests per sandbox (destroy)", perMember(f.destroy, "", f.n), previous.destroyAPIPer, "%.2f", "")
	cmp("status requests per sandbox (destroy)", perMember(f.destroy, statusRoute, f.n), previous.destroyStat, "%.2f", "")
	cmp("open policy applied → seen, median, destroy (ms)", d(f.destroyObs.median), d(previous.destroyObsMedian), "%.0f", "")
	return out
}

func (r *report) filePair(n int) *filePair {
	for _, p := range r.files {
		if p.n == n {
			return p
		}
	}
	return nil
}

// fileVerdicts judges the file runs: the provider's memory at N=1000 and
// the gateway requests of the upload and the read at every N.
func fileVerdicts(r *report, c benchConfig) []verdict {
	var out []verdict
	if p := r.filePair(1000); p != nil {
		allow := rssAllowance(p.files.archive.Size)
		out = append(out, verdict{
			name:   "files N=1000: provider peak RSS (apply) above the same fleet without files",
			target: fmt.Sprintf("≤ 2 × archive + 50 MiB = %s", kb(allow)),
			value: fmt.Sprintf("%s (%s with files, %s without)", signedKB(p.rssAbove()),
				kb(p.files.apply.maxRSS()), kb(p.base.apply.maxRSS())),
			pass: p.rssAbove() <= allow && p.files.apply.maxRSS() > 0 && p.base.apply.maxRSS() > 0,
		})
	} else {
		out = append(out, notMeasured("files N=1000: provider peak RSS above the same fleet without files", "≤ 2 × archive + 50 MiB", "-file-n 1000"))
	}
	for _, p := range r.files {
		g := p.files.split
		per := perN(g.uploadCalls()+g.readCalls(), p.n)
		parts := uploadParts(p.files.archive.Size)
		want := parts + 2
		out = append(out, verdict{
			name: fmt.Sprintf("files N=%d, %s: gateway requests per member, upload + result read", p.n, mib(p.files.archive.Size)),
			target: fmt.Sprintf("≤ %d (%d upload%s of at most 16 MiB, the join and unpack, the read; no mkdir)", want, parts,
				map[bool]string{true: "s", false: ""}[parts > 1]),
			value: fmt.Sprintf("%.2f (upload %.2f: uploads %.2f + unpack %.2f + mkdir %.2f; read %.2f)", per, perN(g.uploadCalls(), p.n),
				perN(g.uploads, p.n), perN(g.commands[cmdUnpack], p.n), perN(g.commands[cmdMkdir], p.n), perN(g.readCalls(), p.n)),
			pass: per <= float64(want)+1e-9 && g.uploadCalls() > 0 && g.readCalls() > 0,
		})
		if parts > 1 {
			allow := rssAllowance(p.files.archive.Size)
			out = append(out, verdict{
				name:   fmt.Sprintf("files N=%d, %s: provider peak RSS (apply) above the same fleet without files", p.n, mib(p.files.archive.Size)),
				target: fmt.Sprintf("≤ 2 × archive + 50 MiB = %s", kb(allow)),
				value: fmt.Sprintf("%s (%s with files, %s without)", signedKB(p.rssAbove()),
					kb(p.files.apply.maxRSS()), kb(p.base.apply.maxRSS())),
				pass: p.rssAbove() <= allow && p.files.apply.maxRSS() > 0 && p.base.apply.maxRSS() > 0,
			})
		}
	}
	if len(r.files) == 0 {
		out = append(out, notMeasured("files: gateway requests per member, upload + result read", "≤ parts + 2", "-file-n 200,1000"))
	}
	for _, p := range r.files {
		for _, f := range []*fileFigures{p.base, p.files} {
			if !f.sane() {
				out = append(out, verdict{name: fmt.Sprintf("sanity (%s)", f.name()),
					target: "N live, every result read and in state, task data intact, plan exit 0, 0 after destroy",
					value: fmt.Sprintf("%d live, %d results in state, %d of %d result reads with the result, data intact on %d of %d checked, plan exit %d, %d after destroy",
						f.liveAfterApply, f.resultsInState, f.split.resultReadsOK, f.split.resultReads, f.spotOK, f.spotChecked,
						f.plan.res.ExitCode, f.liveAfterDestroy)})
			}
		}
	}
	return out
}

// jobVerdicts judges the background-job runs: status requests per poll
// round, job end → seen, and what the job added to the apply.
func jobVerdicts(r *report, c benchConfig) []verdict {
	var out []verdict
	if len(r.jobs) == 0 {
		return append(out, notMeasured("background jobs N=1000", "status requests, end → seen, apply overhead", "-job-n 1000"))
	}
	for _, p := range r.jobs {
		j := p.worstPerRound()
		bound := batchesPerRound(p.n)
		out = append(out, verdict{
			name:   fmt.Sprintf("background jobs N=%d: status requests per poll round (first job start → last job end)", p.n),
			target: fmt.Sprintf("≤ 1.2 × ⌈N/100⌉ = %.1f", bound),
			value: fmt.Sprintf("%.2f (the worse of %d job runs: %d requests, %d rounds in %s at %s; %s)", j.perRound(), len(p.jobRuns()),
				j.statusInWindow, j.allowedRounds, secs(j.window()), jobPollInterval, roundsNote(j.rounds)),
			pass: j.statusInWindow > 0 && j.perRound() <= bound+1e-9 && float64(maxInt(j.rounds)) <= bound+1e-9,
		})
		j = p.worstSeen()
		out = append(out, verdict{
			name:   fmt.Sprintf("background jobs N=%d: job end → seen by the provider, median", p.n),
			target: "≤ 1 s",
			value: fmt.Sprintf("%s (the worse of %d job runs: p95 %s, max %s, n=%d, %d never seen)", ms(j.seen.median), len(p.jobRuns()),
				ms(j.seen.p95), ms(j.seen.max), j.seen.n, j.seen.missing),
			pass: j.seen.n == p.n && j.seen.missing == 0 && j.seen.median <= time.Second,
		})
		out = append(out, verdict{
			name:   fmt.Sprintf("background jobs N=%d: apply time the job adds (vs. a foreground no-op agent)", p.n),
			target: fmt.Sprintf("≤ the job's %s + 2 s = %s", secs(p.allowed()-2*time.Second), secs(p.allowed())),
			value: fmt.Sprintf("%s (fastest of %d runs each: %s with the job, %s without; from the fleet ready on, %s)",
				secs3(p.added()), jobRepeats, secs(fastest(p.jobRuns()).apply.res.Duration), secs(fastest(p.baselines()).apply.res.Duration),
				secs(p.addedAfterReady())),
			pass: p.added() <= p.allowed(),
		})
		for _, f := range p.runs {
			if !f.sane() {
				out = append(out, verdict{name: fmt.Sprintf("sanity (%s)", f.name()),
					target: "N live, N results (exit 0, output \"done\"), every job seen; first runs: plan exit 0, 0 after destroy",
					value: fmt.Sprintf("%d live, %d results, %d jobs ended, %d never seen, plan exit %d, %d after destroy",
						f.liveAfterApply, f.results, len(f.jobs.ends), f.seen.missing, f.plan.res.ExitCode, f.liveAfterDestroy)})
			}
		}
	}
	_ = c
	return out
}

// signedKB is kb for a difference ("+1.5 MiB", "-0.7 MiB").
func signedKB(v int64) string {
	sign := "+"
	if v < 0 {
		sign, v = "−", -v
	}
	return fmt.Sprintf("%s%.1f MiB", sign, float64(v)/1024)
}

// secs3 is seconds to the millisecond, for a figure judged against a
// bound it may be close to.
func secs3(d time.Duration) string { return fmt.Sprintf("%.3f s", d.Seconds()) }
