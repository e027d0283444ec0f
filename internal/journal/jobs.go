package journal

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// The job journal is the create journal's counterpart for background
// commands. A job lives in its sandbox, not in the provider process: when
// Terraform is killed (SIGKILL, OOM, a lost CI runner) or the provider
// crashes while it waits, the job goes on, and nothing in state says it
// exists. Starting the command again then would run the agent twice.
//
// So before a job is started, its ID is written to a small file here, and
// the file is held under an exclusive lock while this process waits. A
// failure that the next apply runs again by design removes the file. A
// result returned to Terraform hands it over, as the create journal does
// (Terraform may be killed before it stores the result): unlocked and kept
// until a plan shows the result in state (Forget), or until handOverGrace
// after Terraform shut the provider down cleanly (ReleaseAll). A file nobody holds a
// lock on belongs to a process that died, or to a wait whose outcome is
// unknown (it was interrupted, the job could not be stopped, its output
// could not be read): the next apply of the same command (same run hash)
// attaches to that job instead of starting a new one.
//
// Like the create journal it is best effort, per Terraform working
// directory under the user cache directory, under the same switch.

// jobJournalWindow is how long a leftover entry is kept. A job that old
// has long outlived any timeout a command may have (at most a week).
const jobJournalWindow = 8 * 24 * time.Hour

// JobRecord is one journal entry.
type JobRecord struct {
	// RunHash says which run this job is: resource type, sandbox, command,
	// arguments, member and step (see RunHash).
	RunHash   string    `json:"run_hash"`
	SandboxID string    `json:"sandbox_id"`
	JobID     string    `json:"job_id"`
	Started   time.Time `json:"started"`
	// Confirmed: the start command answered, so the job started. Without
	// it the start may never have reached the sandbox.
	Confirmed bool `json:"confirmed"`
	// Outcome is the judged result of a job whose resource has not stored
	// it yet (a fleet member's finished step): a later process takes it
	// from here rather than running the step again.
	Outcome *StepOutcome `json:"outcome,omitempty"`
	// Run is what the caller recorded of the run this job belongs to when
	// it started (its ID, start and the egress it ran under), opaque here:
	// a later process that adopts the job records the same run.
	Run json.RawMessage `json:"run,omitempty"`
	// ReleasedAt: when the process that handed it over ended cleanly.
	ReleasedAt time.Time `json:"released_at,omitzero"`
}

// StepOutcome is a finished step's recorded result.
type StepOutcome struct {
	ExitCode   int       `json:"exit_code"`
	Stdout     string    `json:"stdout"`
	Stderr     string    `json:"stderr"`
	Truncated  bool      `json:"truncated"`
	ExecutedAt time.Time `json:"executed_at"`
}

// Jobs is the job journal beside a create journal. The zero Jobs keeps
// nothing.
type Jobs struct {
	dir string // "": no journal

	// handed are the entries this journal handed over.
	handed handedOverEntries

	mu sync.Mutex
	// leftovers are dead processes' entries by run hash; nil until the
	// first scan (one per process suffices: this process's own entries
	// are locked while it lives, and a released one is never its own
	// leftover to adopt).
	leftovers map[string][]*JobEntry
	// inUse are the jobs this process started or attached to, by sandbox
	// and run (see TakeClaim): kept in memory only, also when the journal
	// is off.
	inUse map[string]map[string]bool
}

// runKey names a run in one sandbox for inUse.
func runKey(sandboxID, run string) string { return sandboxID + "\x00" + run }

// NoteInUse records that this process started, or attached to, job
// jobID of run in sandboxID.
func (j *Jobs) NoteInUse(sandboxID, run, jobID string) {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.noteInUse(sandboxID, run, jobID)
}

func (j *Jobs) noteInUse(sandboxID, run, jobID string) {
	if j.inUse == nil {
		j.inUse = map[string]map[string]bool{}
	}
	k := runKey(sandboxID, run)
	if j.inUse[k] == nil {
		j.inUse[k] = map[string]bool{}
	}
	j.inUse[k][jobID] = true
}

