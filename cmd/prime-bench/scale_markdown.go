package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// Markers of the scale section (make bench-scale replaces it alone).
const (
	scaleBegin = "<!-- BEGIN scale -->"
	scaleEnd   = "<!-- END scale -->"
)

// writeScaleOnly splices the scale section of a -scale-only invocation
// into the report file, leaving the rest of it as it was.
func writeScaleOnly(path string, c benchConfig, m machine, r *report) error {
	old, err := os.ReadFile(path) //nolint:gosec // G304: the report the user named
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	var b strings.Builder
	scaleOnlySection(&b, c, m, r)
	//nolint:gosec // BENCHMARKS.md is a documentation file of the repository, readable by all.
	return os.WriteFile(path, []byte(splice(string(old), scaleBegin, scaleEnd, b.String())), 0o644)
}

// scaleOnlySection is the fleet path from N=1,000 up, measured by an
// invocation of its own: how it was run, the scale targets, the runs, their
// growth per member, where the provider's CPU went, and the SDK stand-in.
func scaleOnlySection(b *strings.Builder, c benchConfig, m machine, r *report) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	_, exact := invocation(c)
	limits := "on (prime-mock's defaults: the platform's published limits, 429 with Retry-After)"
	if !c.rateLimits {
		limits = "off"
	}
	w("## Scale (`make bench-scale`)\n\n")
	w("Measured on %s by an invocation of its own, which replaces this section alone (the rest of the file comes from "+
		"the invocation above): `%s`. Mock settings boot %s, egress apply %s, gateway lag %s, latency %s; rate limits %s. "+
		"Load average (1/5/15 min) at start → end: %s → %s.\n\n",
		m.date.Format("2006-01-02 15:04 UTC"), exact, c.boot, c.apply, c.gatewayLag, c.latency, limits, m.loadStart, m.loadEnd)
	verdictTable(b, scaleVerdicts(r, c))
	var fleet []*runFigures
	for _, f := range r.runs {
		if f.path == pathFleet {
			fleet = append(fleet, f)
		}
	}
	if len(fleet) > 0 {
		w("\n### Fleet runs\n\n")
		runTable(b, fleet, c)
		scaleSection(b, r, c)
		profileSection(b, r)
	}
	if len(r.sdk) > 0 {
		w("\n### SDK stand-in\n\n")
		sdkTable(b, r, c)
	}
	w("\n")
}
