package main

// Scale: the fleet path's figures side by side from N=1,000 up (linear
// growth), the targets of that growth, and the provider's CPU profile.

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// scaleBaseN is the N the growth of every figure is measured from.
const scaleBaseN = 1000

// growthSlack is how much a per-member figure may exceed its value at
// scaleBaseN and still count as linear: timings, CPU time and memory move
// with the machine's load (ratios in one run, on a shared machine), request
// counts and state bytes do not.
const (
	growthSlackNoisy = 1.10
	growthSlackExact = 1.02
)

// scaleMetric is one figure of a phase of a fleet run.
type scaleMetric struct {
	name  string
	exact bool // load-independent: compared with growthSlackExact
	value func(f *runFigures, ph phase) float64
	show  func(v float64) string
}

var scaleMetrics = []scaleMetric{
	{name: "wall time", value: func(_ *runFigures, ph phase) float64 { return ph.res.Duration.Seconds() },
		show: func(v float64) string { return secs(time.Duration(v * float64(time.Second))) }},
	{name: "API + gateway requests", exact: true, value: func(_ *runFigures, ph phase) float64 {
		return float64(ph.apiTotal() + ph.gatewayTotal())
	}, show: func(v float64) string { return fmt.Sprintf("%.0f", v) }},
	{name: "provider CPU", value: func(_ *runFigures, ph phase) float64 { return ph.providerCPU().Seconds() },
		show: func(v float64) string { return secs(time.Duration(v * float64(time.Second))) }},
	{name: "provider peak RSS", value: func(_ *runFigures, ph phase) float64 { return float64(ph.maxRSS()) },
		show: func(v float64) string { return kb(int64(v)) }},
}

// scalePhases are the phases compared, in the order of a run.
var scalePhases = []struct {
	name string
	of   func(f *runFigures) phase
}{
	{"apply", func(f *runFigures) phase { return f.apply }},
	{"refresh-only plan", func(f *runFigures) phase { return f.refresh }},
	{"second plan", func(f *runFigures) phase { return f.plan }},
	{"destroy", func(f *runFigures) phase { return f.destroy }},
}

// scaleRuns are the fleet runs at the first fleet P from scaleBaseN up,
// ascending; nil unless scaleBaseN and a larger N are among them.
func scaleRuns(r *report, c benchConfig) []*runFigures {
	if len(c.fleetPs) == 0 {
		return nil
	}
	var out []*runFigures
	for _, f := range r.runs {
		if f.path == pathFleet && f.p == c.fleetPs[0] && f.n >= scaleBaseN {
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b *runFigures) int { return a.n - b.n })
	if len(out) < 2 || out[0].n != scaleBaseN {
		return nil
	}
	return out
}

// growth is a figure per member at f over the same at base.
func growth(base, f *runFigures, vb, vf float64) float64 {
	if vb <= 0 {
		return 0
	}
	return (vf / float64(f.n)) / (vb / float64(base.n))
}

func stateBytesPerMember(f *runFigures) float64 { return float64(f.stateBytes) / float64(f.n) }

// scaleSection is BENCHMARKS.md's side-by-side growth table.
func scaleSection(b *strings.Builder, r *report, c benchConfig) {
	runs := scaleRuns(r, c)
	if runs == nil {
		return
	}
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	base := runs[0]
	w("\n## Linear growth (fleet path, P=%d)\n\n", base.p)
	w("Each figure at N, and in brackets its value **per member** relative to N=%d's (≤ 1.00: the figure grows at "+
		"most linearly with the members). Timings, CPU time and memory are measured on a shared machine: a growth up "+
		"to %.2f counts as linear for them, %.2f for request counts and state bytes.\n\n", scaleBaseN, growthSlackNoisy, growthSlackExact)
	w("| Phase | Figure |")
	for _, f := range runs {
		w(" N=%d |", f.n)
	}
	w("\n|---|---|")
	for range runs {
		w("---|")
	}
	w("\n")
	for _, ph := range scalePhases {
		for _, m := range scaleMetrics {
			w("| %s | %s |", ph.name, m.name)
			vb := m.value(base, ph.of(base))
			for _, f := range runs {
				v := m.value(f, ph.of(f))
				if f == base {
					w(" %s |", m.show(v))
					continue
				}
				w(" %s (%.2f) |", m.show(v), growth(base, f, vb, v))
			}
			w("\n")
		}
	}
	w("| after apply | state bytes per member |")
	for _, f := range runs {
		if f == base {
			w(" %.0f |", stateBytesPerMember(f))
			continue
		}
		w(" %.0f (%.2f) |", stateBytesPerMember(f), stateBytesPerMember(f)/stateBytesPerMember(base))
	}
	w("\n")
	w("| apply | 429 answers (rate limits) |")
	for _, f := range runs {
		w(" %d |", f.apply.limited())
	}
	w("\n")
}

