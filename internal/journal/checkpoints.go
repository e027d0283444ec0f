package journal

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// The checkpoint journal closes, for prime_sandbox_checkpoint, the gap the
// create journal closes for sandboxes: a Terraform process killed while a
// checkpoint's Create waits for DURABLE (minutes, for a large disk) leaves
// a checkpoint that no state holds and that is billed for its storage
// until someone finds it. The checkpoint request has no idempotency key,
// so nothing can be replayed; instead the entry records the checkpoint's
// ID.
//
// Before the request, an entry naming the configuration (by hash) and the
// source sandbox is written and locked; right after the platform answers,
// the checkpoint's ID is written into it. From then on it lives as a
// create journal entry does: finished when no checkpoint is left to track,
// handed over when Create returns one to Terraform, removed once a plan
// shows Terraform holds it (Forget) or after the grace of a clean end
// (ReleaseAll). A leftover (no live process holds its lock) of the same
// configuration is offered to the next create (Adopt), which takes the
// checkpoint over if it is still usable, or deletes it.
//
// An entry without a checkpoint ID belongs to a process killed during the
// request (or before it wrote the answer): it names nothing, so the scan
// drops it. That window is one request long.

// Checkpoints is the checkpoint journal beside a create journal (a
// disabled one keeps nothing).
type Checkpoints struct {
	dir string // "": no journal

	// handed are the entries this journal handed over.
	handed handedOverEntries

	mu sync.Mutex
	// byID indexes other processes' entries by checkpoint ID for Forget,
	// built on its first call.
	byID map[string][]string
	// leftovers are dead processes' entries by configuration hash; nil
	// until the first scan, which runs before this process's first entry,
	// so it never adopts its own.
	leftovers map[string][]*CheckpointEntry
	// held is the ledger of checkpoints plans saw Terraform hold (see
	// held.go), for recovery from the platform.
	held heldLedger
	// taken are the checkpoints this process requested or adopted (in
	// memory, also when the journal is off): another create of this
	// process never adopts one.
	taken map[string]bool
}

// Held reports whether a plan on this machine saw Terraform hold
// checkpoint id (Forget).
func (j *Checkpoints) Held(id string) bool {
	if j == nil {
		return false
	}
	return j.held.has(id)
}

