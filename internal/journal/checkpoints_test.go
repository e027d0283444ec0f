package journal

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// checkpointsIn is a checkpoint journal beside a create journal in a new
// directory (as the provider makes it).
func checkpointsIn(dir string) *Checkpoints { return CheckpointsOf(NewCreates(dir)) }

// readCheckpointRecord reads the entry file of e (failing if it is gone).
func readCheckpointRecord(t *testing.T, dir, name string) checkpointRecord {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "checkpoints", name+".json"))
	var rec checkpointRecord
	if err != nil || decodeEntry(data, &rec) != nil {
		t.Fatalf("entry %s: %s (%v)", name, data, err)
	}
	return rec
}

// The entry's life cycle across a killed process: recorded (and locked)
// before the POST, the checkpoint ID written right after it; a leftover
// only once its process is dead, and then only for the same configuration;
// adopted at most once.
func TestCheckpointJournalAdoptsAKilledCreate(t *testing.T) {
	dir := t.TempDir()
	j1 := checkpointsIn(dir)
	if e := j1.Adopt("cfg-a"); e != nil {
		t.Fatal("an empty journal had a leftover")
	}
	e1 := j1.Begin("cfg-a", "sbx-1")
	if rec := readCheckpointRecord(t, dir, e1.name); rec.ConfigHash != "cfg-a" || rec.SandboxID != "sbx-1" || rec.CheckpointID != "" {
		t.Fatalf("entry before the POST: %+v", rec)
	}
	e1.RecordID("ckpt-1")
	if rec := readCheckpointRecord(t, dir, e1.name); rec.CheckpointID != "ckpt-1" {
		t.Fatalf("entry after the POST: %+v", rec)
	}

	// While its process lives, another journal (process) never sees it.
	if e := checkpointsIn(dir).Adopt("cfg-a"); e != nil {
		t.Fatal("an entry still locked by its create was adopted")
	}

	e1.die()
	j2 := checkpointsIn(dir)
	if e := j2.Adopt("cfg-b"); e != nil {
		t.Fatal("another configuration adopted the leftover")
	}
	got := j2.Adopt("cfg-a")
	if got == nil || got.CheckpointID() != "ckpt-1" || got.SandboxID() != "sbx-1" {
		t.Fatalf("the same configuration's leftover: %+v", got)
	}
	if again := j2.Adopt("cfg-a"); again != nil {
		t.Fatal("one leftover was adopted twice")
	}
	// The adopter holds it now: a third process does not see it.
	if e := checkpointsIn(dir).Adopt("cfg-a"); e != nil {
		t.Fatal("an adopted entry was adopted again by another process")
	}
	got.HandOver()
	runtime.KeepAlive(got)
}

// A killed process's entry without a checkpoint ID (killed during the
// POST, or before its answer was written) names nothing to adopt or
// delete: the scan drops it.
func TestCheckpointJournalDropsEntriesWithoutID(t *testing.T) {
	dir := t.TempDir()
	e := checkpointsIn(dir).Begin("cfg", "sbx")
	e.die()
	if got := checkpointsIn(dir).Adopt("cfg"); got != nil {
		t.Fatalf("an entry without a checkpoint ID was adopted: %+v", got)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "checkpoints", "*.json")); len(left) != 0 {
		t.Fatalf("entries left: %v", left)
	}
}

// Finish removes the entry (no checkpoint to track); a late RecordID never
// brings it back. Release keeps it for the next process.
func TestCheckpointJournalFinishAndRelease(t *testing.T) {
	dir := t.TempDir()
	j := checkpointsIn(dir)
	done := j.Begin("cfg", "sbx")
	done.RecordID("ckpt-done")
	done.Finish()
	done.RecordID("ckpt-late")
	kept := j.Begin("cfg", "sbx")
	kept.RecordID("ckpt-kept")
	kept.Release()
	got := checkpointsIn(dir).Adopt("cfg")
	if got == nil || got.CheckpointID() != "ckpt-kept" {
		t.Fatalf("after finish and release: %+v", got)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "checkpoints", "*.json")); len(left) != 1 {
		t.Fatalf("entries left: %v", left)
	}
}