// scaleVerdicts are the scale targets: linear growth, the apply against
// W, CPU per member, the refresh, state, memory and the destroy.
func scaleVerdicts(r *report, c benchConfig) []verdict {
	var out []verdict
	p := defaultParallelism
	f1, f3, f10 := r.run(pathFleet, 1000, p), r.run(pathFleet, 3000, p), r.run(pathFleet, 10000, p)
	apply := func(f *runFigures, n int, bound float64) {
		name := fmt.Sprintf("fleet N=%d (P=%d): apply / W", n, p)
		if f == nil {
			out = append(out, notMeasured(name, fmt.Sprintf("≤ %.2f", bound), fmt.Sprintf("-fleet-n %d -fleet-p %d", n, p)))
			return
		}
		out = append(out, verdict{name: name, target: fmt.Sprintf("≤ %.2f", bound), pass: f.ratio() <= bound,
			value: fmt.Sprintf("%.2f (%s / %s)", f.ratio(), secs(f.apply.res.Duration), secs(f.limit))})
	}
	apply(f1, 1000, 1.4)
	apply(f3, 3000, 2.0)
	if f1 != nil && f3 != nil {
		c1, c3 := f1.apply.providerCPU().Seconds()/1000, f3.apply.providerCPU().Seconds()/3000
		out = append(out, verdict{name: "fleet: provider CPU per member during apply, N=3000 vs N=1000", target: "N=3000 ≤ N=1000",
			pass: c3 <= c1, value: fmt.Sprintf("%.2f ms vs %.2f ms", 1000*c3, 1000*c1)})
	} else {
		out = append(out, notMeasured("fleet: provider CPU per member during apply, N=3000 vs N=1000", "N=3000 ≤ N=1000", "-fleet-n 1000,3000"))
	}
	if f1 != nil {
		out = append(out, verdict{name: fmt.Sprintf("fleet N=1000 (P=%d): refresh (plan -refresh-only)", p), target: "≤ 1.5 s",
			value: fmt.Sprintf("%s (median of %s; every exit 0: %t)", secs(f1.refresh.res.Duration), durList(f1.refreshWalls), f1.refreshEmpty),
			pass:  f1.refresh.res.Duration <= 1500*time.Millisecond && f1.refreshEmpty})
		out = append(out, verdict{name: fmt.Sprintf("fleet N=1000 (P=%d): destroy / Wd", p), target: "≤ 3.00",
			value: fmt.Sprintf("%.2f (%s / %s)", f1.destroy.res.Duration.Seconds()/f1.Wd.Seconds(), secs(f1.destroy.res.Duration), secs(f1.Wd)),
			pass:  f1.destroy.res.Duration.Seconds() <= 3*f1.Wd.Seconds()})
		if f3 != nil {
			ratio := f3.destroy.res.Duration.Seconds() / f1.destroy.res.Duration.Seconds()
			out = append(out, verdict{name: fmt.Sprintf("fleet N=3000 (P=%d): destroy / destroy at N=1000", p), target: "≤ 2.50",
				value: fmt.Sprintf("%.2f (%s / %s)", ratio, secs(f3.destroy.res.Duration), secs(f1.destroy.res.Duration)), pass: ratio <= 2.5})
		}
	}
	for _, f := range []*runFigures{f1, f3, f10} {
		if f == nil || f.stateBytes == 0 {
			continue
		}
		out = append(out, verdict{name: fmt.Sprintf("fleet N=%d: state bytes per member", f.n), target: "≤ 600",
			value: fmt.Sprintf("%.0f (%d bytes)", stateBytesPerMember(f), f.stateBytes), pass: stateBytesPerMember(f) <= 600})
	}
	if f10 != nil {
		peak := int64(0)
		for _, ph := range scalePhases {
			peak = max(peak, ph.of(f10).maxRSS())
		}
		out = append(out, verdict{name: "fleet N=10000: provider peak RSS (any phase)", target: "≤ 300 MiB",
			value: kb(peak), pass: peak <= 300*1024})
	} else {
		out = append(out, notMeasured("fleet N=10000: provider peak RSS", "≤ 300 MiB", "-fleet-n 10000"))
	}
	if runs := scaleRuns(r, c); runs != nil {
		base := runs[0]
		for _, f := range runs[1:] {
			var worst []string
			pass := true
			for _, ph := range scalePhases {
				for _, m := range scaleMetrics {
					g := growth(base, f, m.value(base, ph.of(base)), m.value(f, ph.of(f)))
					bound := growthSlackNoisy
					if m.exact {
						bound = growthSlackExact
					}
					if g > bound {
						pass = false
						worst = append(worst, fmt.Sprintf("%s %s %.2f", ph.name, m.name, g))
					}
				}
			}
			if g := stateBytesPerMember(f) / stateBytesPerMember(base); g > growthSlackExact {
				pass = false
				worst = append(worst, fmt.Sprintf("state bytes %.2f", g))
			}
			value := "every figure per member at most its N=1000 value"
			if !pass {
				value = "per member above N=1000's: " + strings.Join(worst, ", ")
			}
			out = append(out, verdict{name: fmt.Sprintf("fleet N=%d vs N=1000: plan, refresh, apply, destroy grow at most linearly", f.n),
				target: "per member ≤ N=1000's", value: value, pass: pass})
		}
	}
	if f2, s := r.run(pathFleet, 200, p), r.sdkRun(200); f2 != nil && s != nil {
		speed := s.wall.Seconds() / f2.apply.res.Duration.Seconds()
		out = append(out, verdict{name: fmt.Sprintf("fleet N=200 (P=%d): apply vs the SDK stand-in (%d workers)", p, s.workers),
			target: "SDK stand-in ≥ 1.25 × fleet", pass: speed >= 1.25,
			value: fmt.Sprintf("fleet %s, SDK stand-in %s: the fleet path %.2f× faster", secs(f2.apply.res.Duration), secs(s.wall), speed)})
	} else {
		out = append(out, notMeasured("fleet N=200: apply vs the SDK stand-in", "SDK stand-in ≥ 1.25 × fleet", "-fleet-n 200 -sdk-n 200"))
	}
	return out
}

