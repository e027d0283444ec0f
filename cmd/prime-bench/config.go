package main

// The benchmark's configuration: flags and environment, the runs it parses and the matrix of paths and sizes.

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
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
	setupNs []int
	// setupOnceOnly (analysis): run only the setup-once way, print its
	// timeline, report nothing (the targets need both ways).
	setupOnceOnly bool
	// scaleOnly: the fleet runs (and the SDK stand-in) write only the
	// scale section of the report (make bench-scale).
	scaleOnly    bool
	setupSeconds int
	setupScale   float64
	// The recovery runs (recovery.go) at every recoveryNs.
	recoveryNs []int
	// instBudget skips per-instance runs whose apply lower bound N·W/P
	// exceeds it (0: none skipped).
	instBudget  time.Duration
	latency     time.Duration
	jitter      time.Duration
	boot, apply time.Duration
	gatewayLag  time.Duration
	// rateLimits runs prime-mock with the platform's published rate limits
	// enforced (429 with Retry-After), as the platform does.
	rateLimits bool
	// profileN: the fleet runs at this N write the provider's CPU profiles,
	// summarised by goTool's pprof (0: none).
	profileN      int
	goTool        string
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

// profiles says whether run s profiles the provider.
func (c benchConfig) profiles(s runSpec) bool {
	return c.profileN > 0 && s.path == pathFleet && s.n == c.profileN
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
