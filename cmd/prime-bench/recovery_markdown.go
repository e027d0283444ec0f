package main

import (
	"fmt"
	"strings"
)

// Markers of the recovery section (make bench-recovery replaces it alone).
const (
	recoveryBegin = "<!-- BEGIN recovery -->"
	recoveryEnd   = "<!-- END recovery -->"
)

func recoverySection(b *strings.Builder, figs []*recoveryFigures, c benchConfig) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	w("## Recovery after a lost runner\n\n")
	w("What recovery from the platform costs (the `tfprime-` labels of every sandbox and the lookup before a fleet's " +
		"first create; the claim in each background job's start command, which adds no request), on the fleet path's " +
		"job: one `prime_sandbox_fleet` of N and one `prime_fleet_egress_policy`, each run against its own mock with the " +
		"settings above, its API requests through the recording proxy (one more loopback hop, in every run of this " +
		"section alike). **Off** is `platform_recovery = false`. A **lost runner** is Terraform and its provider " +
		"SIGKILLed once half the members exist, and the next apply run with a new `HOME`, so an empty cache directory: " +
		"none of the create journal. `make bench-recovery` runs this section alone.\n\n")
	for _, f := range figs {
		off, on := f.normal[0], f.normal[1]
		w("### N=%d\n\n", f.n)
		w("| A normal apply (nothing lost) | recovery off | recovery on | on − off |\n|---|---|---|---|\n")
		w("| apply wall time | %s | %s | %+.2f s |\n", secs(off.res.Duration), secs(on.res.Duration), (on.res.Duration - off.res.Duration).Seconds())
		w("| API requests | %d | %d | %+d |\n", off.apiTotal(), on.apiTotal(), on.apiTotal()-off.apiTotal())
		w("| of which list requests (`%s`) | %d | %d | %+d |\n", listRoute, off.requests[listRoute], on.requests[listRoute],
			on.requests[listRoute]-off.requests[listRoute])
		w("| gateway requests | %d | %d | %+d |\n\n", off.gatewayTotal(), on.gatewayTotal(), on.gatewayTotal()-off.gatewayTotal())

		lo, ln := f.lost[0], f.lost[1]
		w("| An apply after a lost runner | recovery off | recovery on |\n|---|---|---|\n")
		w("| sandboxes made when the runner was lost | %d | %d |\n", lo.killedAt, ln.killedAt)
		w("| the recovering apply's wall time | %s (%.2f× a normal apply) | %s (%.2f× a normal apply) |\n",
			secs(lo.recover.res.Duration), ratio(lo.recover.res.Duration, off.res.Duration),
			secs(ln.recover.res.Duration), ratio(ln.recover.res.Duration, on.res.Duration))
		w("| its API requests | %d | %d |\n", lo.recover.apiTotal(), ln.recover.apiTotal())
		w("| its creates sent | %d | %d |\n", lo.recover.requests[createRoute], ln.recover.requests[createRoute])
		w("| sandboxes it adopted | %d | %d |\n", max(0, lo.adopted(f.n)), max(0, ln.adopted(f.n)))
		w("| sandboxes made in all (want %d) | %d | %d |\n", f.n, lo.created, ln.created)
		w("| live after it (want %d); leaked | %d; %d | %d; %d |\n", f.n, lo.live, lo.live-f.n, ln.live, ln.live-f.n)
		w("| live after destroy (want 0) | %d | %d |\n", lo.left, ln.left)
		w("| next plan empty | %s | %s |\n", yesNo(lo.planEmpty), yesNo(ln.planEmpty))
		w("| the longest create round trip of the lost apply | %s | %s |\n", ms(lo.maxCreate), ms(ln.maxCreate))
		w("| the loss → the recovering apply's lookup | – (none) | %s |\n\n", secs(ln.lookGap))

		j := f.jobs
		w("Background agents after a lost runner: the fleet's agent a background job of %d s of mock time (%s of wall "+
			"time at sleep_scale %g), SIGKILLed %s after the first agent started (every agent had), applied again from a new "+
			"`HOME`: the recovering apply took **%s**, attaching to every claimed job (its wait is what is left of the jobs); "+
			"**%d agent starts for %d members** (want %d), %d results in state.\n\n",
			c.jobSeconds, secs(j.jobWall), c.jobScale, secs(j.killAfter), secs(j.recover.res.Duration), j.starts, f.n, f.n, j.results)
	}
	w("How to read it: a normal apply pays one list request per team before its first create (more pages when many of the " +
		"workspace's sandboxes run), and nothing per member. After a loss, recovery turns the lost apply's sandboxes into " +
		"members instead of leaks; off, they run on untracked until their `timeout_minutes`. The window in which a loss can " +
		"still leak a sandbox is a create the platform commits after the new runner's lookup: a create in flight at the " +
		"loss is committed within its round trip (the second-to-last row: the longest here), and the lookup came the last " +
		"row's time after the loss (a new CI runner adds its own start-up on top), so here that window was closed by a " +
		"margin of their difference.\n\n")
}

func ratio(a, b interface{ Seconds() float64 }) float64 {
	if b.Seconds() == 0 {
		return 0
	}
	return a.Seconds() / b.Seconds()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