// Take records that this process requested or adopted checkpoint id; it
// reports false when it already had (so the caller must not adopt it).
func (j *Checkpoints) Take(id string) bool {
	if j == nil {
		return true
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.taken[id] {
		return false
	}
	if j.taken == nil {
		j.taken = map[string]bool{}
	}
	j.taken[id] = true
	return true
}

// checkpointRecord is one entry's JSON (an on-disk format).
type checkpointRecord struct {
	// Name is the entry's file name, checked against it on a scan.
	Name       string `json:"entry"`
	ConfigHash string `json:"config_hash"`
	// SandboxID is the checkpoint's source sandbox.
	SandboxID    string    `json:"sandbox_id"`
	CheckpointID string    `json:"checkpoint_id,omitempty"`
	Started      time.Time `json:"started"`
	// ReleasedAt: when the process that handed it over ended cleanly.
	ReleasedAt time.Time `json:"released_at,omitzero"`
}

// CheckpointsOf is the checkpoint journal beside a create journal: a
// subdirectory (which the create journal's scan ignores), under the same
// switch.
func CheckpointsOf(j *Creates) *Checkpoints {
	if j == nil || j.dir == "" {
		return &Checkpoints{}
	}
	cj := &Checkpoints{dir: filepath.Join(j.dir, "checkpoints")}
	cj.held.path = filepath.Join(cj.dir, "held.log")
	liveJournals.add(&cj.handed)
	return cj
}

// Enabled reports whether the journal keeps entries (the provider's
// create_journal), so that a checkpoint left to a later apply is adopted.
func (j *Checkpoints) Enabled() bool { return j != nil && j.dir != "" }

// CheckpointEntry is one checkpoint create this process owns (or adopted);
// while it lives, it holds the entry's lock.
type CheckpointEntry struct {
	j    *Checkpoints
	name string
	heldEntry
	rec checkpointRecord
}

// CheckpointID is the recorded checkpoint ("" before the request answered).
func (e *CheckpointEntry) CheckpointID() string {
	if e == nil {
		return ""
	}
	return e.rec.CheckpointID
}

// SandboxID is the recorded source sandbox.
func (e *CheckpointEntry) SandboxID() string {
	if e == nil {
		return ""
	}
	return e.rec.SandboxID
}

// Adopt claims a dead process's entry of the configuration hash, locked
// by this process from now on; nil when there is none. The caller checks
// the checkpoint it names and either keeps the entry (as its own create's)
// or finishes it.
func (j *Checkpoints) Adopt(hash string) *CheckpointEntry {
	if j == nil || j.dir == "" {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return takeLeftover(&j.leftovers, j.scan, hash)
}

// scan locks every entry no live process holds, keeps those that name a
// checkpoint and are young enough to adopt, and removes the rest.
func (j *Checkpoints) scan() map[string][]*CheckpointEntry {
	out := map[string][]*CheckpointEntry{}
	scanLeftovers(j.dir, func(name, path string, f *os.File, data []byte) bool {
		var rec checkpointRecord
		if decodeEntry(data, &rec) != nil || rec.Name != name || rec.CheckpointID == "" ||
			time.Since(rec.Started) > journalReplayWindow || pastGrace(rec.ReleasedAt) {
			return false
		}
		out[rec.ConfigHash] = append(out[rec.ConfigHash], &CheckpointEntry{j: j, name: name, heldEntry: heldEntry{path: path, f: f}, rec: rec})
		return true
	})
	return out
}

// Begin records a checkpoint request about to be sent for the
// configuration hash of source sandboxID, locked by this process. A
// disabled journal returns an entry that records nothing.
func (j *Checkpoints) Begin(hash, sandboxID string) *CheckpointEntry {
	e := &CheckpointEntry{j: j, rec: checkpointRecord{ConfigHash: hash, SandboxID: sandboxID, Started: time.Now().UTC()}}
	if j == nil || j.dir == "" {
		return e
	}
	j.mu.Lock()
	if j.leftovers == nil {
		j.leftovers = j.scan()
	}
	j.mu.Unlock()
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return e
	}
	e.name = hex.EncodeToString(b[:])
	e.rec.Name = e.name
	data, err := json.Marshal(e.rec)
	if err != nil {
		return e
	}
	e.f, e.path = createLockedEntry(j.dir, e.name, data)
	return e
}

// RecordID writes the checkpoint the platform made into the entry.
func (e *CheckpointEntry) RecordID(id string) {
	if e == nil {
		return
	}
	e.rec.CheckpointID = id
	_ = e.writeJSON(e.rec)
}

// Finish removes the entry: no checkpoint is left to track.
func (e *CheckpointEntry) Finish() {
	if e != nil {
		e.finish()
	}
}

// HandOver keeps the entry, unlocked: Create returned the checkpoint to
// Terraform, which may be killed before it stores it. The next process
// adopts it unless a plan shows Terraform holds it (Forget) or this one
// ended cleanly more than handOverGrace ago (ReleaseAll).
func (e *CheckpointEntry) HandOver() {
	if e != nil && e.j != nil {
		e.handOver(&e.j.handed)
	}
}

// Forget removes the entries of checkpoints Terraform holds: it planned
// them from prior state, so no later create may adopt them.
func (j *Checkpoints) Forget(ids ...string) {
	if j == nil || j.dir == "" || len(ids) == 0 {
		return
	}
	j.held.record(ids)
	gone := setOf(ids)
	j.mu.Lock()
	defer j.mu.Unlock()
	forgetIndexed(j.dir, &j.byID, func(data []byte) string {
		var rec checkpointRecord
		_ = decodeEntry(data, &rec)
		return rec.CheckpointID
	}, ids)
	dropLeftovers(j.leftovers, func(e *CheckpointEntry) bool { return gone[e.rec.CheckpointID] }, (*CheckpointEntry).Finish)
}

// Release keeps the entry and drops its lock: whether its checkpoint is
// usable is unknown (the platform could not be asked), so the next
// process decides.
func (e *CheckpointEntry) Release() {
	if e != nil {
		e.release()
	}
}
