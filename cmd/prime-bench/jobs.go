package main

// The background-job run: one prime_sandbox_fleet of N members whose agent
// (a prime_fleet_command with background = true) is a job of JOB_SECONDS
// of mock time, beside the same fleet with a foreground no-op agent, in
// the same invocation. Both run with their API requests through the
// recording proxy (trace.go), so every background-jobs status:batchGet is
// timed and its answer read; the gateway is reached directly.

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
	"github.com/primeintellect/terraform-provider-prime/internal/soak"
	"github.com/primeintellect/terraform-provider-prime/internal/tfcli"
)

// jobBatchRoute is the background-jobs status:batchGet in the mock's stats.
const jobBatchRoute = "POST " + jobBatchPath

// jobPollInterval is the provider's job poll interval (its default,
// prime.DefaultJobPollInterval; the provider block does not change it).
const jobPollInterval = prime.DefaultJobPollInterval

// jobCommand is the background agent: seconds of mock time (sleep_scale
// applies), then a line of output.
func jobCommand(seconds int) string { return fmt.Sprintf("sleep %d && echo done", seconds) }

// noopCommand is the foreground agent of the baseline.
const noopCommand = "echo done"

// jobExitFile finds a job's id in its background process's script (the
// provider's wrapper writes /tmp/job_<id>.exit last).
var jobExitFile = regexp.MustCompile(`/tmp/job_([0-9a-f]{8})\.exit`)

// jobOutputRead finds the job whose output tails a command reads.
var jobOutputRead = regexp.MustCompile(`^tail -c \d+ -- /tmp/job_([0-9a-f]{8})\.stdout\.log`)

// jobEvents are the background processes' starts and ends (the mock's
// command_started / command_executed with transport background), and the
// start of the command reading each job's output, by jobKey.
type jobEvents struct {
	starts, ends, reads map[string]time.Time
}

func jobEventsOf(evs []primemock.Event) jobEvents {
	j := jobEvents{starts: map[string]time.Time{}, ends: map[string]time.Time{}, reads: map[string]time.Time{}}
	for _, e := range evs {
		if e.Transport == "connect" && e.Type == primemock.EventCommandStarted {
			if m := jobOutputRead.FindStringSubmatch(e.Command); m != nil {
				if _, seen := j.reads[jobKey(e.SandboxID, m[1])]; !seen {
					j.reads[jobKey(e.SandboxID, m[1])] = e.Time
				}
			}
			continue
		}
		if e.Transport != "background" {
			continue
		}
		m := jobExitFile.FindStringSubmatch(e.Command)
		if m == nil {
			continue
		}
		k := jobKey(e.SandboxID, m[1])
		switch e.Type {
		case primemock.EventCommandStarted:
			j.starts[k] = e.Time
		case primemock.EventCommandExecuted:
			j.ends[k] = e.Time
		}
	}
	return j
}

// window is the first job start and the last job end.
func (j jobEvents) window() (first, last time.Time) {
	for _, t := range j.starts {
		if first.IsZero() || t.Before(first) {
			first = t
		}
	}
	for _, t := range j.ends {
		if t.After(last) {
			last = t
		}
	}
	return first, last
}

// spread is the time from the earliest to the latest of ts.
func spread(ts map[string]time.Time) time.Duration {
	var a, b time.Time
	for _, t := range ts {
		if a.IsZero() || t.Before(a) {
			a = t
		}
		if t.After(b) {
			b = t
		}
	}
	return span(a, b)
}

// seenDelays is, for every job that ended, the time from its end to the
// end of the first status answer that reported it completed (what the
// provider learned it from); missing counts ended jobs no answer reported.
func seenDelays(ends map[string]time.Time, recs []traceRec) (ds []time.Duration, missing int) {
	first := map[string]time.Time{}
	for _, r := range recs {
		for _, k := range r.Done {
			if t, ok := first[k]; !ok || r.End.Before(t) {
				first[k] = r.End
			}
		}
	}
	for k, end := range ends {
		t, ok := first[k]
		if !ok {
			missing++
			continue
		}
		ds = append(ds, t.Sub(end))
	}
	return ds, missing
}

