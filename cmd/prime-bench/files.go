package main

// The file run: task files in, results out. One prime_sandbox_fleet of N
// members, one prime_fleet_file unpacking a task archive on every member,
// the agent (a prime_fleet_command writing a small result), and a
// prime_fleet_file data source reading every member's result — measured
// beside the same fleet and agent without the file and the data source, in
// the same invocation and on the same mock settings.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
	"github.com/primeintellect/terraform-provider-prime/internal/soak"
	"github.com/primeintellect/terraform-provider-prime/internal/tfcli"
)

// providerFleetConcurrency is the default max_concurrency of
// prime_fleet_file, prime_fleet_command and the prime_fleet_file data
// source (the provider's defaultFleetConcurrency), which the file run
// leaves as it is.
const providerFleetConcurrency = 32

// Gateway routes of the mock's stats.
const (
	uploadRoute   = "POST /gateway/{user_ns}/{job_id}/upload"
	downloadRoute = "GET /gateway/{user_ns}/{job_id}/download"
	readFileRoute = "GET /gateway/{user_ns}/{job_id}/read-file"
	startRoute    = "POST /gateway/{user_ns}/{job_id}/command_session.CommandSession/Start"
)

// Command classes of the gateway's command_started events.
const (
	cmdProbe   = "probe"   // the readiness probe
	cmdMkdir   = "mkdir"   // a parent's mkdir before an upload (none since uploads create parents)
	cmdUnpack  = "unpack"  // PutFile: unpacking the archive (or moving a file) into place, parts joined first
	cmdCleanup = "cleanup" // PutFile: removing a failed upload's temporary file
	cmdAgent   = "agent"   // the agent's step
	cmdRemove  = "remove"  // prime_fleet_file's destroy: removing the task directory
	cmdOther   = "other"
)

// classifyCommand names what a gateway command was for, from its text (the
// provider's transfer commands, internal/prime/transfer.go).
func classifyCommand(cmd, agent string) string {
	switch {
	case cmd == gatewayProbe:
		return cmdProbe
	case cmd == agent:
		return cmdAgent
	case strings.Contains(cmd, ".prime-upload-") && (strings.Contains(cmd, "tar -xf ") || strings.HasPrefix(cmd, "mv -f -- ")):
		return cmdUnpack
	case strings.Contains(cmd, ".prime-upload-") && strings.HasPrefix(cmd, "rm -f -- "):
		return cmdCleanup
	case strings.HasPrefix(cmd, "mkdir -p -- "):
		return cmdMkdir
	case strings.HasPrefix(cmd, "rm -rf -- "+soak.TaskPath):
		return cmdRemove
	}
	return cmdOther
}

// gatewaySplit is a command's gateway requests by what they were for.
type gatewaySplit struct {
	// commands counts command_started events (Connect Start calls that ran
	// a command) by class.
	commands map[string]int
	// starts is every Start call (stats); the difference with the
	// commands is the calls that ran nothing (the gateway lag's
	// not_found answers to readiness probes).
	starts                     int
	uploads, downloads, reads  int
	uploadBytes                int64
	firstUpload, lastUnpack    time.Time
	firstAgent, lastAgent      time.Time
	lastResultRead             time.Time
	resultReads, resultReadsOK int
}

func splitGateway(ph phase, agent string) gatewaySplit {
	g := gatewaySplit{commands: map[string]int{}, starts: ph.requests[startRoute], uploads: ph.requests[uploadRoute],
		downloads: ph.requests[downloadRoute], reads: ph.requests[readFileRoute]}
	for _, e := range ph.events {
		switch e.Type {
		case primemock.EventCommandStarted:
			if e.Transport != "connect" {
				continue
			}
			class := classifyCommand(e.Command, agent)
			g.commands[class]++
			if class == cmdAgent && (g.firstAgent.IsZero() || e.Time.Before(g.firstAgent)) {
				g.firstAgent = e.Time
			}
		case primemock.EventCommandExecuted:
			switch classifyCommand(e.Command, agent) {
			case cmdUnpack:
				if e.Time.After(g.lastUnpack) {
					g.lastUnpack = e.Time
				}
			case cmdAgent:
				if e.Time.After(g.lastAgent) {
					g.lastAgent = e.Time
				}
			}
		case primemock.EventFileUploaded:
			g.uploadBytes += e.Size
			if g.firstUpload.IsZero() || e.Time.Before(g.firstUpload) {
				g.firstUpload = e.Time
			}
		case primemock.EventFileDownloaded:
			if e.Path == soak.ResultPath {
				g.resultReads++
				if e.Size == int64(len(soak.ResultContent)) {
					g.resultReadsOK++
				}
				if e.Time.After(g.lastResultRead) {
					g.lastResultRead = e.Time
				}
			}
		}
	}
	return g
}

