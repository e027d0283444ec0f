package egress

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/journal"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

func TestEgressBaselines(t *testing.T) {
	open := prime.OpenEgressPolicy()
	lock := prime.EgressPolicy{Allowlist: []string{"example.com"}}
	other := prime.EgressPolicy{Allowlist: []string{"pypi.org"}}
	born := prime.EgressPolicy{Denylist: []string{"evil.example"}}
	dir := t.TempDir()

	b := newEgressBaselines(journal.NewNotes(dir))
	if _, ok := b.baseline("sb1", lock); ok {
		t.Fatal("a baseline without a note")
	}
	b.note("sb1", open, lock)
	b.note("sb2", born, lock)
	b.note("../x", open, lock) // not a sandbox ID: never a path

	// Another process (a new instance) reads the notes back.
	b = newEgressBaselines(journal.NewNotes(dir))
	if got, ok := b.baseline("sb1", lock); !ok || !prime.SamePolicy(got, open) {
		t.Fatalf("sb1 baseline = %+v, %t; want the open policy", got, ok)
	}
	// sb2 holds something else now: someone wrote since, the note goes.
	if _, ok := b.baseline("sb2", other); ok {
		t.Fatal("a note used although the sandbox no longer holds what was written")
	}
	if _, err := os.Stat(filepath.Join(dir, "sb2.json")); !os.IsNotExist(err) {
		t.Fatalf("the stale note's file is still there: %v", err)
	}
	b.forget("sb1")
	if _, ok := newEgressBaselines(journal.NewNotes(dir)).baseline("sb1", lock); ok {
		t.Fatal("a forgotten note came back")
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) != 0 {
		t.Fatalf("files left: %v", files)
	}

	// Old notes are dropped when read.
	b.note("sb3", open, lock)
	old := time.Now().Add(-baselineNoteWindow - time.Hour)
	data := []byte(`{"sandbox_id":"sb3","baseline":{"allowlist":null,"denylist":[]},"written":{"allowlist":["example.com"],"denylist":null},"at":"` + old.UTC().Format(time.RFC3339) + `"}`)
	if err := os.WriteFile(filepath.Join(dir, "sb3.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := newEgressBaselines(journal.NewNotes(dir)).baseline("sb3", lock); ok {
		t.Fatal("a note older than the window was used")
	}

	// Without a directory the notes last as long as the process; nil keeps none.
	mem := newEgressBaselines(journal.NewNotes(""))
	mem.note("sb4", born, lock)
	if got, ok := mem.baseline("sb4", lock); !ok || !prime.SamePolicy(got, born) {
		t.Fatalf("in-memory baseline = %+v, %t", got, ok)
	}
	var none *Baselines
	none.note("sb5", open, lock)
	if _, ok := none.baseline("sb5", lock); ok {
		t.Fatal("a nil notebook returned a baseline")
	}
}