// lastSeen is the latest first report of a completed job among the ended
// ones: when the provider had the last of them.
func lastSeen(ends map[string]time.Time, recs []traceRec) time.Time {
	first := map[string]time.Time{}
	for _, r := range recs {
		for _, k := range r.Done {
			if t, ok := first[k]; !ok || r.End.Before(t) {
				first[k] = r.End
			}
		}
	}
	var last time.Time
	for k := range ends {
		if t, ok := first[k]; ok && t.After(last) {
			last = t
		}
	}
	return last
}

// readDelays is, for every job that ended, the time from its end to the
// start of the command reading its output: when the provider acted on the
// news (an upper bound of when it learned it, from the mock's events alone).
func readDelays(j jobEvents) (ds []time.Duration, missing int) {
	for k, end := range j.ends {
		t, ok := j.reads[k]
		if !ok {
			missing++
			continue
		}
		ds = append(ds, t.Sub(end))
	}
	return ds, missing
}

// pollRounds groups request start times into poll rounds: a round's
// requests are sent together (all its chunks at once), so a gap longer
// than gap starts a new round. It returns each round's size, in order.
func pollRounds(starts []time.Time, gap time.Duration) []int {
	ts := slices.Clone(starts)
	slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
	var rounds []int
	for i, t := range ts {
		if i == 0 || t.Sub(ts[i-1]) > gap {
			rounds = append(rounds, 0)
		}
		rounds[len(rounds)-1]++
	}
	return rounds
}

// roundsIn is the most poll rounds a window can hold at one round per
// interval: ⌊window/interval⌋ + 1.
func roundsIn(window, interval time.Duration) int {
	if window < 0 || interval <= 0 {
		return 0
	}
	return int(window/interval) + 1
}

// batchesPerRound is the target's bound on one round's requests:
// 1.2 × ⌈N/100⌉.
func batchesPerRound(n int) float64 { return 1.2 * float64(roundUp(n, prime.MaxBatchJobs)) }

// jobFigures is one run of the job pair.
type jobFigures struct {
	n          int
	background bool
	// round counts the pair's repeats from 1; only the first plans again
	// and destroys.
	round      int
	jobSeconds int
	// jobWall is the job's length in wall time: jobSeconds × sleep_scale.
	jobWall time.Duration
	apply   phase
	plan    phase
	destroy phase
	// planEmpty: the plan after the apply exited 0.
	planEmpty        bool
	liveAfterApply   int
	liveAfterDestroy int
	// results counts the agent's results in state with exit code 0 and
	// its output.
	results int
	// Background only.
	jobs                      jobEvents
	firstStart, lastEnd       time.Time
	statusInWindow, statusAll int
	rounds                    []int // counted from the proxy's timestamps, in the window
	allowedRounds             int   // roundsIn(window, interval)
	seen, reacted             durStats
	batchSizes                []int // jobs per request, in the window
	startSpread, endSpread    time.Duration
	// lastProbe is the fleet's last readiness probe answered: the fleet is
	// ready, and what follows is the agent's part of the apply.
	lastProbe time.Time
	// firstAgent is the agent's first gateway command (the job's start,
	// or the no-op) and lastAgent the end of its last (the last job's
	// output read, or the last no-op).
	firstAgent, lastAgent time.Time
	// firstCreated is the fleet's first sandbox_created.
	firstCreated time.Time
	// lastStart and lastSeen are the last job's start and the last answer
	// that reported a job completed for the first time.
	lastStart, lastSeen time.Time
}

// jobSteps splits the background agent's commands: the starts (first →
// last), the last job (→ the last end), the poll (→ the last job seen),
// the output reads (→ the end of the last).
func (f *jobFigures) jobSteps() (starts, last, poll, reads time.Duration) {
	return span(f.firstAgent, f.lastStart), span(f.lastStart, f.lastEnd), span(f.lastEnd, f.lastSeen), span(f.lastSeen, f.lastAgent)
}

// fleetSteps splits the apply before agentPart: Terraform's plan walk and
// the provider's start (apply start → first sandbox created), and the
// fleet's creation (→ the last readiness probe answered).
func (f *jobFigures) fleetSteps() (before, fleet time.Duration) {
	return span(f.apply.res.Start, f.firstCreated), span(f.firstCreated, f.lastProbe)
}

