package journal

import (
	"os"
	"path/filepath"
	"testing"
)

// An entry is rewritten by replacing it, never in place (a kill between a
// truncate and a write left an empty entry, which the next scan dropped
// with the record of a job that had run). The replacement is locked
// before anyone can see it, and a lock taken on the replaced file does not
// count.
func TestJournalEntryRewriteIsAtomicAndStaysLocked(t *testing.T) {
	dir := t.TempDir()
	owner := NewCreates(dir).Begin(req("eval-0"))
	path := filepath.Join(dir, owner.key+".json")
	stale, err := os.Open(path) // a scanner that opened the entry before the rewrite
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stale.Close() }()
	owner.RecordID("sbx-1")

	if got := NewCreates(dir).Begin(req("eval-0")); got.adopted {
		t.Fatal("a rewritten entry lost its lock: another journal adopted it")
	}
	if locked, _ := tryLock(stale); !locked {
		t.Fatal("the replaced file should be lockable (nobody holds it any more)")
	}
	if lockedCurrent(stale, path) {
		t.Fatal("a lock on the replaced file was taken for a lock on the entry")
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(tmps) != 0 {
		t.Fatalf("a rewrite left temporary files: %v", tmps)
	}
	owner.die()
	next := NewCreates(dir).Begin(req("eval-0"))
	if !next.adopted || next.e.SandboxID != "sbx-1" {
		t.Fatalf("the rewritten entry was not adopted whole: %+v", next.e)
	}
}
