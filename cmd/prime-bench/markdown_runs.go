package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/soak"
)

// filesSection is BENCHMARKS.md's section of the file runs.
func filesSection(b *strings.Builder, r *report, c benchConfig) {
	if len(r.files) == 0 {
		return
	}
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	var sizes []string
	for _, p := range r.files {
		a := p.files.archive
		if s := fmt.Sprintf("%d bytes (%s, sha256 `%s`)", a.Size, mib(a.Size), a.SHA256); !slices.Contains(sizes, s) {
			sizes = append(sizes, s)
		}
	}
	w("\n## Task files in, results out\n\n")
	w("One `prime_sandbox_fleet` of N members, one `prime_fleet_file` unpacking a task directory into `/task` on every "+
		"member (`source_dir`: a generated directory whose archive is %s; nearly all of it pseudo-random, "+
		"incompressible bytes. An archive over the platform's 16 MiB upload limit goes up in parts of 16 MiB, joined "+
		"and sha256-checked in the sandbox before it is unpacked), the agent — a `prime_fleet_command` running `%s` — and a `prime_fleet_file` "+
		"data source reading `%s` from every member after it (`sandbox_ids` from the agent's `results`). Beside each, in "+
		"the same invocation and on the same mock settings, the **baseline**: the same fleet and agent without the file "+
		"and the data source. Every `max_concurrency` is the default (%d); Terraform's `-parallelism` is its default.\n\n",
		strings.Join(sizes, " or "), resultCommandShown(), soak.ResultPath, providerFleetConcurrency)
	w("| Figure |")
	for _, p := range r.files {
		w(" N=%d without files | N=%d with %s |", p.n, p.n, mib(p.files.archive.Size))
	}
	w("\n|---|")
	for range r.files {
		w("---|---|")
	}
	w("\n")
	row := func(name string, base, files func(p *filePair) string) {
		w("| %s |", name)
		for _, p := range r.files {
			bv := "—"
			if base != nil {
				bv = base(p)
			}
			w(" %s | %s |", bv, files(p))
		}
		w("\n")
	}
	both := func(fn func(f *fileFigures) string) (func(p *filePair) string, func(p *filePair) string) {
		return func(p *filePair) string { return fn(p.base) }, func(p *filePair) string { return fn(p.files) }
	}
	bRow := func(name string, fn func(f *fileFigures) string) {
		x, y := both(fn)
		row(name, x, y)
	}
	bRow("**apply wall time**", func(f *fileFigures) string { return secs(f.apply.res.Duration) })
	row("floor: baseline apply + chain + transfer", nil, func(p *filePair) string {
		fl, chain, transfer := p.floor(c)
		return fmt.Sprintf("%s = %s + %s + %s", secs(fl), secs(p.base.apply.res.Duration), secs(chain), secs(transfer))
	})
	row("**apply / floor**", nil, func(p *filePair) string { return fmt.Sprintf("**%.2f**", p.ratio(c)) })
	row("mock upload throughput (measured before the pair)", nil, func(p *filePair) string {
		return fmt.Sprintf("%.0f MiB/s (%s)", p.ingest.bytesPerSec/(1<<20), p.ingest)
	})
	row("upload span: first upload → last archive unpacked", nil, func(p *filePair) string {
		return secs(span(p.files.split.firstUpload, p.files.split.lastUnpack))
	})
	bRow("agent span: first agent command → last done", func(f *fileFigures) string {
		return secs(span(f.split.firstAgent, f.split.lastAgent))
	})
	row("read span: last agent command done → last result read", nil, func(p *filePair) string {
		return secs(span(p.files.split.lastAgent, p.files.split.lastResultRead))
	})
	bRow("**API requests per member (apply)**", func(f *fileFigures) string {
		return fmt.Sprintf("**%.2f** (%d)", perN(f.apply.apiTotal(), f.n), f.apply.apiTotal())
	})
	row("API requests per member the file and the read added", nil, func(p *filePair) string {
		return fmt.Sprintf("%+.2f", perN(p.files.apply.apiTotal()-p.base.apply.apiTotal(), p.n))
	})
	bRow("gateway requests per member (apply), all", func(f *fileFigures) string {
		return fmt.Sprintf("%.2f (%d)", perN(f.split.total(), f.n), f.split.total())
	})
	row("gateway, upload: uploads (parts) + join/unpack (+ clean-up, + mkdir)", nil, func(p *filePair) string {
		g := p.files.split
		return fmt.Sprintf("%.2f = %.2f + %.2f (+ %.2f, + %.2f)", perN(g.uploadCalls(), p.n), perN(g.uploads, p.n),
			perN(g.commands[cmdUnpack], p.n), perN(g.commands[cmdCleanup], p.n), perN(g.commands[cmdMkdir], p.n))
	})
	row("gateway, result read (download)", nil, func(p *filePair) string { return fmt.Sprintf("%.2f", perN(p.files.split.readCalls(), p.n)) })
	row("**gateway requests per member, upload + result read**", nil, func(p *filePair) string {
		g := p.files.split
		return fmt.Sprintf("**%.2f**", perN(g.uploadCalls()+g.readCalls(), p.n))
	})
	bRow("gateway, agent command / readiness probes / other", func(f *fileFigures) string {
		return fmt.Sprintf("%.2f / %.2f / %.2f", perN(f.split.commands[cmdAgent], f.n), perN(f.split.probeCalls(), f.n), perN(f.split.commands[cmdOther], f.n))
	})
	row("bytes uploaded (mock's `file_uploaded`)", nil, func(p *filePair) string {
		return fmt.Sprintf("%s (%s per member)", mib(p.files.split.uploadBytes), mib(p.files.split.uploadBytes/int64(p.n)))
	})
	bRow("**provider peak RSS, apply**", func(f *fileFigures) string {
		return fmt.Sprintf("**%s** (max of %d processes)", kb(f.apply.maxRSS()), len(f.apply.rss))
	})
	row("provider peak RSS above the baseline (allowed: 2 × archive + 50 MiB)", nil, func(p *filePair) string {
		return fmt.Sprintf("%s (%s)", signedKB(p.rssAbove()), kb(rssAllowance(p.files.archive.Size)))
	})
	bRow("CPU time during apply (user + system)", func(f *fileFigures) string { return f.apply.cpuNote() })
	bRow("second `plan -detailed-exitcode` (reads the data source again)", func(f *fileFigures) string {
		return fmt.Sprintf("%s (exit %d; %.2f gateway reads per member; RSS %s)", secs(f.plan.res.Duration), f.plan.res.ExitCode,
			perN(f.planRead.readCalls(), f.n), kb(f.plan.maxRSS()))
	})
	bRow("destroy wall time (the file's removal from every member, then the fleet)", func(f *fileFigures) string {
		g := splitGateway(f.destroy, soak.ResultCommand)
		return fmt.Sprintf("%s (gateway requests per member: %.2f: `rm -rf` %.2f, the data source read again by the destroy's plan %.2f)",
			secs(f.destroy.res.Duration), perN(g.total(), f.n), perN(g.commands[cmdRemove], f.n), perN(g.readCalls(), f.n))
	})
	row("results in state (`data.prime_fleet_file.result.files`) / task data intact on the members checked", nil, func(p *filePair) string {
		return fmt.Sprintf("%d of %d / %d of %d", p.files.resultsInState, p.n, p.files.spotOK, p.files.spotChecked)
	})
	bRow("live sandboxes after apply / after destroy", func(f *fileFigures) string {
		return fmt.Sprintf("%d / %d", f.liveAfterApply, f.liveAfterDestroy)
	})

	w("\nRequests of the applies, by route:\n\n| Route |")
	var phases []phase
	for _, p := range r.files {
		w(" N=%d without | N=%d with |", p.n, p.n)
		phases = append(phases, p.base.apply, p.files.apply)
	}
	w("\n|---|")
	for range phases {
		w("---|")
	}
	w("\n")
	routeRows(b, phases)
}