// agentSteps splits agentPart: Terraform moving from the fleet to the
// agent (last probe → the agent's first command), the agent's commands
// (→ the end of its last), and the rest (→ terraform's exit).
func (f *jobFigures) agentSteps() (moveOn, agent, rest time.Duration) {
	return span(f.lastProbe, f.firstAgent), span(f.firstAgent, f.lastAgent), span(f.lastAgent, f.apply.res.Start.Add(f.apply.res.Duration))
}

// agentPart is the apply's time after the fleet was ready: the last
// readiness probe answered → terraform exited.
func (f *jobFigures) agentPart() time.Duration {
	return span(f.lastProbe, f.apply.res.Start.Add(f.apply.res.Duration))
}

func (f *jobFigures) name() string {
	if f.background {
		return fmt.Sprintf("background jobs N=%d, run %d", f.n, f.round)
	}
	return fmt.Sprintf("foreground no-op N=%d, run %d", f.n, f.round)
}

func (f *jobFigures) sane() bool {
	ok := f.liveAfterApply == f.n && f.results == f.n && (f.round > 1 || f.planEmpty && f.liveAfterDestroy == 0)
	if f.background {
		ok = ok && len(f.jobs.ends) == f.n && f.seen.missing == 0
	}
	return ok
}

// window is the first job start → last job end.
func (f *jobFigures) window() time.Duration { return span(f.firstStart, f.lastEnd) }

// perRound is the mean number of status requests per round the window
// allows at the poll interval.
func (f *jobFigures) perRound() float64 {
	return float64(f.statusInWindow) / float64(max(1, f.allowedRounds))
}

// jobPair is the background run and its foreground baseline, each run
// twice, alternately (baseline, job, baseline, job): on this shared
// machine one 1000-member apply moved by seconds under another agent's
// load, and the alternation spreads such a spike over both.
type jobPair struct {
	n    int
	runs []*jobFigures // in the order they ran
}

// jobRepeats is how many times each of the pair runs.
const jobRepeats = 2

func (p *jobPair) of(background bool) []*jobFigures {
	var out []*jobFigures
	for _, f := range p.runs {
		if f.background == background {
			out = append(out, f)
		}
	}
	return out
}

func (p *jobPair) baselines() []*jobFigures { return p.of(false) }
func (p *jobPair) jobRuns() []*jobFigures   { return p.of(true) }

// fastest is the run whose apply took least: the least disturbed.
func fastest(fs []*jobFigures) *jobFigures {
	var best *jobFigures
	for _, f := range fs {
		if best == nil || f.apply.res.Duration < best.apply.res.Duration {
			best = f
		}
	}
	return best
}

// added is what the job added to the apply: the fastest job run minus
// the fastest baseline run.
func (p *jobPair) added() time.Duration {
	return fastest(p.jobRuns()).apply.res.Duration - fastest(p.baselines()).apply.res.Duration
}

// addedAfterReady is the same from the fleet's readiness on (the
// fleet's boot, common to both, left out), of the same two runs.
func (p *jobPair) addedAfterReady() time.Duration {
	return fastest(p.jobRuns()).agentPart() - fastest(p.baselines()).agentPart()
}

// allowed is the target: the job's own length + 2 s.
func (p *jobPair) allowed() time.Duration { return p.jobRuns()[0].jobWall + 2*time.Second }

// worstPerRound and worstSeen are the job runs' worst figures.
func (p *jobPair) worstPerRound() *jobFigures {
	var w *jobFigures
	for _, f := range p.jobRuns() {
		if w == nil || f.perRound() > w.perRound() || float64(maxInt(f.rounds)) > float64(maxInt(w.rounds)) {
			w = f
		}
	}
	return w
}

func (p *jobPair) worstSeen() *jobFigures {
	var w *jobFigures
	for _, f := range p.jobRuns() {
		if w == nil || f.seen.missing > w.seen.missing || f.seen.median > w.seen.median {
			w = f
		}
	}
	return w
}

