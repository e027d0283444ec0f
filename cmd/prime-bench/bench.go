package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

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

func benchMain(args []string) error {
	c := benchConfig{
		fleetNs: []int{200, 1000, 3000, 10000}, fleetPs: []int{10},
		instNs: []int{200, 1000}, instPs: []int{10, 50},
		extra:  []runSpec{{pathInstances, 200, 200}},
		sdkNs:  []int{200, 1000},
		fileNs: []int{200, 1000}, fileBytes: 1 << 20,
		bigFileNs: []int{200}, bigFileBytes: 64 << 20,
		jobNs: []int{1000}, jobSeconds: 60, jobScale: 0.25,
		setupNs: []int{200, 1000}, setupSeconds: 60, setupScale: 0.05,
		recoveryNs: []int{1000},
	}
	fs := flag.NewFlagSet("prime-bench bench", flag.ContinueOnError)
	fs.StringVar(&c.bin, "bin", "bin", "directory holding terraform-provider-prime and prime-mock")
	fs.StringVar(&c.terraform, "terraform", envOr("TF_CLI", "terraform"), "Terraform CLI")
	fs.Func("fleet-n", "fleet path: sizes N, comma-separated (default 200,1000,3000,10000)", intList(&c.fleetNs))
	fs.Func("fleet-p", "fleet path: terraform -parallelism values (default 10)", intList(&c.fleetPs))
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
	fs.Func("recovery-n", "recovery runs (a normal apply and one after a lost runner, platform_recovery off and on; background agents after a lost runner): N, comma-separated (default 1000; \"\" for none)", intList(&c.recoveryNs))
	fs.BoolVar(&c.scaleOnly, "scale-only", false, "write only the scale section of the report (the fleet runs from N=1000 up, "+
		"their targets and the SDK stand-in), replacing its predecessor and leaving the rest of the report as it was")
	fs.BoolVar(&c.setupOnceOnly, "setup-once-only", false, "analysis: run only the setup-once way of the setup-once pair and print its timeline (no report)")
	fs.IntVar(&c.setupSeconds, "setup-seconds", 60, "setup-once run: the setup's length in mock time (sleep SECONDS)")
	fs.Float64Var(&c.setupScale, "setup-scale", 0.05, "setup-once run: the mock's sleep_scale (wall time of the setup = setup-seconds × setup-scale)")
	fs.DurationVar(&c.instBudget, "instances-budget", 4*time.Minute,
		"skip per-instance runs whose apply lower bound N·W/P exceeds this (0: run the full matrix)")
	fs.DurationVar(&c.latency, "latency", 5*time.Millisecond, "mock latency per API request")
	fs.DurationVar(&c.jitter, "jitter", 0, "mock latency jitter [0, jitter)")
	fs.DurationVar(&c.boot, "boot", 2*time.Second, "mock boot delay (PENDING + PROVISIONING)")
	fs.DurationVar(&c.apply, "apply", time.Second, "mock egress apply delay")
	fs.DurationVar(&c.gatewayLag, "gateway-lag", 300*time.Millisecond, "mock gateway registration lag after RUNNING")
	fs.BoolVar(&c.rateLimits, "rate-limits", true, "run prime-mock with the platform's published rate limits enforced "+
		"(429 with Retry-After), as the platform does; -rate-limits=false measures the provider without them")
	fs.IntVar(&c.profileN, "profile-n", 3000, "fleet runs at this N write the provider's CPU profiles and the report "+
		"summarises them (0: none)")
	fs.StringVar(&c.goTool, "go", envOr("GO", "go"), "go command, for `go tool pprof`")
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
	// sectionsOnly: only the setup-once pair and the recovery runs, whose
	// sections replace their predecessors in the report.
	sectionsOnly := len(specs) == 0 && len(c.sdkNs) == 0 && len(c.fileNs) == 0 && len(c.bigFileNs) == 0 && len(c.jobNs) == 0
	if sectionsOnly && len(c.setupNs) == 0 && len(c.recoveryNs) == 0 {
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
	if err := runRecovery(c, rep); err != nil {
		return err
	}
	if c.scaleOnly {
		mach.loadEnd = loadAvg()
		if c.out != "" {
			if err := writeScaleOnly(c.out, c, mach, rep); err != nil {
				return err
			}
			fmt.Printf("\nwrote the scale section of %s\n", c.out)
		}
		return nil
	}
	if sectionsOnly {
		// Only sections of their own: each replaces its predecessor in the
		// report, and the rest of the report stays as it was.
		if c.out != "" {
			if err := writeSectionsOnly(c.out, rep, c); err != nil {
				return err
			}
			fmt.Printf("\nwrote the setup-once and recovery sections of %s that ran\n", c.out)
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

// The published per-token limits that bound a fleet's apply: creates, and
// the status lookups that see each member RUNNING (a status:batchGet counts
// one lookup per sandbox it names), each per rateWindow.
const (
	publishedCreates = 15000
	publishedLookups = 30000
	rateWindow       = 60 * time.Second
)

// fleetLimit is the fleet path's limit at n members: W, plus a window for
// every further share of the members the platform's per-token limits let
// through per window, where they bind (creates beyond 15,000, lookups
// beyond 30,000: one lookup per member is the least that sees it RUNNING).
// Below 15,000 members it is W.
func fleetLimit(c benchConfig, n int) time.Duration {
	windows := max((n-1)/publishedCreates, (n-1)/publishedLookups, 0)
	return chainW(c) + time.Duration(windows)*rateWindow
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

func benchRun(c benchConfig, s runSpec) (*runFigures, error) {
	ctx := context.Background()
	name := fmt.Sprintf("%s-n%d-p%d", s.path, s.n, s.p)
	profileDir := ""
	if c.profiles(s) {
		profileDir = runDirs.claim(filepath.Join(c.workdir, "profiles-"+name))
		if err := os.MkdirAll(profileDir, 0o750); err != nil {
			return nil, err
		}
		c.providerEnv = append(slices.Clone(c.providerEnv), cpuProfileEnv+"="+profileDir)
	}
	env, err := newRunEnv(c, name)
	if err != nil {
		return nil, err
	}
	defer env.Close()
	env.profileDir = profileDir
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
	if st, err := os.Stat(filepath.Join(env.ws.Dir, "terraform.tfstate")); err == nil {
		f.stateBytes = st.Size()
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
	if profileDir != "" {
		f.profiles = map[string]cpuProfile{}
		for _, ph := range []struct {
			label string
			p     phase
		}{{"apply", f.apply}, {"refresh", f.refresh}, {"plan", f.plan}, {"destroy", f.destroy}} {
			f.profiles[ph.label] = summariseProfiles(c.goTool, ph.p.profiles)
		}
		printProfile("apply", f.profiles["apply"])
	}
	return f, nil
}