// profileSection is BENCHMARKS.md's summary of the profiled run's CPU
// profiles: where the provider's CPU goes, by package and by function.
func profileSection(b *strings.Builder, r *report) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	for _, f := range r.runs {
		if f.profiles == nil {
			continue
		}
		w("\n## Where the provider's CPU goes (fleet N=%d, P=%d)\n\n", f.n, f.p)
		w("CPU profiles of every provider process of the run (`PRIME_PROVIDER_CPU_PROFILE_DIR`), merged by phase and " +
			"summarised with `go tool pprof -top`: self time by package, then the functions with the most self time. " +
			"Shares are of the phase's samples.\n\n")
		phases := []string{"apply", "refresh", "plan", "destroy"}
		w("| | ")
		for _, ph := range phases {
			p := f.profiles[ph]
			if p.err != "" {
				w("%s (%s) | ", ph, p.err)
				continue
			}
			w("%s: %s of samples, %d processes | ", ph, secs(p.total), p.files)
		}
		w("\n|---|")
		for range phases {
			w("---|")
		}
		w("\n")
		const rows = 10
		for i := range rows {
			w("| package %d |", i+1)
			for _, ph := range phases {
				p := f.profiles[ph]
				if i < len(p.packages) {
					w(" %.1f%% `%s` |", p.packages[i].flatPct, p.packages[i].name)
				} else {
					w(" |")
				}
			}
			w("\n")
		}
		for i := range 15 {
			w("| function %d |", i+1)
			for _, ph := range phases {
				p := f.profiles[ph]
				if i < len(p.flat) {
					w(" %.1f%% self, %.1f%% with callees: `%s` |", p.flat[i].flatPct, p.flat[i].cumPct, p.flat[i].name)
				} else {
					w(" |")
				}
			}
			w("\n")
		}
	}
}
