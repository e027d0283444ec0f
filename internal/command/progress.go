package command

// Progress of long waits over many members (a fleet command's run, a
// background job's wait; a fleet's egress locks can use the same): the
// only channels Terraform gives a resource for progress are its log and
// the local disk, so the reporter writes INFO log lines with the counts at
// a steady pace, and, given a file, keeps a JSON progress file up to date
// (rewritten atomically: a reader never sees half of it).

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// Paces of the reporter; variables so tests can shorten them.
var (
	progressLogEvery  = 15 * time.Second // INFO lines with the counts
	progressFileEvery = time.Second      // at most one rewrite of the file per period
)

// ProgressFileName is the progress file's name in an output_dir.
const ProgressFileName = "progress.json"

// Member states the command resources report.
const (
	ProgressWaiting   = "waiting"   // not started yet (every member starts so)
	ProgressRunning   = "running"   // a step runs
	ProgressSucceeded = "succeeded" // every step succeeded
	ProgressFailed    = "failed"    // recorded as failed
	ProgressLeft      = "left"      // left running (interrupted), or its outcome unknown: the next apply collects it
)

// commandProgressStates are the states a command run reports, in the order
// its log lines count them.
var commandProgressStates = []string{ProgressSucceeded, ProgressFailed, ProgressRunning, ProgressWaiting, ProgressLeft}

// memberProgressState is one member's entry of the progress file.
type memberProgressState struct {
	State     string `json:"state"`
	Step      int    `json:"step,omitempty"` // 1-based; 0: none yet
	Steps     int    `json:"steps,omitempty"`
	SandboxID string `json:"sandbox_id,omitempty"`
	JobID     string `json:"job_id,omitempty"`
	Error     string `json:"error,omitempty"`
}

// progressOptions describe one reported operation.
type progressOptions struct {
	What   string   // who reports, e.g. "prime_fleet_command" (log lines and the file)
	Keys   []string // the members, each starting as ProgressWaiting
	States []string // the states counted in log lines, in order
	File   string   // the progress file; "" for none
}

// progressReporter reports one operation's progress; its methods are safe
// for concurrent use and nil-safe (a nil reporter reports nothing).
type progressReporter struct {
	opts                progressOptions
	ctx                 context.Context
	started             time.Time
	logEvery, fileEvery time.Duration

	mu      sync.Mutex
	members map[string]*memberProgressState
	dirty   bool
	fileErr error

	stopOnce sync.Once
	done     chan struct{}
	wg       sync.WaitGroup
}

// newProgressReporter starts reporting; stop ends it.
func newProgressReporter(ctx context.Context, opts progressOptions) *progressReporter {
	p := &progressReporter{opts: opts, ctx: ctx, started: time.Now(), members: map[string]*memberProgressState{},
		done: make(chan struct{}), logEvery: progressLogEvery, fileEvery: progressFileEvery}
	for _, k := range opts.Keys {
		p.members[k] = &memberProgressState{State: ProgressWaiting}
	}
	p.dirty = true
	p.wg.Add(1)
	go p.loop()
	return p
}

// update changes member key's entry.
func (p *progressReporter) update(key string, change func(m *memberProgressState)) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	m := p.members[key]
	if m == nil {
		m = &memberProgressState{State: ProgressWaiting}
		p.members[key] = m
	}
	change(m)
	p.dirty = true
}

// set puts member key in state.
func (p *progressReporter) set(key, state string) {
	p.update(key, func(m *memberProgressState) { m.State = state })
}

// stop writes the last progress file and a last log line, and ends the
// reporter. It returns the progress file's write error, if any.
func (p *progressReporter) stop() error {
	if p == nil {
		return nil
	}
	p.stopOnce.Do(func() {
		close(p.done)
		p.wg.Wait()
		p.logCounts("finished")
		p.writeFile()
	})
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fileErr
}

func (p *progressReporter) loop() {
	defer p.wg.Done()
	logs := time.NewTicker(p.logEvery)
	defer logs.Stop()
	var files <-chan time.Time
	if p.opts.File != "" {
		t := time.NewTicker(p.fileEvery)
		defer t.Stop()
		files = t.C
		p.writeFile()
	}
	for {
		select {
		case <-p.done:
			return
		case <-logs.C:
			p.logCounts("in progress")
		case <-files:
			p.writeFile()
		}
	}
}

// counts is how many members are in each state.
func (p *progressReporter) counts() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]int{}
	for _, m := range p.members {
		out[m.State]++
	}
	return out
}

// summary is the counts as one phrase: "3 succeeded, 1 failed, 2 running
// of 6" (states with no member left out).
func (p *progressReporter) summary() string {
	counts := p.counts()
	var parts []string
	total := 0
	for _, n := range counts {
		total += n
	}
	for _, s := range p.opts.States {
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
	}
	if len(parts) == 0 {
		parts = []string{"nothing"}
	}
	return fmt.Sprintf("%s of %d", strings.Join(parts, ", "), total)
}

func (p *progressReporter) logCounts(phase string) {
	fields := map[string]any{"elapsed": time.Since(p.started).Round(time.Second).String()}
	for s, n := range p.counts() {
		fields[s] = n
	}
	tflog.Info(p.ctx, fmt.Sprintf("%s %s: %s", p.opts.What, phase, p.summary()), fields)
}

// ProgressFile is the progress file's content.
type ProgressFile struct {
	What     string                         `json:"resource"`
	Started  time.Time                      `json:"started_at"`
	Updated  time.Time                      `json:"updated_at"`
	Finished bool                           `json:"finished"`
	Total    int                            `json:"total"`
	Counts   map[string]int                 `json:"counts"`
	Summary  string                         `json:"summary"`
	Members  map[string]memberProgressState `json:"members"`
}

// writeFile rewrites the progress file when something changed: a
// temporary file beside it, renamed over it. A failure is kept for stop
// and does not stop the run.
func (p *progressReporter) writeFile() {
	if p.opts.File == "" {
		return
	}
	finished := false
	select {
	case <-p.done:
		finished = true
	default:
	}
	p.mu.Lock()
	if !p.dirty && !finished {
		p.mu.Unlock()
		return
	}
	doc := ProgressFile{What: p.opts.What, Started: p.started.UTC(), Updated: time.Now().UTC(), Finished: finished,
		Total: len(p.members), Counts: map[string]int{}, Members: make(map[string]memberProgressState, len(p.members))}
	for k, m := range p.members {
		doc.Members[k] = *m
		doc.Counts[m.State]++
	}
	p.dirty = false
	p.mu.Unlock()
	doc.Summary = p.summary()
	err := writeFileAtomically(p.opts.File, func(f *os.File) error {
		enc := json.NewEncoder(f)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	})
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil && p.fileErr == nil {
		p.fileErr = fmt.Errorf("writing the progress file %s: %w", p.opts.File, err)
	}
}

// writeFileAtomically writes path through a temporary file in its
// directory, renamed over it once complete.
func writeFileAtomically(path string, write func(*os.File) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil { //nolint:gosec // G301: the operator's output directory
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	if err := write(tmp); err != nil {
		_ = tmp.Close()
		_ = os.Remove(name)
		return err
	}
	if err := tmp.Close(); err != nil {
		_ = os.Remove(name)
		return err
	}
	if err := os.Chmod(name, 0o644); err != nil { //nolint:gosec // G302: the operator's to read, as the logs beside it
		_ = os.Remove(name)
		return err
	}
	return os.Rename(name, path)
}
