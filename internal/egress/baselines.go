package egress

import (
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/journal"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// Baselines of policy creates that failed closed. Such a create records
// nothing in state (the next apply must write again without lifting the
// restriction in between), yet its write changed what the sandbox holds:
// the sandbox object then shows the unenforced policy, and the next create
// would take it for the sandbox's baseline, so its destroy would "restore"
// the lock instead of reopening egress (the reuse bug: a reused sandbox's
// next setup runs restricted). So a create whose write is left unrecorded
// notes, per sandbox, the baseline it found and what it wrote, in a note
// beside the create journal (journal.Notes, which owns the files); the next create on that sandbox takes the
// baseline from there as long as the sandbox still holds what was written
// (otherwise someone else wrote since, and the note is dropped).
//
// Best effort, like the create journal, and under the same switch: without
// the file (another machine, an ephemeral CI runner, `create_journal =
// false`) the next create takes what the sandbox holds, as before.

// baselineNoteWindow is how long a note is kept. Its check against what
// the sandbox holds is what makes it safe to use; the window only keeps
// notes of long-gone sandboxes from piling up.
const baselineNoteWindow = 30 * 24 * time.Hour

type baselineNote struct {
	SandboxID string             `json:"sandbox_id"`
	Baseline  prime.EgressPolicy `json:"baseline"`
	Written   prime.EgressPolicy `json:"written"`
	At        time.Time          `json:"at"`
}

type Baselines struct {
	files *journal.Notes // none on disk: notes are kept in memory only (this process)

	mu sync.Mutex
	// notes by sandbox ID; nil until the directory was read once.
	notes map[string]baselineNote
}

// newEgressBaselines keeps its notes in files.
func newEgressBaselines(files *journal.Notes) *Baselines {
	return &Baselines{files: files}
}

// BaselinesOf is the baseline notes beside the create journal.
func BaselinesOf(j *journal.Creates) *Baselines {
	return newEgressBaselines(journal.NotesOf(j, "egress-baselines"))
}

// load reads the directory once (under mu), dropping old or unreadable
// notes.
func (b *Baselines) load() {
	if b.notes != nil {
		return
	}
	b.notes = map[string]baselineNote{}
	b.files.ReadAll(func(key string, data []byte) bool {
		var n baselineNote
		if json.Unmarshal(data, &n) != nil || n.SandboxID != key || time.Since(n.At) > baselineNoteWindow {
			return false
		}
		b.notes[n.SandboxID] = n
		return true
	})
}

// baseline is the noted baseline of sandbox id while the sandbox still
// holds what the failed create wrote (holds: its current policy, as the
// create found it); a note that no longer matches is dropped.
func (b *Baselines) baseline(id string, holds prime.EgressPolicy) (prime.EgressPolicy, bool) {
	if b == nil {
		return prime.EgressPolicy{}, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.load()
	n, ok := b.notes[id]
	if !ok {
		return prime.EgressPolicy{}, false
	}
	if !prime.SamePolicy(n.Written, holds) {
		b.dropLocked(id)
		return prime.EgressPolicy{}, false
	}
	return n.Baseline, true
}

// note records that sandbox id held baseline before a create wrote written,
// which no state records.
func (b *Baselines) note(id string, baseline, written prime.EgressPolicy) {
	if b == nil || id == "" || strings.ContainsAny(id, `/\`) {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.load()
	n := baselineNote{SandboxID: id, Baseline: baseline, Written: written, At: time.Now().UTC()}
	b.notes[id] = n
	if data, err := json.Marshal(n); err == nil {
		b.files.Write(id, data)
	}
}

// forget drops the note of sandbox id: its baseline is in state now.
func (b *Baselines) forget(id string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.load()
	if _, ok := b.notes[id]; ok {
		b.dropLocked(id)
	}
}

func (b *Baselines) dropLocked(id string) {
	delete(b.notes, id)
	b.files.Remove(id)
}

// BaselinesFrom is the baseline notes of the provider's configured data
// (nil, which keeps none, before Configure).
func BaselinesFrom(data any) *Baselines {
	if c, ok := data.(interface{ EgressBaselines() *Baselines }); ok {
		return c.EgressBaselines()
	}
	return nil
}
