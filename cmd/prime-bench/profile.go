package main

// The provider's CPU profiles: the provider writes one per process when
// PRIME_PROVIDER_CPU_PROFILE_DIR names a directory (main.go's
// startCPUProfile); the run files them by phase and `go tool pprof`
// summarises them.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// cpuProfileEnv is the provider's profile switch (main.go).
const cpuProfileEnv = "PRIME_PROVIDER_CPU_PROFILE_DIR"

// fileProfiles moves the profiles the phase's provider processes wrote
// into dir/label (a directory of their own per phase) and returns them.
func fileProfiles(dir, label string) []string {
	if dir == "" {
		return nil
	}
	written, _ := filepath.Glob(filepath.Join(dir, "cpu-*.pprof"))
	if len(written) == 0 {
		return nil
	}
	to := runDirs.claim(filepath.Join(dir, label))
	if err := os.MkdirAll(to, 0o750); err != nil {
		return nil
	}
	var out []string
	for _, p := range written {
		dst := filepath.Join(to, filepath.Base(p))
		if os.Rename(p, dst) == nil {
			out = append(out, dst)
		}
	}
	sort.Strings(out)
	return out
}

// profileLine is one function of a pprof -top listing.
type profileLine struct {
	name            string
	flat, cum       time.Duration
	flatPct, cumPct float64
}

// cpuProfile is a summary of one phase's provider profiles.
type cpuProfile struct {
	files    int
	total    time.Duration // samples
	flat     []profileLine // by self time, descending
	packages []profileLine // self time summed by package, descending (name = package)
	err      string
}

// summariseProfiles runs `go tool pprof -top` over files (merged) and
// reads its listing.
func summariseProfiles(goTool string, files []string) cpuProfile {
	s := cpuProfile{files: len(files)}
	if len(files) == 0 {
		s.err = "no profile was written"
		return s
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	args := append([]string{"tool", "pprof", "-top", "-nodecount=100000"}, files...)
	out, err := exec.CommandContext(ctx, goTool, args...).Output() //nolint:gosec // the go command the benchmark was given
	if err != nil {
		s.err = fmt.Sprintf("go tool pprof: %v", err)
		return s
	}
	s.total, s.flat = parsePprofTop(out)
	s.packages = byPackage(s.flat, s.total)
	return s
}

// parsePprofTop reads `pprof -top`: the "Total samples = 2.14s" header and
// the rows "flat flat% sum% cum cum% name".
func parsePprofTop(out []byte) (time.Duration, []profileLine) {
	var total time.Duration
	var lines []profileLine
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.Index(line, "Total samples = "); i >= 0 {
			f := strings.Fields(line[i+len("Total samples = "):])
			if len(f) > 0 {
				total, _ = time.ParseDuration(f[0])
			}
			continue
		}
		f := strings.Fields(line)
		if len(f) < 6 || !strings.HasSuffix(f[1], "%") || !strings.HasSuffix(f[4], "%") {
			continue
		}
		flat, err1 := time.ParseDuration(f[0])
		cum, err2 := time.ParseDuration(f[3])
		fp, err3 := strconv.ParseFloat(strings.TrimSuffix(f[1], "%"), 64)
		cp, err4 := strconv.ParseFloat(strings.TrimSuffix(f[4], "%"), 64)
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
			continue
		}
		lines = append(lines, profileLine{name: strings.Join(f[5:], " "), flat: flat, cum: cum, flatPct: fp, cumPct: cp})
	}
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].flat > lines[j].flat })
	return total, lines
}

// byPackage sums self time by package, the Go runtime's packages (the
// garbage collector, the scheduler, allocation, system calls) as one.
func byPackage(lines []profileLine, total time.Duration) []profileLine {
	sums := map[string]time.Duration{}
	for _, l := range lines {
		sums[packageOf(l.name)] += l.flat
	}
	out := make([]profileLine, 0, len(sums))
	for p, d := range sums {
		pct := 0.0
		if total > 0 {
			pct = 100 * d.Seconds() / total.Seconds()
		}
		out = append(out, profileLine{name: p, flat: d, flatPct: pct})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].flat != out[j].flat {
			return out[i].flat > out[j].flat
		}
		return out[i].name < out[j].name
	})
	return out
}

// goRuntime names the Go runtime's share.
const goRuntime = "Go runtime (GC, scheduler, allocation, syscalls)"

// packageOf is the package of a pprof function name:
// "github.com/a/b/c.(*T).M" → "github.com/a/b/c", "runtime.mallocgc" →
// goRuntime.
func packageOf(fn string) string {
	slash := strings.LastIndex(fn, "/")
	dot := strings.Index(fn[slash+1:], ".")
	pkg := fn
	if dot >= 0 {
		pkg = fn[:slash+1+dot]
	}
	switch {
	case pkg == "runtime", strings.HasPrefix(pkg, "runtime/"), strings.HasPrefix(pkg, "internal/runtime/"),
		pkg == "syscall", strings.HasPrefix(pkg, "internal/"), strings.HasPrefix(fn, "gcWriteBarrier"),
		strings.HasPrefix(fn, "aeshash"), strings.HasPrefix(fn, "memeqbody"):
		return goRuntime
	}
	return strings.TrimPrefix(pkg, "github.com/primeintellect/terraform-provider-prime/")
}

// printProfile prints the top of a phase's profile.
func printProfile(label string, p cpuProfile) {
	if p.err != "" {
		fmt.Printf("CPU profile of the %s: %s\n", label, p.err)
		return
	}
	fmt.Printf("CPU profile of the %s: %s of samples in %d provider processes\n", label, secs(p.total), p.files)
	for i, l := range p.packages {
		if i == 8 {
			break
		}
		fmt.Printf("  %5.1f%%  %s\n", l.flatPct, l.name)
	}
	for i, l := range p.flat {
		if i == 12 {
			break
		}
		fmt.Printf("  %5.1f%% self, %5.1f%% with callees  %s\n", l.flatPct, l.cumPct, l.name)
	}
}