// TakeClaim picks, among the jobs that claimed run in sandboxID (as the
// sandbox lists them, oldest first), the first one this process neither
// started nor attached to, and records it in use: the run a lost apply
// started, to attach to. ok is false when every claim is this process's
// own: another resource of this apply with the same run, which runs its
// own job.
func (j *Jobs) TakeClaim(sandboxID, run string, claims []string) (jobID string, ok bool) {
	if j == nil {
		return "", false
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	used := j.inUse[runKey(sandboxID, run)]
	for _, c := range claims {
		if !used[c] {
			j.noteInUse(sandboxID, run, c)
			return c, true
		}
	}
	return "", false
}

// JobsOf is the job journal beside a create journal (a subdirectory,
// which the create journal's scan ignores).
func JobsOf(j *Creates) *Jobs {
	if j == nil || j.dir == "" {
		return &Jobs{}
	}
	jj := &Jobs{dir: filepath.Join(j.dir, "jobs")}
	liveJournals.add(&jj.handed)
	return jj
}

// JobEntry is an entry this process owns; f holds its lock.
type JobEntry struct {
	j    *Jobs
	rec  JobRecord
	path string
	f    *os.File
}

// Record is what the entry records.
func (e *JobEntry) Record() JobRecord { return e.rec }

// RunHash identifies a run across processes: the same configuration of
// the same resource, member and step hashes the same.
func RunHash(parts ...any) string {
	b, _ := json.Marshal(parts)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Adopt claims a leftover entry for hash (nil when there is none).
func (j *Jobs) Adopt(hash string) *JobEntry {
	if j == nil || j.dir == "" {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return takeLeftover(&j.leftovers, j.scan, hash)
}

// Drop forgets leftovers of a job another path (state) now owns.
func (j *Jobs) Drop(jobID string) {
	if j == nil || j.dir == "" {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.leftovers == nil {
		j.leftovers = j.scan()
	}
	for h, list := range j.leftovers {
		kept := list[:0]
		for _, e := range list {
			if e.rec.JobID == jobID {
				e.Finish()
				continue
			}
			kept = append(kept, e)
		}
		j.leftovers[h] = kept
	}
}

// scan locks every entry no live process holds, keeps those young enough
// and removes the rest.
func (j *Jobs) scan() map[string][]*JobEntry {
	out := map[string][]*JobEntry{}
	scanLeftovers(j.dir, func(name, path string, f *os.File, data []byte) bool {
		var rec JobRecord
		if decodeEntry(data, &rec) != nil || rec.JobID != name || time.Since(rec.Started) > jobJournalWindow || pastGrace(rec.ReleasedAt) {
			return false
		}
		out[rec.RunHash] = append(out[rec.RunHash], &JobEntry{j: j, rec: rec, path: path, f: f})
		return true
	})
	return out
}

// Begin records a job about to start, locked by this process. The scan
// runs first, so this process never adopts its own entries.
func (j *Jobs) Begin(rec JobRecord) *JobEntry {
	e := &JobEntry{j: j, rec: rec}
	if j == nil || j.dir == "" || strings.ContainsAny(rec.JobID, `/\.`) || rec.JobID == "" {
		return e
	}
	j.mu.Lock()
	if j.leftovers == nil {
		j.leftovers = j.scan()
	}
	j.mu.Unlock()
	data, err := json.Marshal(rec)
	if err != nil {
		return e
	}
	e.f, e.path = createLockedEntry(j.dir, rec.JobID, data)
	return e
}

// Update appends the entry's new version (a confirmed start, a new job ID).
func (e *JobEntry) Update(rec JobRecord) {
	if e == nil {
		return
	}
	if e.f != nil && rec.JobID != e.rec.JobID && e.path != "" {
		// Renamed to the new ID, so a scan keeps finding it by file name.
		final := filepath.Join(filepath.Dir(e.path), rec.JobID+".json")
		if os.Rename(e.path, final) == nil {
			e.path = final
		}
	}
	e.rec = rec
	_ = e.write()
}

func (e *JobEntry) write() error {
	if e.f == nil {
		return nil
	}
	data, err := json.Marshal(e.rec)
	if err != nil {
		return err
	}
	return appendVersion(e.f, data)
}

// Complete records the judged outcome in the entry, which stays (locked)
// until its resource stores the result.
func (e *JobEntry) Complete(o *StepOutcome) {
	if e == nil {
		return
	}
	rec := e.rec
	rec.Outcome = o
	e.Update(rec)
}

// Finish removes the entry: the job's outcome is judged.
func (e *JobEntry) Finish() {
	if e == nil {
		return
	}
	if e.path != "" {
		_ = os.Remove(e.path)
		e.path = ""
	}
	e.Release()
}

// HandOver keeps the file, unlocked, and drops the lock: the entry's
// result was returned to Terraform, which may be killed before it stores
// it. A later process's apply of the same run then takes the recorded
// outcome (or collects the finished job again) instead of running the
// command twice, unless a plan shows the result in state (Forget) or this
// process ended cleanly more than handOverGrace ago (ReleaseAll).
func (e *JobEntry) HandOver() {
	if e == nil || e.f == nil || e.path == "" || e.j == nil {
		e.Finish()
		return
	}
	e.j.handed.add(e.path)
	e.path = ""
	e.Release()
}

// Forget removes the entries of runs whose results Terraform holds: it
// planned them from prior state. Runs are named by run hash; entries this
// process holds for adoption are finished, unlocked ones removed.
func (j *Jobs) Forget(hashes ...string) {
	if j == nil || j.dir == "" || len(hashes) == 0 {
		return
	}
	gone := setOf(hashes)
	j.mu.Lock()
	defer j.mu.Unlock()
	readUnlockedEntries(j.dir, func(_ string, data []byte) bool {
		var rec JobRecord
		return decodeEntry(data, &rec) == nil && gone[rec.RunHash]
	})
	for _, h := range hashes {
		for _, e := range j.leftovers[h] {
			e.Finish()
		}
		delete(j.leftovers, h)
	}
}

// Release keeps the file and drops the lock: the outcome is unknown, and
// the next process attaches to the job.
func (e *JobEntry) Release() {
	if e != nil && e.f != nil {
		_ = e.f.Close()
		e.f = nil
	}
}