// uploadCalls are the gateway requests of putting the file on the members:
// the uploads (one per part), the unpacking (and any clean-up; a parent's
// mkdir, which the provider no longer sends, would count too).
func (g gatewaySplit) uploadCalls() int {
	return g.commands[cmdMkdir] + g.uploads + g.commands[cmdUnpack] + g.commands[cmdCleanup]
}

// readCalls are the gateway requests of reading the results.
func (g gatewaySplit) readCalls() int { return g.downloads + g.reads }

// probeCalls are the readiness probes, those that ran and those the
// gateway lag answered not_found.
func (g gatewaySplit) probeCalls() int {
	ran := 0
	for _, n := range g.commands {
		ran += n
	}
	return g.commands[cmdProbe] + max(0, g.starts-ran)
}

func (g gatewaySplit) total() int { return g.starts + g.uploads + g.downloads + g.reads }

func span(a, b time.Time) time.Duration {
	if a.IsZero() || b.IsZero() {
		return 0
	}
	return b.Sub(a)
}

// fileFigures is one run of the file pair: with the file and the read, or
// the baseline without them.
type fileFigures struct {
	n        int
	files    bool
	archive  soak.TaskArchive
	apply    phase
	plan     phase
	destroy  phase
	split    gatewaySplit
	planRead gatewaySplit
	// planEmpty: the plan after the apply (which reads the data source
	// again) exited 0.
	planEmpty        bool
	liveAfterApply   int
	liveAfterDestroy int
	// resultsInState counts data source entries holding ResultContent.
	resultsInState int
	// spotChecked counts members whose unpacked data file matched the
	// archive's (a few members, through the mock's introspection).
	spotChecked, spotOK int
}

func (f *fileFigures) name() string {
	if f.files {
		return fmt.Sprintf("files N=%d", f.n)
	}
	return fmt.Sprintf("files baseline N=%d", f.n)
}

func (f *fileFigures) sane() bool {
	ok := f.planEmpty && f.liveAfterApply == f.n && f.liveAfterDestroy == 0
	if f.files {
		ok = ok && f.resultsInState == f.n && f.split.resultReadsOK == f.n && f.spotOK == f.spotChecked
	}
	return ok
}

// filePair is the file run and its baseline at one N, with the floor.
type filePair struct {
	n           int
	base, files *fileFigures
	ingest      ingestFigures
}

// fileFloor is the shortest the file run's apply can take: the baseline's
// apply (the same fleet and agent, measured), plus the file's and the
// read's own chain, member by member, at the configured latency — PutFile's
// gateway calls (one upload per part of at most 16 MiB, then the unpacking)
// and the data source's one read, max_concurrency members at a time — plus
// the archive's bytes over the mock's measured upload throughput (every
// member's copy crosses the one mock).
func fileFloor(base time.Duration, n, conc int, rtt time.Duration, archive int64, bytesPerSec float64) (floor, chain, transfer time.Duration) {
	rounds := (n + conc - 1) / conc
	chain = time.Duration(rounds) * time.Duration(uploadParts(archive)+2) * rtt
	if bytesPerSec > 0 {
		transfer = time.Duration(float64(n) * float64(archive) / bytesPerSec * float64(time.Second))
	}
	return base + chain + transfer, chain, transfer
}

func (p *filePair) floor(c benchConfig) (floor, chain, transfer time.Duration) {
	return fileFloor(p.base.apply.res.Duration, p.n, providerFleetConcurrency, rtt(c), p.files.archive.Size, p.ingest.bytesPerSec)
}

func (p *filePair) ratio(c benchConfig) float64 {
	fl, _, _ := p.floor(c)
	return p.files.apply.res.Duration.Seconds() / fl.Seconds()
}

// rssAbove is how much more the provider's peak RSS was with files, in KiB.
func (p *filePair) rssAbove() int64 { return p.files.apply.maxRSS() - p.base.apply.maxRSS() }

// rssAllowance is the target's bound on rssAbove: twice the archive plus
// 50 MiB, in KiB.
func rssAllowance(archive int64) int64 { return 2*archive/1024 + 50*1024 }

