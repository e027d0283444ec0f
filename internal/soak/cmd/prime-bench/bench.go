package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
	"github.com/primeintellect/terraform-provider-prime/internal/soak"
)

// Paths of one job — N sandboxes, each ready (RUNNING and answering through
// its gateway) and locked (an egress policy enforced) — measured side by
// side on the same mock settings.
const (
	// pathFleet: one prime_sandbox_fleet (size N) + one
	// prime_fleet_egress_policy on its sandbox_ids.
	pathFleet = "fleet"
	// pathInstances: N prime_sandbox + N prime_egress_policy, each instance
	// its own resource block.
	pathInstances = "instances"
)

type benchConfig struct {
	bin       string
	terraform string
	// The matrix: fleet runs for every fleetNs × fleetPs, per-instance runs
	// for every instNs × instPs, plus extra; SDK stand-in runs for sdkNs.
	fleetNs, fleetPs []int
	instNs, instPs   []int
	extra            []runSpec
	sdkNs            []int
	sdkWorkers       int
	// The file run (files.go) at every fileNs, with a task archive of
	// fileBytes; the background-job run (jobs.go) at every jobNs, a job of
	// jobSeconds of mock time at sleep_scale jobScale.
	fileNs    []int
	fileBytes int64
	// The same file run at every bigFileNs with an archive of bigFileBytes:
	// over the platform's 16 MiB upload limit, so it goes up in parts.
	bigFileNs    []int
	bigFileBytes int64
	jobNs        []int
	jobSeconds   int
	jobScale     float64
	// The setup-once pair (setuponce.go) at every setupNs: a setup of
	// setupSeconds of mock time at sleep_scale setupScale.
	setupNs      []int
	setupSeconds int
	setupScale   float64
	// instBudget skips per-instance runs whose apply lower bound N·W/P
	// exceeds it (0: none skipped).
	instBudget    time.Duration
	latency       time.Duration
	jitter        time.Duration
	boot, apply   time.Duration
	gatewayLag    time.Duration
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

// runSpec is one Terraform run of the matrix.
type runSpec struct {
	path string
	n, p int
}

func (s runSpec) String() string { return fmt.Sprintf("%s N=%d P=%d", s.path, s.n, s.p) }

// skipped is a run of the matrix that was not run, and why.
type skipped struct {
	spec   runSpec
	reason string
}

func intList(dst *[]int) func(string) error {
	return func(s string) error {
		*dst = nil
		for _, f := range strings.Split(s, ",") {
			f = strings.TrimSpace(f)
			if f == "" {
				continue
			}
			v, err := strconv.Atoi(f)
			if err != nil || v < 1 {
				return fmt.Errorf("%q is not a positive integer", f)
			}
			*dst = append(*dst, v)
		}
		return nil
	}
}

func parseRuns(dst *[]runSpec) func(string) error {
	return func(s string) error {
		*dst = nil
		for _, f := range strings.Split(s, ",") {
			f = strings.TrimSpace(f)
			if f == "" {
				continue
			}
			parts := strings.Split(f, ":")
			if len(parts) != 3 || (parts[0] != pathFleet && parts[0] != pathInstances) {
				return fmt.Errorf("%q: want fleet:N:P or instances:N:P", f)
			}
			n, err1 := strconv.Atoi(parts[1])
			p, err2 := strconv.Atoi(parts[2])
			if err1 != nil || err2 != nil || n < 1 || p < 1 {
				return fmt.Errorf("%q: N and P must be positive integers", f)
			}
			*dst = append(*dst, runSpec{parts[0], n, p})
		}
		return nil
	}
}

func benchMain(args []string) error {
	c := benchConfig{
		fleetNs: []int{200, 1000}, fleetPs: []int{10, 50},
		instNs: []int{200, 1000}, instPs: []int{10, 50},
		extra:  []runSpec{{pathInstances, 200, 200}},
		sdkNs:  []int{200, 1000},
		fileNs: []int{200, 1000}, fileBytes: 1 << 20,
		bigFileNs: []int{200}, bigFileBytes: 64 << 20,
		jobNs: []int{1000}, jobSeconds: 60, jobScale: 0.25,
		setupNs: []int{200, 1000}, setupSeconds: 60, setupScale: 0.05,
	}
	fs := flag.NewFlagSet("prime-bench bench", flag.ContinueOnError)
	fs.StringVar(&c.bin, "bin", "bin", "directory holding terraform-provider-prime and prime-mock")
	fs.StringVar(&c.terraform, "terraform", envOr("TF_CLI", "terraform"), "Terraform CLI")
	fs.Func("fleet-n", "fleet path: sizes N, comma-separated (default 200,1000)", intList(&c.fleetNs))
	fs.Func("fleet-p", "fleet path: terraform -parallelism values (default 10,50)", intList(&c.fleetPs))
	fs.Func("instances-n", "per-instance path: N, comma-separated (default 200,1000)", intList(&c.instNs))
	fs.Func("instances-p", "per-instance path: terraform -parallelism values (default 10,50)", intList(&c.instPs))
	fs.Func("runs", "extra runs, comma-separated path:N:P (default instances:200:200; \"\" for none)", parseRuns(&c.extra))
	fs.Func("sdk-n", "SDK stand-in: N, comma-separated (default 200,1000; \"\" for none)", intList(&c.sdkNs))
	fs.IntVar(&c.sdkWorkers, "sdk-workers", 200, "SDK stand-in: concurrent workers (the SDK's parallelism)")
	fs.Func("file-n", "file run (task archive in, results out) and its baseline: N, comma-separated (default 200,1000; \"\" for none)", intList(&c.fileNs))
	fs.Int64Var(&c.fileBytes, "file-bytes", 1<<20, "file run: size of the task archive in bytes (a multiple of 512 is exact)")
	fs.Func("big-file-n", "the file run with a big task archive (-big-file-bytes, uploaded in parts of 16 MiB): N, comma-separated (default 200; \"\" for none)", intList(&c.bigFileNs))
	fs.Int64Var(&c.bigFileBytes, "big-file-bytes", 64<<20, "big file run: size of the task archive in bytes")
	fs.Func("job-n", "background-job run and its foreground baseline: N, comma-separated (default 1000; \"\" for none)", intList(&c.jobNs))
	fs.IntVar(&c.jobSeconds, "job-seconds", 60, "background-job run: the job's length in mock time (sleep SECONDS)")
	fs.Float64Var(&c.jobScale, "job-scale", 0.25, "background-job run: the mock's sleep_scale (wall time of the job = job-seconds × job-scale)")
	fs.Func("setup-n", "setup-once run beside per-member setup: N, comma-separated (default 200,1000; \"\" for none)", intList(&c.setupNs))
	fs.IntVar(&c.setupSeconds, "setup-seconds", 60, "setup-once run: the setup's length in mock time (sleep SECONDS)")
	fs.Float64Var(&c.setupScale, "setup-scale", 0.05, "setup-once run: the mock's sleep_scale (wall time of the setup = setup-seconds × setup-scale)")
	fs.DurationVar(&c.instBudget, "instances-budget", 4*time.Minute,
		"skip per-instance runs whose apply lower bound N·W/P exceeds this (0: run the full matrix)")
	fs.DurationVar(&c.latency, "latency", 5*time.Millisecond, "mock latency per API request")
	fs.DurationVar(&c.jitter, "jitter", 0, "mock latency jitter [0, jitter)")
	fs.DurationVar(&c.boot, "boot", 2*time.Second, "mock boot delay (PENDING + PROVISIONING)")
	fs.DurationVar(&c.apply, "apply", time.Second, "mock egress apply delay")
	fs.DurationVar(&c.gatewayLag, "gateway-lag", 300*time.Millisecond, "mock gateway registration lag after RUNNING")
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
	if c.sdkWorkers < 1 {
		return errors.New("-sdk-workers must be at least 1")
	}
	if c.fileBytes < 8<<10 || c.bigFileBytes < 8<<10 {
		return errors.New("-file-bytes and -big-file-bytes must be at least 8 KiB")
	}
	if c.jobSeconds < 1 || c.jobScale <= 0 {
		return errors.New("-job-seconds must be at least 1 and -job-scale above 0")
	}
	if c.setupSeconds < 1 || c.setupScale <= 0 {
		return errors.New("-setup-seconds must be at least 1 and -setup-scale above 0")
	}
	c.argv = os.Args
	specs, skips := c.matrix()
	setupOnly := len(specs) == 0 && len(c.sdkNs) == 0 && len(c.fileNs) == 0 && len(c.bigFileNs) == 0 && len(c.jobNs) == 0
	if setupOnly && len(c.setupNs) == 0 {
		return errors.New("nothing to run")
	}
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
	rep := &report{skipped: skips}
	// Within each N: the fleet runs, the SDK stand-in right after them (the
	// two are compared, so they run as close together as possible), then
	// the per-instance runs.
	for _, n := range c.allNs(specs) {
		for _, path := range []string{pathFleet, "sdk", pathInstances} {
			if path == "sdk" {
				if !slices.Contains(c.sdkNs, n) {
					continue
				}
				fmt.Printf("\n=== SDK stand-in: N=%d, %d workers\n", n, c.sdkWorkers)
				f, err := sdkRun(c, n)
				if err != nil {
					return fmt.Errorf("SDK stand-in N=%d: %w", n, err)
				}
				rep.sdk = append(rep.sdk, f)
				printSDK(f)
				continue
			}
			for _, s := range specs {
				if s.n != n || s.path != path {
					continue
				}
				fmt.Printf("\n=== %s: %s, latency %s, boot %s, apply %s, gateway lag %s\n", s, s.describe(), c.latency, c.boot, c.apply, c.gatewayLag)
				f, err := benchRun(c, s)
				if err != nil {
					return fmt.Errorf("bench run %s: %w (work directory %s)", s, err, c.workdir)
				}
				rep.runs = append(rep.runs, f)
				printRun(f)
			}
		}
	}
	if err := runFilesAndJobs(c, rep); err != nil {
		return err
	}
	if err := runSetupOnce(c, rep); err != nil {
		return err
	}
	if setupOnly {
		// Only the setup-once pair: its section replaces its predecessor in
		// the report, and the rest of the report stays as it was.
		if c.out != "" {
			if err := writeSetupOnceOnly(c.out, rep.setupOnce, c); err != nil {
				return err
			}
			fmt.Printf("\nwrote the setup-once section of %s\n", c.out)
		}
		return nil
	}
	mach.loadEnd = loadAvg()
	rep.verdicts = evaluate(rep, c)
	fmt.Println()
	for _, v := range rep.verdicts {
		fmt.Println(v.line())
	}
	if c.out != "" {
		//nolint:gosec // BENCHMARKS.md is a documentation file of the repository, readable by all.
		if err := os.WriteFile(c.out, []byte(markdown(c, mach, rep)), 0o644); err != nil {
			return err
		}
		fmt.Printf("\nwrote %s\n", c.out)
	}
	if c.keep {
		fmt.Printf("work directory kept: %s\n", c.workdir)
	}
	return nil
}

func (s runSpec) describe() string {
	if s.path == pathFleet {
		return fmt.Sprintf("one prime_sandbox_fleet (size %d) + one prime_fleet_egress_policy, -parallelism=%d", s.n, s.p)
	}
	return fmt.Sprintf("%d prime_sandbox + %d prime_egress_policy (%d resources), -parallelism=%d", s.n, s.n, 2*s.n, s.p)
}

// matrix lists the runs to make and the per-instance runs left out because
// their lower bound N·W/P exceeds the budget.
func (c benchConfig) matrix() ([]runSpec, []skipped) {
	var specs []runSpec
	var skips []skipped
	seen := map[runSpec]bool{}
	add := func(s runSpec) {
		if seen[s] {
			return
		}
		seen[s] = true
		if s.path == pathInstances && c.instBudget > 0 {
			if lb := instanceLimit(c, s.n, s.p); lb > c.instBudget {
				skips = append(skips, skipped{s, fmt.Sprintf("its apply alone needs at least N·W/P = %s (%s of slot time per instance "+
					"at %d slots), over the -instances-budget of %s; the destroy and the plans of %d resources come on top. "+
					"Run it with -instances-budget 0", secs(lb), ms(chainW(c)), s.p, c.instBudget, 2*s.n)})
				return
			}
		}
		specs = append(specs, s)
	}
	for _, n := range c.fleetNs {
		for _, p := range c.fleetPs {
			add(runSpec{pathFleet, n, p})
		}
	}
	for _, n := range c.instNs {
		for _, p := range c.instPs {
			add(runSpec{pathInstances, n, p})
		}
	}
	for _, s := range c.extra {
		add(s)
	}
	// Fleet runs first, then per-instance runs by parallelism, within each N.
	sort.SliceStable(specs, func(i, j int) bool {
		a, b := specs[i], specs[j]
		if a.n != b.n {
			return a.n < b.n
		}
		if a.path != b.path {
			return a.path == pathFleet
		}
		return a.p < b.p
	})
	return specs, skips
}

// allNs is every N of the runs and SDK runs, ascending.
func (c benchConfig) allNs(specs []runSpec) []int {
	var ns []int
	for _, s := range specs {
		ns = append(ns, s.n)
	}
	ns = append(ns, c.sdkNs...)
	slices.Sort(ns)
	return slices.Compact(ns)
}

func envOr(k, d string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return d
}

// rtt is the mean round trip of one API request on the mock.
func rtt(c benchConfig) time.Duration { return c.latency + c.jitter/2 }

// chainW is the platform's shortest time for one sandbox of the job: its
// create round trip, the boot, then, in parallel, the policy (PUT round
// trip + data-plane apply) and the gateway (registration lag + one probe
// round trip). A status poll can coincide with the transition to RUNNING,
// so it costs nothing.
func chainW(c benchConfig) time.Duration {
	return rtt(c) + c.boot + max(rtt(c)+c.apply, c.gatewayLag+rtt(c))
}

// instanceLimit is the per-instance path's limit: every step of a chain
// holds one of Terraform's P slots, so N chains need at least N·W/P, and
// never less than one chain.
func instanceLimit(c benchConfig, n, p int) time.Duration {
	w := chainW(c)
	return max(time.Duration(float64(n)*float64(w)/float64(p)), w)
}

// fleetChain is the fleet configuration's own chain: the fleet policy can
// start only once every member is ready, so the gateway (lag + probe) runs
// before the PUT instead of beside it. Informational: the limit is chainW.
func fleetChain(c benchConfig) time.Duration {
	return rtt(c) + c.boot + c.gatewayLag + rtt(c) + rtt(c) + c.apply
}

// destroyW is one sandbox's destroy: the policy's restore (GET, PUT of the
// open policy, its apply) then the sandbox DELETE.
func destroyW(c benchConfig) time.Duration { return c.apply + 3*rtt(c) }

// phase is one Terraform command with the mock's counters around it.
type phase struct {
	res      soak.Result
	requests map[string]int // requests during the phase, by route
	events   []primemock.Event
	rss      []rssRecord
	stats    primemock.Stats // after
	// mockCPU is the prime-mock process's CPU time during the command.
	mockCPU time.Duration
}

// apiTotal counts /api/v1 requests (the control plane, gateway tokens
// included).
func (p phase) apiTotal() int { return routeTotal(p.requests, "/api/v1") }

// gatewayTotal counts requests to the gateway (Connect command sessions and
// REST exec).
func (p phase) gatewayTotal() int { return routeTotal(p.requests, "/gateway/") }

func routeTotal(reqs map[string]int, part string) int {
	t := 0
	for k, v := range reqs {
		if strings.Contains(k, part) {
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

// cpuNote is "terraform X + provider Y + mock Z CPU seconds".
func (p phase) cpuNote() string {
	prov := p.providerCPU()
	return fmt.Sprintf("terraform %s + provider %s + mock %s", secs(max(0, p.res.CPU-prov)), secs(prov), secs(p.mockCPU))
}

// processCPU is a process's user + system CPU time from /proc/PID/stat (0
// when it cannot be read).
func processCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(ut+st) * time.Second / clockTicks
}

// clockTicks is USER_HZ, 100 on Linux.
const clockTicks = 100

func (p phase) maxRSS() int64 {
	var m int64
	for _, r := range p.rss {
		m = max(m, r.MaxRSSKB)
	}
	return m
}

// refreshRuns is how many refresh-only plans a run makes; the median one is
// reported.
const refreshRuns = 3

type runFigures struct {
	runSpec
	apply, refresh, plan      phase
	destroy                   phase
	planEmpty, refreshEmpty   bool
	refreshWalls              []time.Duration // every refresh run, in order (f.refresh is the median)
	W, limit, chain           time.Duration
	Wd, destroyLimit          time.Duration
	span                      time.Duration // first sandbox_created → last policy_observed
	beforeFirst, afterLast    time.Duration
	obs                       durStats // policy_applied → policy_observed
	runToPut                  durStats // sandbox_running → policy_put
	putToObs                  durStats // policy_put → policy_observed
	runToReady                durStats // sandbox_running → gateway_ready (the mock's lag)
	readyToProbe              durStats // gateway_ready → the probe that ran
	lastProbeToPut            time.Duration
	createdSpread             time.Duration
	liveAfterApply, appliedN  int
	liveAfterDestroy          int
	destroyObs                durStats
	trace                     string // -trace breakdown of the apply
	refreshRes, refreshMember float64
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

// short is "median / max".
func (s durStats) short() string {
	if s.n == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%s / %s", ms(s.median), ms(s.max))
}

func ms(d time.Duration) string {
	if d < 10*time.Second && d > -10*time.Second {
		return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
	}
	return secs(d)
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

// startMock runs prime-mock with the benchmark's settings (extra flags
// after them).
func startMock(c benchConfig, extra ...string) (*soak.Mock, error) {
	return soak.StartMockProcess(filepath.Join(c.bin, "prime-mock"), append([]string{
		"-boot-delay", c.boot.String(), "-apply-delay", c.apply.String(),
		"-latency", c.latency.String(), "-latency-jitter", c.jitter.String(),
		"-gateway-lag", c.gatewayLag.String(), "-seed", strconv.FormatInt(c.seed, 10)}, extra...)...)
}

// runEnv is one Terraform run's surroundings: its own prime-mock process,
// a workspace whose provider is started through the RSS-recording wrapper
// (wrap.go), and the run's directory.
type runEnv struct {
	mock   *soak.Mock
	ws     *soak.Workspace
	dir    string
	rssLog string
}

// newRunEnv starts a mock (extra flags after the benchmark's) and makes
// the workspace under c.workdir/name. Close stops the mock.
func newRunEnv(c benchConfig, name string, mockFlags ...string) (*runEnv, error) {
	mock, err := startMock(c, mockFlags...)
	if err != nil {
		return nil, err
	}
	fmt.Printf("prime-mock (pid %d) at %s\n", mock.PID(), mock.URL)
	e := &runEnv{mock: mock, dir: filepath.Join(c.workdir, name)}
	if err := e.init(c); err != nil {
		mock.Close()
		return nil, err
	}
	return e, nil
}

func (e *runEnv) init(c benchConfig) error {
	// The provider is started through a symlink to this binary that records
	// its peak RSS (wrap.go).
	wrapDir := filepath.Join(e.dir, "provider")
	if err := os.MkdirAll(wrapDir, 0o750); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if err := os.Symlink(self, filepath.Join(wrapDir, "terraform-provider-prime")); err != nil {
		return err
	}
	providerPath := c.providerBin
	if providerPath == "" {
		providerPath = filepath.Join(c.bin, "terraform-provider-prime")
	}
	provider, err := filepath.Abs(providerPath)
	if err != nil {
		return err
	}
	if _, err := os.Stat(provider); err != nil {
		return fmt.Errorf("provider binary: %w (run make build)", err)
	}
	e.rssLog = filepath.Join(e.dir, "rss.jsonl")
	e.ws, err = soak.NewWorkspace(filepath.Join(e.dir, "tf"), c.terraform, wrapDir,
		append([]string{wrapTargetEnv + "=" + provider, wrapLogEnv + "=" + e.rssLog}, c.providerEnv...)...)
	return err
}

func (e *runEnv) Close() { e.mock.Close() }

// run runs one terraform command and takes the mock's counters and events
// around it.
func (e *runEnv) run(ctx context.Context, label string, args ...string) (phase, error) {
	mock := e.mock
	before, err := mock.Stats(ctx)
	if err != nil {
		return phase{}, err
	}
	seq, err := mock.LastSeq(ctx)
	if err != nil {
		return phase{}, err
	}
	fmt.Printf("%-8s terraform %s ... ", label, strings.Join(args, " "))
	mockBefore := processCPU(mock.PID())
	res := e.ws.Run(ctx, args...)
	mockCPU := processCPU(mock.PID()) - mockBefore
	fmt.Printf("exit %d in %s (CPU %s)\n", res.ExitCode, secs(res.Duration), secs(res.CPU))
	after, err := mock.Stats(ctx)
	if err != nil {
		return phase{}, err
	}
	evs, err := mock.Events(ctx, seq)
	if err != nil {
		return phase{}, err
	}
	ph := phase{res: res, requests: map[string]int{}, events: evs, rss: readRSS(e.rssLog, res.Start), stats: after, mockCPU: mockCPU}
	for k, v := range after.Requests {
		if d := v - before.Requests[k]; d > 0 {
			ph.requests[k] = d
		}
	}
	return ph, nil
}

// warmUp runs an unmeasured `terraform validate`: it starts Terraform and
// the provider once (no API call), so the first run of an invocation does
// not pay for reading freshly built binaries from disk, which the others
// do not (the first fleet apply's plan took 0.3 s longer).
func (e *runEnv) warmUp(ctx context.Context) error {
	if res := e.ws.Run(ctx, "validate", "-no-color"); !res.OK() {
		return fmt.Errorf("warm-up validate failed: %s", res.Describe())
	}
	return nil
}

func benchRun(c benchConfig, s runSpec) (*runFigures, error) {
	ctx := context.Background()
	env, err := newRunEnv(c, fmt.Sprintf("%s-n%d-p%d", s.path, s.n, s.p))
	if err != nil {
		return nil, err
	}
	defer env.Close()
	mock, ws := env.mock, env.ws
	base := mock.URL
	var tr *tracer
	if c.trace && s.path == pathInstances {
		if tr, err = startTracer(mock.URL, false); err != nil {
			return nil, err
		}
		defer tr.Close()
		base = tr.URL
		fmt.Printf("tracing proxy at %s\n", base)
	}
	hcl := soak.Fleet{N: s.n, BaseURL: base, ProviderExtra: c.providerExtra, Prefix: "bench"}.HCL()
	if s.path == pathFleet {
		hcl = soak.SandboxFleet{N: s.n, BaseURL: base, ProviderExtra: c.providerExtra, Prefix: "bench"}.HCL()
	}
	if err := ws.WriteConfig(hcl); err != nil {
		return nil, err
	}

	pflag := fmt.Sprintf("-parallelism=%d", s.p)
	f := &runFigures{runSpec: s}
	run := func(label string, args ...string) (phase, error) { return env.run(ctx, label, args...) }

	if err := env.warmUp(ctx); err != nil {
		return nil, err
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
	// The provider sends refreshed state as JSON, so an unchanged refresh-only
	// plan exits 0 under -detailed-exitcode (Terraform 1.11 exited 2 before).
	// It runs refreshRuns times and the median run is reported: one sample
	// of a 2 s command on this shared machine moved by ±0.2 s from minute to
	// minute.
	refreshes := make([]phase, 0, refreshRuns)
	f.refreshEmpty = true
	for range refreshRuns {
		ph, err := run("refresh", "plan", "-refresh-only", "-detailed-exitcode", "-input=false", pflag)
		if err != nil {
			return nil, err
		}
		if !ph.res.OK() {
			f.refreshEmpty = false
			fmt.Println(ph.res.Tail(3000))
		}
		refreshes = append(refreshes, ph)
		f.refreshWalls = append(f.refreshWalls, ph.res.Duration)
	}
	slices.SortFunc(refreshes, func(a, b phase) int { return cmp.Compare(a.res.Duration, b.res.Duration) })
	f.refresh = refreshes[len(refreshes)/2]
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

// eventTimes is what the analysis needs from a phase's mock events.
type eventTimes struct {
	created, running, ready, probed map[string]time.Time
	firstPut                        map[string]time.Time
	obs, runToPut, putToObs         durStats
	firstCreated, lastCreated       time.Time
	lastObs, lastProbe, firstPutAt  time.Time
	appliedN                        int
}

// gatewayProbe is the command the readiness probes run (the SDK's).
const gatewayProbe = "echo 'sandbox ready'"

func analyse(evs []primemock.Event) eventTimes {
	type key struct {
		id  string
		gen int64
	}
	t := eventTimes{created: map[string]time.Time{}, running: map[string]time.Time{}, ready: map[string]time.Time{},
		probed: map[string]time.Time{}, firstPut: map[string]time.Time{}}
	put, applied, observed := map[key]time.Time{}, map[key]time.Time{}, map[key]time.Time{}
	for _, e := range evs {
		k := key{e.SandboxID, e.Generation}
		switch e.Type {
		case primemock.EventSandboxCreated:
			t.created[e.SandboxID] = e.Time
			if t.firstCreated.IsZero() || e.Time.Before(t.firstCreated) {
				t.firstCreated = e.Time
			}
			if e.Time.After(t.lastCreated) {
				t.lastCreated = e.Time
			}
		case primemock.EventSandboxRunning:
			t.running[e.SandboxID] = e.Time
		case primemock.EventGatewayReady:
			t.ready[e.SandboxID] = e.Time
		case primemock.EventCommandExecuted:
			if e.Command == gatewayProbe && e.ExitCode == 0 {
				if _, ok := t.probed[e.SandboxID]; !ok {
					t.probed[e.SandboxID] = e.Time
				}
				if e.Time.After(t.lastProbe) {
					t.lastProbe = e.Time
				}
			}
		case primemock.EventPolicyPut:
			put[k] = e.Time
			if _, ok := t.firstPut[e.SandboxID]; !ok {
				t.firstPut[e.SandboxID] = e.Time
			}
			if t.firstPutAt.IsZero() || e.Time.Before(t.firstPutAt) {
				t.firstPutAt = e.Time
			}
		case primemock.EventPolicyApplied:
			applied[k] = e.Time
			if e.Generation >= 1 {
				t.appliedN++
			}
		case primemock.EventPolicyObserved:
			observed[k] = e.Time
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
		if ot.After(t.lastObs) {
			t.lastObs = ot
		}
	}
	for id, rt := range t.running {
		if pt, ok := t.firstPut[id]; ok {
			rp = append(rp, pt.Sub(rt))
		}
	}
	t.obs, t.runToPut, t.putToObs = newDurStats(o, missing), newDurStats(rp, 0), newDurStats(po, 0)
	return t
}

// compute derives the figures from the phases.
func (f *runFigures) compute(c benchConfig) {
	f.W = chainW(c)
	f.chain = f.W
	f.limit = instanceLimit(c, f.n, f.p)
	f.Wd = destroyW(c)
	f.destroyLimit = max(time.Duration(float64(f.n)*float64(f.Wd)/float64(f.p)), f.Wd)
	if f.path == pathFleet {
		// One resource creates and waits for every member at once:
		// Terraform's parallelism does not bound it.
		f.limit, f.destroyLimit, f.chain = f.W, f.Wd, fleetChain(c)
	}
	a := analyse(f.apply.events)
	f.obs, f.runToPut, f.putToObs, f.appliedN = a.obs, a.runToPut, a.putToObs, a.appliedN
	if !a.firstCreated.IsZero() && !a.lastObs.IsZero() {
		f.span = a.lastObs.Sub(a.firstCreated)
		f.beforeFirst = a.firstCreated.Sub(f.apply.res.Start)
		f.afterLast = f.apply.res.Start.Add(f.apply.res.Duration).Sub(a.lastObs)
		f.createdSpread = a.lastCreated.Sub(a.firstCreated)
	}
	var rr, rp []time.Duration
	for id, rt := range a.running {
		if gt, ok := a.ready[id]; ok {
			rr = append(rr, gt.Sub(rt))
			if pt, ok := a.probed[id]; ok {
				rp = append(rp, pt.Sub(gt))
			}
		}
	}
	f.runToReady, f.readyToProbe = newDurStats(rr, 0), newDurStats(rp, 0)
	if !a.lastProbe.IsZero() && !a.firstPutAt.IsZero() {
		f.lastProbeToPut = a.firstPutAt.Sub(a.lastProbe)
	}
	f.destroyObs = analyse(f.destroy.events).obs
	f.liveAfterApply = f.apply.stats.LiveSandboxes
	f.liveAfterDestroy = f.destroy.stats.LiveSandboxes
	resources := 2 * f.n
	if f.path == pathFleet {
		resources = 2
	}
	f.refreshRes = float64(f.refresh.apiTotal()) / float64(resources)
	f.refreshMember = float64(f.refresh.apiTotal()) / float64(f.n)
}

const statusRoute = "POST /api/v1/sandbox/status:batchGet"

func perMember(ph phase, route string, n int) float64 {
	if route == "" {
		return float64(ph.apiTotal()) / float64(n)
	}
	return float64(ph.requests[route]) / float64(n)
}

func (f *runFigures) ratio() float64 { return f.apply.res.Duration.Seconds() / f.limit.Seconds() }

func printRun(f *runFigures) {
	fmt.Printf("apply    %s wall; limit %s → ratio %.2f\n", secs(f.apply.res.Duration), secs(f.limit), f.ratio())
	fmt.Printf("         API span (first sandbox created → last policy seen applied) %s; before it %s, after it %s (Terraform plan/graph/state)\n",
		secs(f.span), secs(f.beforeFirst), secs(f.afterLast))
	fmt.Printf("         per member: %.2f API requests (%.2f status), %.2f gateway requests; peak in flight %d\n",
		perMember(f.apply, "", f.n), perMember(f.apply, statusRoute, f.n), float64(f.apply.gatewayTotal())/float64(f.n), f.apply.stats.PeakInFlight)
	fmt.Printf("         policy applied → seen: %s\n", f.obs)
	fmt.Printf("         gateway ready → probe answered: %s; sandbox RUNNING → policy PUT: %s\n", f.readyToProbe, f.runToPut)
	fmt.Printf("         live sandboxes %d, policies applied %d, provider peak RSS %s (%d provider processes); CPU: %s\n",
		f.liveAfterApply, f.appliedN, kb(f.apply.maxRSS()), len(f.apply.rss), f.apply.cpuNote())
	fmt.Printf("refresh  %s (plan -refresh-only -detailed-exitcode: exit %d), %d API requests; plan %s (exit %d); provider peak RSS %s\n",
		secs(f.refresh.res.Duration), f.refresh.res.ExitCode, f.refresh.apiTotal(), secs(f.plan.res.Duration), f.plan.res.ExitCode, kb(f.refresh.maxRSS()))
	fmt.Printf("destroy  %s wall; limit %s; API requests/member %.2f; live after %d\n",
		secs(f.destroy.res.Duration), secs(f.destroyLimit), perMember(f.destroy, "", f.n), f.liveAfterDestroy)
}

func kb(v int64) string {
	if v == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f MiB", float64(v)/1024)
}