// Entries older than the replay window are removed, not adopted; a
// handed-over entry of a process that ended cleanly is adoptable within
// the grace and removed after it.
func TestCheckpointJournalReplayWindow(t *testing.T) {
	dir := t.TempDir()
	j := checkpointsIn(dir)
	stale := j.Begin("cfg-stale", "sbx")
	stale.rec.CheckpointID = "ckpt-stale"
	stale.rec.Started = time.Now().Add(-journalReplayWindow - time.Hour)
	if err := stale.writeJSON(stale.rec); err != nil {
		t.Fatal(err)
	}
	stale.die()
	recent, old := j.Begin("cfg-recent", "sbx"), j.Begin("cfg-old", "sbx")
	recent.RecordID("ckpt-recent")
	old.RecordID("ckpt-old")
	recentName, oldName := recent.name, old.name
	recent.HandOver()
	old.HandOver()
	j.handed.release()
	agePastGrace(t, filepath.Join(dir, "checkpoints", oldName+".json"))

	next := checkpointsIn(dir)
	if got := next.Adopt("cfg-stale"); got != nil {
		t.Fatal("an entry past the replay window was adopted")
	}
	if got := next.Adopt("cfg-old"); got != nil {
		t.Fatal("an entry past the clean-end grace was adopted")
	}
	if got := next.Adopt("cfg-recent"); got == nil || got.CheckpointID() != "ckpt-recent" {
		t.Fatal("a handed-over entry within the grace was not adopted")
	}
	left, _ := filepath.Glob(filepath.Join(dir, "checkpoints", "*.json"))
	if len(left) != 1 || filepath.Base(left[0]) != recentName+".json" {
		t.Fatalf("entries left: %v", left)
	}
}

// A plan that shows Terraform holds a checkpoint removes its entry, on
// disk and among the leftovers this process already holds; the others
// stay adoptable.
func TestCheckpointJournalForget(t *testing.T) {
	dir := t.TempDir()
	killed := checkpointsIn(dir)
	for _, id := range []string{"ckpt-held", "ckpt-lost", "ckpt-scanned"} {
		e := killed.Begin("cfg-"+id, "sbx")
		e.RecordID(id)
		e.HandOver()
	}
	next := checkpointsIn(dir)
	next.Forget("ckpt-held", "ckpt-unknown")
	_ = next.Adopt("cfg-other") // scans: now holds the lost and scanned entries
	next.Forget("ckpt-scanned")
	if got := next.Adopt("cfg-ckpt-held"); got != nil {
		t.Fatal("the entry of a checkpoint in state was adopted")
	}
	if got := next.Adopt("cfg-ckpt-scanned"); got != nil {
		t.Fatal("an entry forgotten after the scan was adopted")
	}
	if got := next.Adopt("cfg-ckpt-lost"); got == nil || got.CheckpointID() != "ckpt-lost" {
		t.Fatal("the lost checkpoint's entry was not adopted")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "checkpoints", "*.json")); len(left) != 1 {
		t.Fatalf("entries left: %v", left)
	}
}

// create_journal = false (or no usable directory) keeps nothing, and every
// call is safe.
func TestCheckpointJournalDisabled(t *testing.T) {
	for name, j := range map[string]*Checkpoints{
		"off":       CheckpointsOf(NewCreates("")),
		"nil":       CheckpointsOf(nil),
		"unusable":  CheckpointsOf(NewCreates("/proc/no-such-place/prime")),
		"no config": CheckpointsFrom(nil),
	} {
		t.Run(name, func(t *testing.T) {
			e := j.Begin("cfg", "sbx")
			e.RecordID("ckpt")
			if e.f != nil || e.path != "" {
				t.Fatalf("a disabled journal recorded an entry: %+v", e)
			}
			e.HandOver()
			e.Finish()
			j.Forget("ckpt")
			if j.Adopt("cfg") != nil {
				t.Fatal("a disabled journal had a leftover")
			}
		})
	}
}

// The checkpoint journal lives in its own subdirectory: the create
// journal's scan and Forget never read its entries (nor the reverse).
func TestCheckpointJournalBesideTheCreateJournal(t *testing.T) {
	dir := t.TempDir()
	e := checkpointsIn(dir).Begin("cfg", "sbx")
	e.RecordID("ckpt")
	e.die()
	NewCreates(dir).Forget("sbx")
	_ = NewCreates(dir).Begin(req("x"))
	if got := checkpointsIn(dir).Adopt("cfg"); got == nil {
		t.Fatal("the create journal removed a checkpoint entry")
	}
}

// die simulates the death of the entry's process: its lock goes, the file
// stays.
func (e *CheckpointEntry) die() { e.release() }