// fileRunPair measures the baseline, then the file run, at n; kind names
// the archive's set ("task", "big-task") in the runs' directories.
func fileRunPair(c benchConfig, kind string, n int, archive soak.TaskArchive) (*filePair, error) {
	p := &filePair{n: n}
	var err error
	fmt.Printf("\n=== files N=%d: mock upload throughput\n", n)
	if p.ingest, err = measureIngest(c, archive, providerFleetConcurrency); err != nil {
		return nil, fmt.Errorf("measuring the mock's upload throughput: %w", err)
	}
	fmt.Printf("mock upload throughput %.0f MiB/s (%s)\n", p.ingest.bytesPerSec/(1<<20), p.ingest)
	for _, files := range []bool{false, true} {
		what := "without files (baseline)"
		if files {
			what = fmt.Sprintf("with a %s task archive on every member and every result read", mib(archive.Size))
		}
		fmt.Printf("\n=== files N=%d %s: latency %s, boot %s, gateway lag %s\n", n, what, c.latency, c.boot, c.gatewayLag)
		f, err := fileRun(c, kind, n, files, archive)
		if err != nil {
			return nil, fmt.Errorf("file run N=%d (files %t): %w (work directory %s)", n, files, err, c.workdir)
		}
		if files {
			p.files = f
		} else {
			p.base = f
		}
	}
	printFilePair(c, p)
	return p, nil
}

// fileRunName names a file run's directory: the archive's set, N, and
// whether it is the baseline.
func fileRunName(kind string, n int, files bool) string {
	if files {
		return fmt.Sprintf("%s-n%d", kind, n)
	}
	return fmt.Sprintf("%s-n%d-base", kind, n)
}