func jobRunPair(c benchConfig, n int) (*jobPair, error) {
	p := &jobPair{n: n}
	for i := range 2 * jobRepeats {
		bg, round := i%2 == 1, i/2+1
		what := fmt.Sprintf("foreground no-op agent (baseline), run %d of %d", round, jobRepeats)
		if bg {
			what = fmt.Sprintf("background job of %d s of mock time (sleep_scale %g: %s of wall time), run %d of %d", c.jobSeconds, c.jobScale,
				secs(time.Duration(float64(c.jobSeconds)*c.jobScale*float64(time.Second))), round, jobRepeats)
		}
		fmt.Printf("\n=== jobs N=%d, %s: latency %s, boot %s, gateway lag %s, API through the recording proxy\n", n, what, c.latency, c.boot, c.gatewayLag)
		f, err := jobRun(c, n, bg, round)
		if err != nil {
			return nil, fmt.Errorf("job run N=%d (background %t, run %d): %w (work directory %s)", n, bg, round, err, c.workdir)
		}
		p.runs = append(p.runs, f)
	}
	printJobPair(p)
	return p, nil
}

// jobRun runs one of the pair; the first round also plans again (which
// must be empty) and destroys, the later ones only apply (each mock and
// workspace goes with its run).
func jobRun(c benchConfig, n int, background bool, round int) (*jobFigures, error) {
	ctx := context.Background()
	name := fmt.Sprintf("jobs-n%d-noop-%d", n, round)
	if background {
		name = fmt.Sprintf("jobs-n%d-job-%d", n, round)
	}
	env, err := newRunEnv(c, name, "-sleep-scale", strconv.FormatFloat(c.jobScale, 'g', -1, 64))
	if err != nil {
		return nil, err
	}
	defer env.Close()
	tr, err := startTracer(env.mock.URL, true)
	if err != nil {
		return nil, err
	}
	defer tr.Close()
	f := &jobFigures{n: n, background: background, round: round}
	tf := soak.TaskFleet{N: n, BaseURL: tr.URL, ProviderExtra: c.providerExtra, Prefix: "bench", Command: noopCommand, MaxConcurrency: n}
	if background {
		f.jobSeconds = c.jobSeconds
		f.jobWall = time.Duration(float64(c.jobSeconds) * c.jobScale * float64(time.Second))
		tf.Command, tf.Background = jobCommand(c.jobSeconds), true
	}
	if err := env.ws.WriteConfig(tf.HCL()); err != nil {
		return nil, err
	}
	if err := env.warmUp(ctx); err != nil {
		return nil, err
	}
	if f.apply, err = env.run(ctx, "apply", "apply", "-auto-approve", "-input=false"); err != nil {
		return nil, err
	}
	if !f.apply.res.OK() {
		fmt.Println(f.apply.res.Tail(4000))
		env.ws.Run(ctx, "destroy", "-auto-approve", "-input=false")
		return nil, fmt.Errorf("apply failed: %s", f.apply.res.Describe())
	}
	f.liveAfterApply = f.apply.stats.LiveSandboxes
	f.analyse(tr.since(f.apply.res.Start))
	state, err := env.ws.State(ctx)
	if err != nil {
		return nil, err
	}
	f.results = agentResults(state)
	if round > 1 {
		return f, nil
	}
	if f.plan, err = env.run(ctx, "plan", "plan", "-detailed-exitcode", "-input=false"); err != nil {
		return nil, err
	}
	f.planEmpty = f.plan.res.OK()
	if !f.planEmpty {
		fmt.Println(f.plan.res.Tail(3000))
	}
	if f.destroy, err = env.run(ctx, "destroy", "destroy", "-auto-approve", "-input=false"); err != nil {
		return nil, err
	}
	if !f.destroy.res.OK() {
		fmt.Println(f.destroy.res.Tail(4000))
		return nil, fmt.Errorf("destroy failed: %s", f.destroy.res.Describe())
	}
	f.liveAfterDestroy = f.destroy.stats.LiveSandboxes
	return f, nil
}

