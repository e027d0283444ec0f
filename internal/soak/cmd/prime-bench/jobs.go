package main

// The background-job run: one prime_sandbox_fleet of N members whose agent
// (a prime_fleet_command with background = true) is a job of JOB_SECONDS
// of mock time, beside the same fleet with a foreground no-op agent, in
// the same invocation. Both run behind the recording proxy (trace.go), so
// every background-jobs status:batchGet is timed and its answer read.

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
}

// agentPart is the apply's time after the fleet was ready: the last
// readiness probe answered → terraform exited.
func (f *jobFigures) agentPart() time.Duration {
	return span(f.lastProbe, f.apply.res.Start.Add(f.apply.res.Duration))
}

func (f *jobFigures) name() string {
	if f.background {
		return fmt.Sprintf("background jobs N=%d", f.n)
	}
	return fmt.Sprintf("foreground no-op N=%d", f.n)
}

func (f *jobFigures) sane() bool {
	ok := f.planEmpty && f.liveAfterApply == f.n && f.liveAfterDestroy == 0 && f.results == f.n
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

// jobPair is the background run between two runs of its foreground
// baseline (before and after: on a shared machine a load spike in one of
// them shows as a difference between the two).
type jobPair struct {
	n                   int
	noop, job, noopThen *jobFigures
}

// base is the baseline run the job is compared with: the faster of the
// two, so a load spike in a baseline cannot make the job look cheaper.
func (p *jobPair) base() *jobFigures {
	if p.noopThen != nil && p.noopThen.apply.res.Duration < p.noop.apply.res.Duration {
		return p.noopThen
	}
	return p.noop
}

// added is what the job added to the apply.
func (p *jobPair) added() time.Duration {
	return p.job.apply.res.Duration - p.base().apply.res.Duration
}

// addedAfterReady is the same from the fleet's readiness on (the
// fleet's boot, common to both, left out).
func (p *jobPair) addedAfterReady() time.Duration { return p.job.agentPart() - p.base().agentPart() }

// baselines are the baseline runs, in order.
func (p *jobPair) baselines() []*jobFigures {
	if p.noopThen == nil {
		return []*jobFigures{p.noop}
	}
	return []*jobFigures{p.noop, p.noopThen}
}

// allowed is the target: the job's own length + 2 s.
func (p *jobPair) allowed() time.Duration { return p.job.jobWall + 2*time.Second }

func jobRunPair(c benchConfig, n int) (*jobPair, error) {
	p := &jobPair{n: n}
	for i, bg := range []bool{false, true, false} {
		what := "foreground no-op agent (baseline, before)"
		if i == 2 {
			what = "foreground no-op agent (baseline, after)"
		}
		if bg {
			what = fmt.Sprintf("background job of %d s of mock time (sleep_scale %g: %s of wall time)", c.jobSeconds, c.jobScale,
				secs(time.Duration(float64(c.jobSeconds)*c.jobScale*float64(time.Second))))
		}
		fmt.Printf("\n=== jobs N=%d, %s: latency %s, boot %s, gateway lag %s, behind the recording proxy\n", n, what, c.latency, c.boot, c.gatewayLag)
		f, err := jobRun(c, n, bg)
		if err != nil {
			return nil, fmt.Errorf("job run N=%d (background %t): %w (work directory %s)", n, bg, err, c.workdir)
		}
		switch {
		case bg:
			p.job = f
		case i == 0:
			p.noop = f
		default:
			p.noopThen = f
		}
	}
	printJobPair(p)
	return p, nil
}

func jobRun(c benchConfig, n int, background bool) (*jobFigures, error) {
	ctx := context.Background()
	name := fmt.Sprintf("jobs-n%d-noop", n)
	if background {
		name = fmt.Sprintf("jobs-n%d", n)
	}
	env, err := newRunEnv(c, name, "-sleep-scale", strconv.FormatFloat(c.jobScale, 'g', -1, 64))
	if err != nil {
		return nil, err
	}
	defer env.Close()
	tr, err := startTracer(env.mock.URL)
	if err != nil {
		return nil, err
	}
	defer tr.Close()
	f := &jobFigures{n: n, background: background}
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
		if e.Type == primemock.EventCommandExecuted && e.Command == gatewayProbe && e.Time.After(f.lastProbe) {
			f.lastProbe = e.Time
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
	f.reacted = newDurStats(readDelays(f.jobs))
}

// agentResults counts the agent's results with exit code 0 and the
// agent's output ("done").
func agentResults(state []soak.StateResource) int {
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
	j, b := p.job, p.base()
	var walls []string
	for _, f := range p.baselines() {
		walls = append(walls, secs(f.apply.res.Duration))
	}
	fmt.Printf("\njobs N=%d: apply %s with the job, %s with the no-op agent (the faster of %s): the job added %s (allowed %s); from the fleet ready on %s vs %s: %s\n",
		p.n, secs(j.apply.res.Duration), secs(b.apply.res.Duration), strings.Join(walls, ", "), secs(p.added()), secs(p.allowed()),
		secs(j.agentPart()), secs(b.agentPart()), secs(p.addedAfterReady()))
	fmt.Printf("         job starts spread over %s, ends over %s; window (first start → last end) %s\n",
		secs(j.startSpread), secs(j.endSpread), secs(j.window()))
	fmt.Printf("         status requests in the window %d (%d in the apply): %.2f per round over %d rounds the interval allows (bound %.1f); %s\n",
		j.statusInWindow, j.statusAll, j.perRound(), j.allowedRounds, batchesPerRound(p.n), roundsNote(j.rounds))
	fmt.Printf("         job end → status answer reporting it: %s; → output read started: %s\n", j.seen, j.reacted)
	fmt.Printf("         results %d/%d; provider peak RSS %s (no-op %s); plan exit %d; destroy %s\n",
		j.results, p.n, kb(j.apply.maxRSS()), kb(b.apply.maxRSS()), j.plan.res.ExitCode, secs(j.destroy.res.Duration))
}