func fileRun(c benchConfig, kind string, n int, files bool, archive soak.TaskArchive) (*fileFigures, error) {
	ctx := context.Background()
	env, err := newRunEnv(c, fileRunName(kind, n, files))
	if err != nil {
		return nil, err
	}
	defer env.Close()
	tf := soak.TaskFleet{N: n, BaseURL: env.mock.URL, ProviderExtra: c.providerExtra, Prefix: "bench"}
	if files {
		tf.TaskDir, tf.ReadResult = archive.Dir, true
	}
	if err := env.ws.WriteConfig(tf.HCL()); err != nil {
		return nil, err
	}
	if err := env.warmUp(ctx); err != nil {
		return nil, err
	}
	f := &fileFigures{n: n, files: files, archive: archive}
	if f.apply, err = env.run(ctx, "apply", "apply", "-auto-approve", "-input=false"); err != nil {
		return nil, err
	}
	if !f.apply.res.OK() {
		fmt.Println(f.apply.res.Tail(4000))
		env.ws.Run(ctx, "destroy", "-auto-approve", "-input=false")
		return nil, fmt.Errorf("apply failed: %s", f.apply.res.Describe())
	}
	f.split = splitGateway(f.apply, soak.ResultCommand)
	f.liveAfterApply = f.apply.stats.LiveSandboxes
	if files {
		state, err := env.ws.State(ctx)
		if err != nil {
			return nil, err
		}
		f.resultsInState = resultsIn(state)
		f.spotChecked, f.spotOK = spotCheck(ctx, env.mock, state, archive)
	}
	if f.plan, err = env.run(ctx, "plan", "plan", "-detailed-exitcode", "-input=false"); err != nil {
		return nil, err
	}
	f.planEmpty = f.plan.res.OK()
	if !f.planEmpty {
		fmt.Println(f.plan.res.Tail(3000))
	}
	f.planRead = splitGateway(f.plan, soak.ResultCommand)
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

// resultsIn counts the data source's entries that hold the agent's result.
func resultsIn(state []tfcli.StateResource) int {
	for _, r := range state {
		if r.Address != soak.ResultDataAddr {
			continue
		}
		files, _ := r.Values["files"].(map[string]any)
		n := 0
		for _, v := range files {
			if e, ok := v.(map[string]any); ok && e["content"] == soak.ResultContent {
				n++
			}
		}
		return n
	}
	return 0
}

// spotCheck compares, on a few members, the unpacked data file with the
// local one (through the mock's introspection: no latency, not counted).
func spotCheck(ctx context.Context, m *soak.Mock, state []tfcli.StateResource, archive soak.TaskArchive) (checked, ok int) {
	want, err := os.ReadFile(filepath.Join(archive.Dir, "data.bin"))
	if err != nil {
		return 1, 0
	}
	var ids []string
	for _, r := range state {
		if r.Address == soak.FleetAddr {
			m, _ := r.Values["sandbox_ids"].(map[string]any)
			for _, k := range []string{"0", "1", fmt.Sprint(len(m) / 2), fmt.Sprint(len(m) - 1)} {
				if id, _ := m[k].(string); id != "" {
					ids = append(ids, id)
				}
			}
		}
	}
	for _, id := range ids {
		checked++
		got, err := m.File(ctx, id, soak.TaskPath+"/data.bin")
		if err == nil && string(got) == string(want) {
			ok++
		}
	}
	return checked, ok
}

// ingestFigures is the mock's upload throughput, measured apart.
type ingestFigures struct {
	passes, uploads, concurrency int
	archive                      int64
	// wall is the fastest pass's, bytesPerSec its throughput.
	wall        time.Duration
	bytesPerSec float64
}

func (i ingestFigures) String() string {
	return fmt.Sprintf("fastest of %d passes of %d uploads of %s to %d sandboxes, one stream each: %s, latency 0",
		i.passes, i.uploads, mib(i.archive), i.concurrency, secs(i.wall))
}

// Ingest calibration: ingestPasses passes of ingestPerStream uploads on
// each of conc streams.
const (
	ingestPasses    = 3
	ingestPerStream = 2
)

// measureIngest uploads the archive to conc sandboxes of a mock of its
// own, with no latency, one stream per sandbox as the file run's members
// have, through the provider's client (each upload streamed from disk, as
// the provider's are): the mock's throughput of upload bytes on this
// machine, the transfer term of the floor. The fastest of a few passes
// counts (a floor takes the best the machine showed).
func measureIngest(c benchConfig, archive soak.TaskArchive, conc int) (ingestFigures, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	mock, err := startMock(c, "-latency", "0s", "-latency-jitter", "0s", "-boot-delay", "10ms", "-gateway-lag", "0s")
	if err != nil {
		return ingestFigures{}, err
	}
	defer mock.Close()
	cl, err := mock.Client()
	if err != nil {
		return ingestFigures{}, err
	}
	tarPath := filepath.Join(c.workdir, "ingest.tar")
	if err := writeArchive(tarPath, archive.Dir); err != nil {
		return ingestFigures{}, err
	}
	ids := make([]string, conc)
	// each runs fn on every stream at once and joins their errors.
	each := func(fn func(i int) error) error {
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			errs []error
		)
		for i := range conc {
			wg.Go(func() {
				if err := fn(i); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		return errors.Join(errs...)
	}
	// The archive goes up as PutFile sends it: in parts of at most 16 MiB
	// (the platform's limit per upload), without the join.
	upload := func(i, k int) error {
		for part := range uploadParts(archive.Size) {
			off := int64(part) * prime.MaxUploadBytes
			size := min(prime.MaxUploadBytes, archive.Size-off)
			ps := prime.UploadSource{Name: fmt.Sprintf("task.tar.part%d", part), Size: size, Open: func() (io.ReadCloser, error) {
				f, err := os.Open(tarPath) //nolint:gosec // the benchmark's own file
				if err != nil {
					return nil, err
				}
				if _, err := f.Seek(off, io.SeekStart); err != nil {
					f.Close()
					return nil, err
				}
				return struct {
					io.Reader
					io.Closer
				}{io.LimitReader(f, size), f}, nil
			}}
			if _, err := cl.UploadFile(ctx, ids[i], fmt.Sprintf("/tmp/ingest-%d.tar.part%d", k, part), ps); err != nil {
				return err
			}
		}
		return nil
	}
	// Sandboxes, connections and gateway tokens first, unmeasured.
	if err := each(func(i int) error {
		sb, err := cl.CreateSandbox(ctx, prime.CreateSandboxRequest{Name: fmt.Sprintf("ingest-%d", i), DockerImage: "python:3.12-slim"})
		if err != nil {
			return err
		}
		ids[i] = sb.ID
		if err := cl.WaitForReady(ctx, sb.ID, prime.WaitReadyOptions{Gateway: true}); err != nil {
			return err
		}
		return upload(i, -1)
	}); err != nil {
		return ingestFigures{}, err
	}
	out := ingestFigures{passes: ingestPasses, uploads: ingestPerStream * conc, concurrency: conc, archive: archive.Size}
	for range ingestPasses {
		start := time.Now()
		if err := each(func(i int) error {
			for k := range ingestPerStream {
				if err := upload(i, k); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return ingestFigures{}, err
		}
		if wall := time.Since(start); out.wall == 0 || wall < out.wall {
			out.wall = wall
		}
	}
	out.bytesPerSec = float64(int64(out.uploads)*archive.Size) / out.wall.Seconds()
	return out, nil
}

func writeArchive(path, dir string) error {
	f, err := os.Create(path) //nolint:gosec // the benchmark's work directory
	if err != nil {
		return err
	}
	_, werr := prime.WriteDirTar(f, dir)
	return errors.Join(werr, f.Close())
}

func mib(b int64) string {
	if b >= 1<<20 && b%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", b>>20)
	}
	return fmt.Sprintf("%.2f MiB", float64(b)/(1<<20))
}

func perN(v, n int) float64 { return float64(v) / float64(n) }

func printFilePair(c benchConfig, p *filePair) {
	b, f := p.base, p.files
	fl, chain, transfer := p.floor(c)
	fmt.Printf("\nfiles N=%d: apply %s with files, %s without; floor %s (baseline + chain %s + transfer %s) → ratio %.2f\n",
		p.n, secs(f.apply.res.Duration), secs(b.apply.res.Duration), secs(fl), secs(chain), secs(transfer), p.ratio(c))
	fmt.Printf("         per member: API %.2f (baseline %.2f); gateway %.2f: upload %.2f (mkdir %.2f, uploads %.2f, unpack %.2f), read %.2f, agent %.2f, probes %.2f\n",
		perN(f.apply.apiTotal(), p.n), perN(b.apply.apiTotal(), p.n), perN(f.split.total(), p.n), perN(f.split.uploadCalls(), p.n),
		perN(f.split.commands[cmdMkdir], p.n), perN(f.split.uploads, p.n), perN(f.split.commands[cmdUnpack], p.n),
		perN(f.split.readCalls(), p.n), perN(f.split.commands[cmdAgent], p.n), perN(f.split.probeCalls(), p.n))
	fmt.Printf("         upload span %s, read span %s; provider peak RSS %s with files, %s without (%s, allowed +%s)\n",
		secs(span(f.split.firstUpload, f.split.lastUnpack)), secs(span(f.split.lastAgent, f.split.lastResultRead)),
		kb(f.apply.maxRSS()), kb(b.apply.maxRSS()), signedKB(p.rssAbove()), kb(rssAllowance(f.archive.Size)))
	fmt.Printf("         results in state %d/%d, spot checks %d/%d, plan exit %d, destroy %s\n",
		f.resultsInState, p.n, f.spotOK, f.spotChecked, f.plan.res.ExitCode, secs(f.destroy.res.Duration))
}

// uploadParts is how many uploads PutFile makes of size bytes.
func uploadParts(size int64) int {
	return max(1, int((size+prime.MaxUploadBytes-1)/prime.MaxUploadBytes))
}

// roundUp is ⌈a/b⌉ for positive b.
func roundUp(a, b int) int { return int(math.Ceil(float64(a) / float64(b))) }

// runFilesAndJobs runs the file pairs, then the job pairs, after the rest
// of the matrix. The task archive is generated once, in the work
// directory.
func runFilesAndJobs(c benchConfig, rep *report) error {
	for _, set := range []struct {
		dir   string
		ns    []int
		bytes int64
	}{{"task", c.fileNs, c.fileBytes}, {"big-task", c.bigFileNs, c.bigFileBytes}} {
		if len(set.ns) == 0 {
			continue
		}
		archive, err := soak.WriteTaskDir(filepath.Join(c.workdir, set.dir), set.bytes, c.seed)
		if err != nil {
			return fmt.Errorf("generating the task directory: %w", err)
		}
		fmt.Printf("\ntask directory %s: archive of %d bytes, sha256 %s\n", archive.Dir, archive.Size, archive.SHA256)
		for _, n := range set.ns {
			p, err := fileRunPair(c, set.dir, n, archive)
			if err != nil {
				return err
			}
			rep.files = append(rep.files, p)
		}
	}
	for _, n := range c.jobNs {
		p, err := jobRunPair(c, n)
		if err != nil {
			return err
		}
		rep.jobs = append(rep.jobs, p)
	}
	return nil
}