// analyse derives the background figures from the apply's events and the
// proxy's records.
func (f *jobFigures) analyse(recs []traceRec) {
	f.statusAll = f.apply.requests[jobBatchRoute]
	for _, e := range f.apply.events {
		if e.Type == primemock.EventSandboxCreated && (f.firstCreated.IsZero() || e.Time.Before(f.firstCreated)) {
			f.firstCreated = e.Time
		}
		if e.Transport != "connect" {
			continue
		}
		agent := e.Command == noopCommand || strings.HasPrefix(e.Command, "nohup setsid sh -c ") || jobOutputRead.MatchString(e.Command)
		switch {
		case e.Type == primemock.EventCommandExecuted && e.Command == gatewayProbe && e.Time.After(f.lastProbe):
			f.lastProbe = e.Time
		case agent && e.Type == primemock.EventCommandStarted && (f.firstAgent.IsZero() || e.Time.Before(f.firstAgent)):
			f.firstAgent = e.Time
		case agent && e.Type == primemock.EventCommandExecuted && e.Time.After(f.lastAgent):
			f.lastAgent = e.Time
		}
	}
	if !f.background {
		return
	}
	f.jobs = jobEventsOf(f.apply.events)
	f.firstStart, f.lastEnd = f.jobs.window()
	f.startSpread, f.endSpread = spread(f.jobs.starts), spread(f.jobs.ends)
	var inWindow []time.Time
	for _, r := range recs {
		if r.Path != jobBatchPath {
			continue
		}
		if !r.Start.Before(f.firstStart) && !r.Start.After(f.lastEnd) {
			inWindow = append(inWindow, r.Start)
			f.batchSizes = append(f.batchSizes, len(r.Jobs))
		}
	}
	f.statusInWindow = len(inWindow)
	f.rounds = pollRounds(inWindow, jobPollInterval/2)
	f.allowedRounds = roundsIn(f.window(), jobPollInterval)
	f.seen = newDurStats(seenDelays(f.jobs.ends, recs))
	for _, t := range f.jobs.starts {
		if t.After(f.lastStart) {
			f.lastStart = t
		}
	}
	f.lastSeen = lastSeen(f.jobs.ends, recs)
	f.reacted = newDurStats(readDelays(f.jobs))
}

// agentResults counts the agent's results with exit code 0 and the
// agent's output ("done").
func agentResults(state []tfcli.StateResource) int {
	for _, r := range state {
		if r.Address != soak.AgentFleetAddr {
			continue
		}
		results, _ := r.Values["results"].(map[string]any)
		n := 0
		for _, v := range results {
			e, _ := v.(map[string]any)
			steps, _ := e["steps"].([]any)
			if code, _ := e["exit_code"].(float64); code != 0 || len(steps) != 1 {
				continue
			}
			if s, _ := steps[0].(map[string]any); s != nil && strings.TrimSpace(fmt.Sprint(s["stdout"])) == "done" {
				n++
			}
		}
		return n
	}
	return 0
}

func maxInt(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

func meanInt(xs []int) float64 {
	if len(xs) == 0 {
		return 0
	}
	t := 0
	for _, x := range xs {
		t += x
	}
	return float64(t) / float64(len(xs))
}

// roundsNote is "R rounds counted, mean M, max X requests".
func roundsNote(rounds []int) string {
	return fmt.Sprintf("%d rounds counted from the request times: %.1f requests per round on average, at most %d", len(rounds), meanInt(rounds), maxInt(rounds))
}

func printJobPair(p *jobPair) {
	var walls []string
	for _, f := range p.runs {
		walls = append(walls, fmt.Sprintf("%s %s", f.name(), secs(f.apply.res.Duration)))
	}
	fmt.Printf("\njobs N=%d: %s\n         the job added %s (fastest job run − fastest baseline; allowed %s); from the fleet ready on %s\n",
		p.n, strings.Join(walls, ", "), secs3(p.added()), secs(p.allowed()), secs(p.addedAfterReady()))
	for _, f := range p.runs {
		a, b, c := f.agentSteps()
		x, y := f.fleetSteps()
		fmt.Printf("         %s: apply start → first sandbox %s, → fleet ready %s, → agent's first command %s, its commands %s, → exit %s\n",
			f.name(), secs(x), secs(y), secs(a), secs(b), secs(c))
		if !f.background {
			continue
		}
		st, lj, po, rd := f.jobSteps()
		fmt.Printf("           the job's commands: starts %s, last start → last end %s, → last seen %s, → last output read %s\n",
			secs(st), secs(lj), secs(po), secs(rd))
		fmt.Printf("           status requests in the window %d (%d in the apply): %.2f per round over %d rounds the interval allows (bound %.1f); %s\n",
			f.statusInWindow, f.statusAll, f.perRound(), f.allowedRounds, batchesPerRound(p.n), roundsNote(f.rounds))
		fmt.Printf("           job end → status answer reporting it: %s; → output read started: %s; provider peak RSS %s\n",
			f.seen, f.reacted, kb(f.apply.maxRSS()))
	}
}
