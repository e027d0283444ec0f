package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
	"github.com/primeintellect/terraform-provider-prime/internal/soak"
)

type benchConfig struct {
	bin           string
	terraform     string
	n, refreshN   int
	p             int
	latency       time.Duration
	jitter        time.Duration
	boot, apply   time.Duration
	seed          int64
	providerExtra string
	out           string
	workdir       string
	keep          bool
	trace         bool
	providerBin   string
	providerEnv   []string
	argv          []string
}

func benchMain(args []string) error {
	var c benchConfig
	fs := flag.NewFlagSet("prime-bench bench", flag.ContinueOnError)
	fs.StringVar(&c.bin, "bin", "bin", "directory holding terraform-provider-prime and prime-mock")
	fs.StringVar(&c.terraform, "terraform", envOr("TF_CLI", "terraform"), "Terraform CLI")
	fs.IntVar(&c.n, "n", 200, "sandboxes in the fleet (each with an egress policy: 2N resources)")
	fs.IntVar(&c.refreshN, "refresh-n", 250, "a second run with this many sandboxes (2×refresh-n resources to refresh); 0 or = n: none")
	fs.IntVar(&c.p, "parallelism", 50, "terraform -parallelism for apply, plan and destroy")
	fs.DurationVar(&c.latency, "latency", 5*time.Millisecond, "mock latency per API request")
	fs.DurationVar(&c.jitter, "jitter", 0, "mock latency jitter [0, jitter)")
	fs.DurationVar(&c.boot, "boot", 2*time.Second, "mock boot delay (PENDING + PROVISIONING)")
	fs.DurationVar(&c.apply, "apply", time.Second, "mock egress apply delay")
	fs.Int64Var(&c.seed, "seed", 1, "mock random seed")
	fs.StringVar(&c.providerExtra, "provider-config", "", "extra provider block attributes, e.g. 'max_requests_per_second = 0' (default: provider defaults)")
	fs.StringVar(&c.out, "out", "BENCHMARKS.md", "markdown report to (over)write; empty: none")
	fs.StringVar(&c.workdir, "workdir", "", "work directory (default: a temporary one, removed unless -keep)")
	fs.BoolVar(&c.keep, "keep", false, "keep the work directory (terraform logs, state)")
	fs.BoolVar(&c.trace, "trace", false, "analysis: put a recording proxy between provider and mock and print each sandbox's chain breakdown (adds a hop; not for headline figures)")
	fs.StringVar(&c.providerBin, "provider", "", "provider binary (default BIN/terraform-provider-prime)")
	fs.Func("provider-env", "KEY=VALUE added to the provider's environment (repeatable)", func(s string) error {
		if !strings.Contains(s, "=") {
			return errors.New("want KEY=VALUE")
		}
		c.providerEnv = append(c.providerEnv, s)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return err
	}
	if c.n < 1 || c.p < 1 {
		return errors.New("-n and -parallelism must be at least 1")
	}
	c.argv = os.Args
	if c.workdir == "" {
		d, err := os.MkdirTemp("", "prime-bench-")
		if err != nil {
			return err
		}
		c.workdir = d
		if !c.keep {
			defer func() { _ = os.RemoveAll(d) }()
		}
	}
	mach := machineFacts(c.terraform)
	ns := []int{c.n}
	if c.refreshN > 0 && c.refreshN != c.n {
		ns = append(ns, c.refreshN)
	}
	var runs []*runFigures
	for _, n := range ns {
		fmt.Printf("\n=== bench run: N=%d sandboxes + %d policies (%d resources), -parallelism=%d, latency %s, boot %s, apply %s\n",
			n, n, 2*n, c.p, c.latency, c.boot, c.apply)
		f, err := benchRun(c, n)
		if err != nil {
			return fmt.Errorf("bench run with N=%d: %w (work directory %s)", n, err, c.workdir)
		}
		runs = append(runs, f)
		printRun(f, c)
	}
	mach.loadEnd = loadAvg()
	verdicts := evaluate(runs, c)
	fmt.Println()
	for _, v := range verdicts {
		fmt.Println(v.line())
	}
	if c.out != "" {
		//nolint:gosec // BENCHMARKS.md is a documentation file of the repository, readable by all.
		if err := os.WriteFile(c.out, []byte(markdown(c, mach, runs, verdicts)), 0o644); err != nil {
			return err
		}
		fmt.Printf("\nwrote %s\n", c.out)
	}
	if c.keep {
		fmt.Printf("work directory kept: %s\n", c.workdir)
	}
	return nil
}

func envOr(k, d string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return d
}

// phase is one Terraform command with the mock's counters around it.
type phase struct {
	res      soak.Result
	requests map[string]int // /api/v1 requests during the phase, by route
	events   []primemock.Event
	rss      []rssRecord
	stats    primemock.Stats // after
}

func (p phase) apiTotal() int {
	t := 0
	for k, v := range p.requests {
		if strings.Contains(k, "/api/v1") {
			t += v
		}
	}
	return t
}

// providerCPU sums the CPU time of the phase's provider processes.
func (p phase) providerCPU() time.Duration {
	var ms int64
	for _, r := range p.rss {
		ms += r.CPUMS
	}
	return time.Duration(ms) * time.Millisecond
}

// cpuNote is "terraform X + provider Y CPU seconds".
func (p phase) cpuNote() string {
	prov := p.providerCPU()
	return fmt.Sprintf("terraform %s + provider %s", secs(max(0, p.res.CPU-prov)), secs(prov))
}

func (p phase) maxRSS() int64 {
	var m int64
	for _, r := range p.rss {
		m = max(m, r.MaxRSSKB)
	}
	return m
}

type runFigures struct {
	N, P                     int
	apply, refresh, plan     phase
	destroy                  phase
	planEmpty, refreshEmpty  bool
	W, limit                 time.Duration
	Wd, destroyLimit         time.Duration
	span                     time.Duration // first sandbox_created → last policy_observed
	beforeFirst, afterLast   time.Duration
	obs                      durStats // policy_applied → policy_observed
	runToPut                 durStats // sandbox_running → policy_put
	putToObs                 durStats // policy_put → policy_observed
	createdSpread            time.Duration
	liveAfterApply, appliedN int
	liveAfterDestroy         int
	destroyObs               durStats
	trace                    string // -trace breakdown of the apply
}

type durStats struct {
	n                int
	median, p95, max time.Duration
	missing          int
}

func newDurStats(ds []time.Duration, missing int) durStats {
	s := durStats{n: len(ds), missing: missing}
	if len(ds) == 0 {
		return s
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	s.median = percentile(ds, 0.5)
	s.p95 = percentile(ds, 0.95)
	s.max = ds[len(ds)-1]
	return s
}

// percentile is the nearest-rank percentile of sorted ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p*float64(len(ds)))) - 1
	return ds[max(0, min(i, len(ds)-1))]
}

func (s durStats) String() string {
	if s.n == 0 {
		return "n/a"
	}
	out := fmt.Sprintf("median %s, p95 %s, max %s (n=%d)", ms(s.median), ms(s.p95), ms(s.max), s.n)
	if s.missing > 0 {
		out += fmt.Sprintf(", %d never observed", s.missing)
	}
	return out
}

func ms(d time.Duration) string {
	if d < 10*time.Second {
		return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
	}
	return secs(d)
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

func benchRun(c benchConfig, n int) (*runFigures, error) {
	ctx := context.Background()
	mock, err := soak.StartMockProcess(filepath.Join(c.bin, "prime-mock"),
		"-boot-delay", c.boot.String(), "-apply-delay", c.apply.String(),
		"-latency", c.latency.String(), "-latency-jitter", c.jitter.String(),
		"-seed", strconv.FormatInt(c.seed, 10))
	if err != nil {
		return nil, err
	}
	defer mock.Close()
	fmt.Printf("prime-mock (pid %d) at %s\n", mock.PID(), mock.URL)

	// The provider is started through a symlink to this binary that records
	// its peak RSS (wrap.go).
	runDir := filepath.Join(c.workdir, fmt.Sprintf("n%d", n))
	wrapDir := filepath.Join(runDir, "provider")
	if err := os.MkdirAll(wrapDir, 0o750); err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	if err := os.Symlink(self, filepath.Join(wrapDir, "terraform-provider-prime")); err != nil {
		return nil, err
	}
	providerPath := c.providerBin
	if providerPath == "" {
		providerPath = filepath.Join(c.bin, "terraform-provider-prime")
	}
	provider, err := filepath.Abs(providerPath)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(provider); err != nil {
		return nil, fmt.Errorf("provider binary: %w (run make build)", err)
	}
	rssLog := filepath.Join(runDir, "rss.jsonl")
	ws, err := soak.NewWorkspace(filepath.Join(runDir, "tf"), c.terraform, wrapDir,
		append([]string{wrapTargetEnv + "=" + provider, wrapLogEnv + "=" + rssLog}, c.providerEnv...)...)
	if err != nil {
		return nil, err
	}
	base := mock.URL
	var tr *tracer
	if c.trace {
		if tr, err = startTracer(mock.URL); err != nil {
			return nil, err
		}
		defer tr.Close()
		base = tr.URL
		fmt.Printf("tracing proxy at %s\n", base)
	}
	if err := ws.WriteConfig(soak.Fleet{N: n, BaseURL: base, ProviderExtra: c.providerExtra, Prefix: "bench"}.HCL()); err != nil {
		return nil, err
	}

	pflag := fmt.Sprintf("-parallelism=%d", c.p)
	f := &runFigures{N: n, P: c.p}
	run := func(label string, args ...string) (phase, error) {
		before, err := mock.Stats(ctx)
		if err != nil {
			return phase{}, err
		}
		seq, err := mock.LastSeq(ctx)
		if err != nil {
			return phase{}, err
		}
		fmt.Printf("%-8s terraform %s ... ", label, strings.Join(args, " "))
		res := ws.Run(ctx, args...)
		fmt.Printf("exit %d in %s (CPU %s)\n", res.ExitCode, secs(res.Duration), secs(res.CPU))
		after, err := mock.Stats(ctx)
		if err != nil {
			return phase{}, err
		}
		evs, err := mock.Events(ctx, seq)
		if err != nil {
			return phase{}, err
		}
		ph := phase{res: res, requests: map[string]int{}, events: evs, rss: readRSS(rssLog, res.Start), stats: after}
		for k, v := range after.Requests {
			if d := v - before.Requests[k]; d > 0 {
				ph.requests[k] = d
			}
		}
		return ph, nil
	}

	if f.apply, err = run("apply", "apply", "-auto-approve", "-input=false", pflag); err != nil {
		return nil, err
	}
	if !f.apply.res.OK() {
		fmt.Println(f.apply.res.Tail(4000))
		ws.Run(ctx, "destroy", "-auto-approve", "-input=false", pflag)
		return nil, fmt.Errorf("apply failed: %s", f.apply.res.Describe())
	}
	if tr != nil {
		f.trace = traceBreakdown(tr.since(f.apply.res.Start), f.apply.events)
		fmt.Print(f.trace)
	}
	// No -detailed-exitcode: Terraform 1.11 exits 2 for this provider's
	// refresh-only plans even when it reports "No changes" (see the report).
	if f.refresh, err = run("refresh", "plan", "-refresh-only", "-input=false", pflag); err != nil {
		return nil, err
	}
	f.refreshEmpty = f.refresh.res.OK()
	if f.plan, err = run("plan", "plan", "-detailed-exitcode", "-input=false", pflag); err != nil {
		return nil, err
	}
	f.planEmpty = f.plan.res.OK()
	if !f.planEmpty {
		fmt.Println(f.plan.res.Tail(3000))
	}
	if f.destroy, err = run("destroy", "destroy", "-auto-approve", "-input=false", pflag); err != nil {
		return nil, err
	}
	if !f.destroy.res.OK() {
		fmt.Println(f.destroy.res.Tail(4000))
		return nil, fmt.Errorf("destroy failed: %s", f.destroy.res.Describe())
	}
	f.compute(c)
	return f, nil
}

// compute derives the figures from the phases.
func (f *runFigures) compute(c benchConfig) {
	n, p := float64(f.N), float64(f.P)
	// Physical limit of the schedule. Each sandbox's chain is: create
	// (1 round trip) → boot → policy PUT (1 round trip) → data-plane apply.
	// Polling a status can coincide with the transition, so it costs no
	// round trip in the limit. Mean latency per round trip is latency +
	// jitter/2. Every step of the chain holds one of Terraform's P slots.
	rtt := c.latency + c.jitter/2
	f.W = c.boot + c.apply + 2*rtt
	f.limit = max(time.Duration(n*float64(f.W)/p), f.W)
	// Destroy: policy delete (GET, PUT of the open policy, its apply) then
	// sandbox delete (DELETE; the mock terminates at once).
	f.Wd = c.apply + 3*rtt
	f.destroyLimit = max(time.Duration(n*float64(f.Wd)/p), f.Wd)

	type key struct {
		id  string
		gen int64
	}
	analyse := func(evs []primemock.Event) (obs, runToPut, putToObs durStats, first, lastObs, firstCreated, lastCreated time.Time) {
		created, running := map[string]time.Time{}, map[string]time.Time{}
		firstPut := map[string]time.Time{}
		put, applied, observed := map[key]time.Time{}, map[key]time.Time{}, map[key]time.Time{}
		for _, e := range evs {
			k := key{e.SandboxID, e.Generation}
			switch e.Type {
			case primemock.EventSandboxCreated:
				created[e.SandboxID] = e.Time
				if firstCreated.IsZero() || e.Time.Before(firstCreated) {
					firstCreated = e.Time
				}
				if e.Time.After(lastCreated) {
					lastCreated = e.Time
				}
			case primemock.EventSandboxRunning:
				running[e.SandboxID] = e.Time
			case primemock.EventPolicyPut:
				put[k] = e.Time
				if _, ok := firstPut[e.SandboxID]; !ok {
					firstPut[e.SandboxID] = e.Time
				}
			case primemock.EventPolicyApplied:
				applied[k] = e.Time
			case primemock.EventPolicyObserved:
				observed[k] = e.Time
			}
			if first.IsZero() {
				first = e.Time
			}
		}
		var o, rp, po []time.Duration
		missing := 0
		for k, pt := range put {
			at, ok := applied[k]
			if !ok {
				continue // superseded or never applied
			}
			ot, ok := observed[k]
			if !ok {
				missing++
				continue
			}
			o = append(o, ot.Sub(at))
			po = append(po, ot.Sub(pt))
			if ot.After(lastObs) {
				lastObs = ot
			}
		}
		for id, rt := range running {
			if pt, ok := firstPut[id]; ok {
				rp = append(rp, pt.Sub(rt))
			}
		}
		return newDurStats(o, missing), newDurStats(rp, 0), newDurStats(po, 0), first, lastObs, firstCreated, lastCreated
	}
	var firstCreated, lastObs, lastCreated time.Time
	f.obs, f.runToPut, f.putToObs, _, lastObs, firstCreated, lastCreated = analyse(f.apply.events)
	if !firstCreated.IsZero() && !lastObs.IsZero() {
		f.span = lastObs.Sub(firstCreated)
		f.beforeFirst = firstCreated.Sub(f.apply.res.Start)
		f.afterLast = f.apply.res.Start.Add(f.apply.res.Duration).Sub(lastObs)
		f.createdSpread = lastCreated.Sub(firstCreated)
	}
	f.destroyObs, _, _, _, _, _, _ = analyse(f.destroy.events)
	f.liveAfterApply = f.apply.stats.LiveSandboxes
	for _, e := range f.apply.events {
		if e.Type == primemock.EventPolicyApplied && e.Generation >= 1 {
			f.appliedN++
		}
	}
	f.liveAfterDestroy = f.destroy.stats.LiveSandboxes
}

const statusRoute = "POST /api/v1/sandbox/status:batchGet"

func perSandbox(ph phase, route string, n int) float64 {
	if route == "" {
		return float64(ph.apiTotal()) / float64(n)
	}
	return float64(ph.requests[route]) / float64(n)
}

func printRun(f *runFigures, c benchConfig) {
	fmt.Printf("apply    %s wall; physical limit %s → ratio %.2f (target ≤ 1.20)\n", secs(f.apply.res.Duration), secs(f.limit),
		f.apply.res.Duration.Seconds()/f.limit.Seconds())
	fmt.Printf("         API span (first sandbox created → last policy seen applied) %s; before it %s, after it %s (Terraform plan/graph/state)\n",
		secs(f.span), secs(f.beforeFirst), secs(f.afterLast))
	fmt.Printf("         status requests/sandbox %.2f (target ≤ 1.5); API requests/sandbox %.2f; peak in flight %d\n",
		perSandbox(f.apply, statusRoute, f.N), perSandbox(f.apply, "", f.N), f.apply.stats.PeakInFlight)
	fmt.Printf("         policy applied → seen by provider: %s (target median ≤ 150 ms)\n", f.obs)
	fmt.Printf("         sandbox RUNNING → policy PUT: %s; policy PUT → seen applied: %s\n", f.runToPut, f.putToObs)
	fmt.Printf("         live sandboxes %d, policies applied %d, provider peak RSS %s (%d provider processes); CPU: %s\n",
		f.liveAfterApply, f.appliedN, kb(f.apply.maxRSS()), len(f.apply.rss), f.apply.cpuNote())
	fmt.Printf("refresh  %s for %d resources (plan -refresh-only, exit %d); plan %s (exit %d, empty: %t); provider peak RSS %s\n",
		secs(f.refresh.res.Duration), 2*f.N, f.refresh.res.ExitCode, secs(f.plan.res.Duration), f.plan.res.ExitCode, f.planEmpty, kb(f.refresh.maxRSS()))
	fmt.Printf("destroy  %s wall; limit %s; status requests/sandbox %.2f; API requests/sandbox %.2f; live after %d\n",
		secs(f.destroy.res.Duration), secs(f.destroyLimit), perSandbox(f.destroy, statusRoute, f.N), perSandbox(f.destroy, "", f.N), f.liveAfterDestroy)
}

func kb(v int64) string {
	if v == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f MiB", float64(v)/1024)
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

func evaluate(runs []*runFigures, c benchConfig) []verdict {
	main := runs[0]
	ratio := main.apply.res.Duration.Seconds() / main.limit.Seconds()
	st := perSandbox(main.apply, statusRoute, main.N)
	out := []verdict{
		{name: fmt.Sprintf("apply wall / physical limit (N=%d, P=%d)", main.N, main.P),
			value: fmt.Sprintf("%.2f (%s / %s)", ratio, secs(main.apply.res.Duration), secs(main.limit)), target: "≤ 1.20", pass: ratio <= 1.2},
		{name: fmt.Sprintf("status requests per sandbox during apply (N=%d)", main.N),
			value: fmt.Sprintf("%.2f", st), target: "≤ 1.5", pass: st <= 1.5},
		{name: fmt.Sprintf("policy applied → seen, median (N=%d)", main.N),
			value: ms(main.obs.median), target: "≤ 150 ms", pass: main.obs.n > 0 && main.obs.median <= 150*time.Millisecond},
	}
	// Refresh of 500 resources: the run with 2N = 500 if there is one,
	// else the closest run scaled linearly.
	var best *runFigures
	for _, r := range runs {
		if best == nil || abs(2*r.N-500) < abs(2*best.N-500) {
			best = r
		}
	}
	rv := verdict{name: "refresh of 500 resources (plan -refresh-only)", target: "≤ 10 s"}
	t := best.refresh.res.Duration
	if 2*best.N == 500 {
		rv.value = secs(t)
		rv.pass = t <= 10*time.Second && best.refresh.res.OK()
	} else {
		rv.na = true
		rv.value = fmt.Sprintf("not measured (%s for %d resources)", secs(t), 2*best.N)
		rv.note = "run with REFRESH_N=250 (-refresh-n 250) to measure 500"
	}
	out = append(out, rv)
	for _, r := range runs {
		if !r.planEmpty || r.liveAfterApply != r.N || r.appliedN < r.N || r.liveAfterDestroy != 0 {
			out = append(out, verdict{name: fmt.Sprintf("sanity (N=%d)", r.N), target: "N live, N applied, empty plan, 0 after destroy",
				value: fmt.Sprintf("%d live, %d applied, plan empty %t, %d after destroy", r.liveAfterApply, r.appliedN, r.planEmpty, r.liveAfterDestroy)})
		}
	}
	return out
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