// jobsSection is BENCHMARKS.md's section of the background-job runs.
func jobsSection(b *strings.Builder, r *report, c benchConfig) {
	if len(r.jobs) == 0 {
		return
	}
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	w("\n## Background jobs\n\n")
	w("One `prime_sandbox_fleet` of N members and its agent, a `prime_fleet_command` with `background = true` running "+
		"`%s`: %d s of mock time, which the mock's `sleep_scale` %g makes %s of wall time. Beside it, in the same "+
		"invocation and on the same mock settings, the **baseline**: the same fleet with a foreground no-op agent (`%s`). "+
		"Each runs %d times, alternately (baseline, job, baseline, job); the first of each also plans again and destroys. "+
		"Both agents have `max_concurrency = N` (every member's job runs at once; a background member holds no gateway "+
		"stream while it waits), and both runs send their API requests through the recording proxy (`trace.go`), which "+
		"times every background-jobs `status:batchGet` and reads its answer; it adds one loopback hop to every API "+
		"request of both (the gateway, whose URL the mock derives from the request's host, is reached directly). The "+
		"provider polls every job with one shared poller per process, every %s (its default), in requests of up to %d jobs.\n\n",
		jobCommand(c.jobSeconds), c.jobSeconds, c.jobScale, secs(r.jobs[0].jobRuns()[0].jobWall), noopCommand, jobRepeats,
		jobPollInterval, prime.MaxBatchJobs)
	for _, p := range r.jobs {
		w("**N=%d: the job added %s to the apply** (the fastest job run's %s − the fastest baseline's %s; allowed: the job's %s + 2 s = %s). "+
			"From the fleet ready on (the fleet's boot, common to both, left out), the same two runs differ by %s.\n\n",
			p.n, secs3(p.added()), secs(fastest(p.jobRuns()).apply.res.Duration), secs(fastest(p.baselines()).apply.res.Duration),
			secs(p.allowed()-2*time.Second), secs(p.allowed()), secs(p.addedAfterReady()))
	}
	w("| Figure |")
	var cols []*jobFigures
	for _, p := range r.jobs {
		for _, f := range p.runs {
			kind := "no-op"
			if f.background {
				kind = "background job"
			}
			w(" N=%d %s, run %d |", p.n, kind, f.round)
			cols = append(cols, f)
		}
	}
	w("\n|---|")
	for range cols {
		w("---|")
	}
	w("\n")
	// row writes fn of every run; job rows give "—" for the baselines,
	// first-round rows for the later rounds.
	row := func(name string, jobOnly, firstOnly bool, fn func(f *jobFigures) string) {
		w("| %s |", name)
		for _, f := range cols {
			switch {
			case jobOnly && !f.background, firstOnly && f.round > 1:
				w(" — |")
			default:
				w(" %s |", fn(f))
			}
		}
		w("\n")
	}
	row("**apply wall time**", false, false, func(f *jobFigures) string { return fmt.Sprintf("**%s**", secs(f.apply.res.Duration)) })
	row("apply start → first sandbox created / → fleet ready (last readiness probe answered)", false, false, func(f *jobFigures) string {
		x, y := f.fleetSteps()
		return fmt.Sprintf("%s / %s", secs(x), secs(y))
	})
	row("fleet ready → apply exit", false, false, func(f *jobFigures) string { return secs(f.agentPart()) })
	row("… Terraform to the agent's first command / the agent's commands / last one done → exit", false, false, func(f *jobFigures) string {
		a, b, c := f.agentSteps()
		return fmt.Sprintf("%s / %s / %s", secs(a), secs(b), secs(c))
	})
	row("… the job's commands: starts (first → last) / last start → last end / → last job seen / → last output read done", true, false,
		func(f *jobFigures) string {
			st, lj, po, rd := f.jobSteps()
			return fmt.Sprintf("%s / %s / %s / %s", secs(st), secs(lj), secs(po), secs(rd))
		})
	row("job ends: first → last (`command_executed`, transport background)", true, false, func(f *jobFigures) string { return secs(f.endSpread) })
	row("window: first job start → last job end", true, false, func(f *jobFigures) string { return secs(f.window()) })
	row("background-jobs `status:batchGet` requests in the window (in the whole apply)", true, false, func(f *jobFigures) string {
		return fmt.Sprintf("%d (%d)", f.statusInWindow, f.statusAll)
	})
	row("poll rounds the window holds at the interval: ⌊window / interval⌋ + 1", true, false, func(f *jobFigures) string { return fmt.Sprint(f.allowedRounds) })
	row("**status requests per poll round** (bound: 1.2 × ⌈N/100⌉)", true, false, func(f *jobFigures) string {
		return fmt.Sprintf("**%.2f** (%.1f)", f.perRound(), batchesPerRound(f.n))
	})
	row("rounds counted from the request times (a gap over interval / 2 starts one): count, mean, max requests", true, false, func(f *jobFigures) string {
		return fmt.Sprintf("%d, %.2f, %d", len(f.rounds), meanInt(f.rounds), maxInt(f.rounds))
	})
	row("jobs per request in the window: mean / max", true, false, func(f *jobFigures) string {
		return fmt.Sprintf("%.1f / %d", meanInt(f.batchSizes), maxInt(f.batchSizes))
	})
	row("**job end → status answer reporting it completed** (seen)", true, false, func(f *jobFigures) string { return f.seen.String() })
	row("job end → the provider's read of its output starts (mock events only)", true, false, func(f *jobFigures) string { return f.reacted.String() })
	row("**API requests per member (apply)**", false, false, func(f *jobFigures) string {
		return fmt.Sprintf("**%.2f** (%d)", perN(f.apply.apiTotal(), f.n), f.apply.apiTotal())
	})
	row("sandbox `status:batchGet` requests per member (apply)", false, false, func(f *jobFigures) string {
		return fmt.Sprintf("%.2f (%d)", perMember(f.apply, statusRoute, f.n), f.apply.requests[statusRoute])
	})
	row("gateway requests per member (apply)", false, false, func(f *jobFigures) string {
		return fmt.Sprintf("%.2f (%d)", perN(f.apply.gatewayTotal(), f.n), f.apply.gatewayTotal())
	})
	row("**provider peak RSS, apply**", false, false, func(f *jobFigures) string {
		return fmt.Sprintf("**%s** (max of %d processes)", kb(f.apply.maxRSS()), len(f.apply.rss))
	})
	row("CPU time during apply (user + system)", false, false, func(f *jobFigures) string { return f.apply.cpuNote() })
	row("second `plan -detailed-exitcode`", false, true, func(f *jobFigures) string {
		return fmt.Sprintf("%s (exit %d, %d API requests)", secs(f.plan.res.Duration), f.plan.res.ExitCode, f.plan.apiTotal())
	})
	row("destroy wall time / live sandboxes after it", false, true, func(f *jobFigures) string {
		return fmt.Sprintf("%s / %d", secs(f.destroy.res.Duration), f.liveAfterDestroy)
	})
	row("results in state (exit 0, output `done`) / live sandboxes after apply", false, false, func(f *jobFigures) string {
		return fmt.Sprintf("%d / %d", f.results, f.liveAfterApply)
	})
	w("\nRequests of the applies, by route:\n\n| Route |")
	var phases []phase
	for _, f := range cols {
		kind := "no-op"
		if f.background {
			kind = "job"
		}
		w(" N=%d %s %d |", f.n, kind, f.round)
		phases = append(phases, f.apply)
	}
	w("\n|---|")
	for range phases {
		w("---|")
	}
	w("\n")
	routeRows(b, phases)
}

// routeRows writes one row per route any of the phases used.
func routeRows(b *strings.Builder, phases []phase) {
	routes := map[string]bool{}
	for _, ph := range phases {
		for k := range ph.requests {
			routes[k] = true
		}
	}
	keys := make([]string, 0, len(routes))
	for k := range routes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(b, "| `%s` |", k)
		for _, ph := range phases {
			fmt.Fprintf(b, " %d |", ph.requests[k])
		}
		b.WriteString("\n")
	}
}

// howFilesAndJobs explains the new runs' figures.
func howFilesAndJobs(b *strings.Builder, r *report, c benchConfig) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	if len(r.files) > 0 {
		w("- **File run, phases**: the apply's gateway requests are split by what they were for, from the mock's "+
			"`command_started` events (one per Connect `Start` that ran a command) and its per-route counters: the upload "+
			"route (one request per part of at most 16 MiB, the platform's limit per upload; the upload creates the "+
			"parent, so PutFile sends no `mkdir`, which would be counted apart) and the unpacking (`mkdir -p -- /task && "+
			"tar -xf …`, for an archive in parts preceded by joining the parts and checking the joined file's sha256, in "+
			"the same command) are the upload; the download route (and read-file, unused) is the result read; the agent's "+
			"command, the readiness probes (`%s`, plus the `Start` calls the gateway lag answered `not_found`, which ran "+
			"nothing) and anything else are counted apart. The target's floor is PutFile's uploads (⌈archive / 16 MiB⌉) "+
			"and unpacking plus the data source's 1 read. API requests per member are the `/api/v1` routes over N; what "+
			"the file and the read added is the difference with the baseline. The spans come from the same events: first "+
			"`file_uploaded` → last unpacking done; last agent command done → last `file_downloaded` of the result.\n", gatewayProbe)
		w("- **File run, floor**: the baseline's apply (measured just before, same N: the fleet and the agent), plus "+
			"the chain the file and the read add, member by member at the configured round trip (rtt = %s): PutFile's "+
			"gateway calls (one upload per part, the unpacking) and the read's 1, %d members at a time (the default "+
			"`max_concurrency`), so ⌈N / %d⌉ × (parts + 2) × rtt; "+
			"plus the transfer: N × the archive's size over the mock's upload throughput, measured before each pair "+
			"against a mock of its own with no latency (%d sandboxes, one upload stream each as the run's members have, "+
			"%d uploads of the archive per stream, in parts as PutFile sends it, streamed from disk by the provider's "+
			"client as the provider streams them; the fastest of %d passes, since a floor takes the best this machine "+
			"showed). Every member's copy crosses the one mock "+
			"process on this 2-core machine, so the bytes cannot arrive faster. Terraform's own work for the two added "+
			"graph nodes, the joining and unpacking's CPU in the mock and the token requests are not in it; the baseline is a measured "+
			"run, so its noise (a few tenths of a second here) is the floor's too.\n",
			ms(rtt(c)), providerFleetConcurrency, providerFleetConcurrency, providerFleetConcurrency, ingestPerStream, ingestPasses)
		w("- **File run, memory**: the provider's peak RSS (`ru_maxrss`, as above) of the file run's apply minus the " +
			"baseline's at the same N; the target allows twice the archive plus 50 MiB. The provider archives a " +
			"`source_dir` once into a temporary file and streams every upload from it (multipart framing around the " +
			"file's reader, exact Content-Length), so no member's copy is held in memory.\n")
		w("- **File run, sanity**: the data source's `files` must hold the result on every member, the mock must have " +
			"answered every result download with its bytes, the unpacked `data.bin` must equal the local one on four " +
			"members (first, second, middle, last; through `/_mock/sandbox/{id}/file`, not counted), the second plan " +
			"must be empty and the destroy must leave nothing.\n")
	}
	if len(r.jobs) > 0 {
		w("- **Background jobs, why `sleep_scale`**: the job is `sleep %d` in the mock's shell, and `sleep_scale` %g "+
			"shortens its wall time to %s. Nothing else changes: the provider's poll interval is wall time (1 s), so the "+
			"end → seen latency, the requests per round and the overhead over the job do not depend on the job's "+
			"length once it spans many rounds; a real 60 s would add 45 s of waiting per run and no information.\n",
			c.jobSeconds, c.jobScale, secs(r.jobs[0].jobRuns()[0].jobWall))
		w("- **Background jobs, status requests per round**: every background-jobs `status:batchGet` the proxy saw " +
			"start between the first job start and the last job end (the mock's `command_started` and " +
			"`command_executed` events of the jobs' processes, transport `background`), divided by the rounds that " +
			"window holds at the provider's poll interval, ⌊window / 1 s⌋ + 1 (a poller polling faster than its " +
			"interval would exceed the bound). Cross-check: rounds counted from the requests' start times, a gap over " +
			"half the interval starting a new round (a round sends all its chunks at once); their largest round must " +
			"stay within the bound too.\n")
		w("- **Background jobs, end → seen**: for every job, from the mock's `command_executed` of its process (its " +
			"exit file is written just before) to the end of the first batch answer the proxy relayed that reported it " +
			"`completed` — the moment the provider had it. Jobs are matched by sandbox and job id (the id is in the " +
			"process's script, `/tmp/job_<id>.exit`). Median, p95 by nearest rank. With a 1 s interval the wait is 0 to " +
			"1 s: every job here lasts the same, and they start within a second of the poller's first round, so a job " +
			"started ε after that round ends ε after a round too and waits about 1 s − ε (uniform phases would give a " +
			"0.5 s median). Informational: end → the start of the command reading the job's output (the provider's " +
			"next act), from the mock's events alone.\n")
		w("- **Background jobs, overhead**: the background run's apply wall time minus the baseline's (same fleet, a " +
			"foreground `echo done` at the same `max_concurrency`), against the job's wall time + 2 s: starting the " +
			"jobs, the poll latency and reading each job's output must fit in 2 s. Each of the two runs twice, " +
			"alternately (this machine is shared: one 1000-member apply moved by several seconds under another agent's " +
			"load), and the fastest run of each — the least disturbed — is compared. Cross-check, less exposed to that " +
			"noise: the same difference from the fleet's readiness on (the mock's last readiness-probe " +
			"`command_executed` → terraform's exit), which leaves out the fleet's boot, common to both. The rows below " +
			"split that part: Terraform moving on to the agent, the agent's commands (for the job: the starts, the last " +
			"job's run, the poll that saw it, the output reads), and what follows the last command until terraform exits " +
			"(building and storing 1000 results).\n")
	}
}

func resultCommandShown() string { return strings.ReplaceAll(soak.ResultCommand, "|", "\\|") }
