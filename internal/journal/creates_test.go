package journal

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

func req(name string) prime.CreateSandboxRequest {
	return prime.CreateSandboxRequest{Name: name, DockerImage: "img", Labels: []string{}}
}

// die simulates the death of the process that owns an entry: the kernel
// releases its lock, the file stays.
func (c *InflightCreate) die() { c.Release() }

// A create whose process died before it returned leaves its key behind; the
// next process's create of the same configuration replays that key, so the
// platform hands back the sandbox it already made.
func TestCreateJournalAdoptsAKilledCreate(t *testing.T) {
	dir := t.TempDir()
	mock := primemock.New(primemock.Options{APIKey: "k"})
	srv := httptest.NewServer(mock)
	t.Cleanup(func() { srv.Close(); mock.Close() })
	client, err := prime.New(prime.Options{Config: prime.Config{APIKey: "k", BaseURL: srv.URL}})
	if err != nil {
		t.Fatal(err)
	}

	// Process 1: the sandbox is created, then the process is killed before
	// Create returns (finish is never called).
	j1 := NewCreates(dir)
	e1 := j1.Begin(req("eval-0"))
	if e1.adopted {
		t.Fatal("an empty journal adopted something")
	}
	r1 := req("eval-0")
	r1.IdempotencyKey = e1.key
	orphan, err := client.CreateSandbox(context.Background(), r1)
	if err != nil {
		t.Fatal(err)
	}
	e1.RecordID(orphan.ID)
	e1.die()

	// Process 2 (a new journal on the same directory): a different
	// configuration gets a fresh key; the same one adopts the orphan's key.
	j2 := NewCreates(dir)
	other := j2.Begin(req("eval-1"))
	if other.key == e1.key || other.adopted {
		t.Fatal("a different configuration adopted the orphan")
	}
	again := j2.Begin(req("eval-0"))
	if again.key != e1.key || !again.adopted {
		t.Fatalf("the same configuration got key %s (adopted %t), want the orphan's %s", again.key, again.adopted, e1.key)
	}
	r2 := req("eval-0")
	r2.IdempotencyKey = again.key
	sb, err := client.CreateSandbox(context.Background(), r2)
	if err != nil {
		t.Fatal(err)
	}
	if sb.ID != orphan.ID || mock.Stats().SandboxesCreated != 1 {
		t.Fatalf("got %s (created %d), want the orphan %s and one sandbox", sb.ID, mock.Stats().SandboxesCreated, orphan.ID)
	}
	// A third create of the same configuration in the same process must not
	// claim the same entry twice.
	third := j2.Begin(req("eval-0"))
	if third.key == e1.key {
		t.Fatal("one leftover entry was claimed twice")
	}

	// Once Create returns, the entry is handed over: kept for a later
	// process (Terraform may be killed before it stores the ID), stamped
	// when the process ends cleanly, and gone once that is past the grace.
	again.HandOver()
	other.HandOver()
	if entries, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(entries) != 3 {
		t.Fatalf("%d journal entries, want 3 (two handed over, the third in flight): %v", len(entries), entries)
	}
	j2.handed.release()
	for _, e := range []*InflightCreate{again, other} {
		agePastGrace(t, filepath.Join(dir, e.key+".json"))
	}
	_ = NewCreates(dir).Begin(req("eval-0")) // a later process scans
	// The third and the new one.
	if entries, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(entries) != 2 {
		t.Fatalf("%d journal entries left, want 2: %v", len(entries), entries)
	}
	// The third is still in flight: its file (and lock) must not be
	// collected before the scan above.
	runtime.KeepAlive(third)
}

// agePastGrace backdates the clean-end stamp of the entry at path past
// handOverGrace (failing if it has none).
func agePastGrace(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	var fields map[string]any
	if err != nil || decodeEntry(data, &fields) != nil || fields["released_at"] == nil {
		t.Fatalf("entry %s has no clean-end stamp: %s (%v)", path, data, err)
	}
	fields["released_at"] = time.Now().Add(-handOverGrace - time.Minute).UTC()
	data, _ = json.Marshal(fields)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// The review's race: two provider instances sharing a directory (parallel
// acceptance tests in one process, or two terraform runs in one working
// directory). An entry whose create is still in flight is never adopted by
// the other, and a finished entry is never written back by recordID.
func TestCreateJournalNeverAdoptsALiveCreate(t *testing.T) {
	dir := t.TempDir()
	owner := NewCreates(dir).Begin(req("eval-0"))
	if got := NewCreates(dir).Begin(req("eval-0")); got.key == owner.key || got.adopted {
		t.Fatal("a create still in flight was adopted by another journal")
	}
	owner.Finish()
	owner.RecordID("sbx-late") // a late write after finish must not recreate the file
	if _, err := os.Stat(filepath.Join(dir, owner.key+".json")); !os.IsNotExist(err) {
		t.Fatalf("the finished entry exists again (err %v)", err)
	}
}

func TestCreateJournalIsBestEffort(t *testing.T) {
	// An unusable directory disables the journal instead of failing creates.
	j := NewCreates("/proc/no-such-place/prime")
	e := j.Begin(req("x"))
	if e.key == "" {
		t.Fatal("a key is always returned")
	}
	e.RecordID("sbx")
	e.Finish()

	// A disabled journal ("", create_journal = false) writes nothing.
	if e := NewCreates("").Begin(req("x")); e.key == "" || e.path != "" || e.f != nil {
		t.Fatalf("a disabled journal recorded an entry: %+v", e)
	}
}

// Entries older than the replay window are removed, not adopted: an old
// idempotency key may have been forgotten by the platform, or reused.
func TestCreateJournalReplaysOnlyRecentEntries(t *testing.T) {
	dir := t.TempDir()
	stale := NewCreates(dir).Begin(req("x"))
	stale.e.Started = time.Now().Add(-journalReplayWindow - time.Hour)
	if err := stale.write(); err != nil {
		t.Fatal(err)
	}
	stale.die()
	if got := NewCreates(dir).Begin(req("x")); got.key == stale.key {
		t.Fatal("a stale entry was adopted")
	}
	if _, err := os.Stat(filepath.Join(dir, stale.key+".json")); !os.IsNotExist(err) {
		t.Fatalf("the stale entry was not removed (err %v)", err)
	}
}

// A fleet's entries are handed over together: every lock is released and
// every file stays, with its sandbox ID (a nil entry, from a create that
// never began, is skipped). A clean end of the process stamps them: a later
// process still adopts them within the grace (Terraform writes its final
// state after the provider stops), and removes them after it.
func TestCreateJournalHandOverAll(t *testing.T) {
	dir := t.TempDir()
	j := NewCreates(dir)
	entries := []*InflightCreate{nil}
	for i := range 40 {
		e := j.Begin(req(fmt.Sprintf("eval-%d", i)))
		e.RecordID(fmt.Sprintf("sbx-%d", i))
		entries = append(entries, e)
	}
	HandOverAll(entries)
	for _, e := range entries[1:] {
		if e.f != nil || e.path != "" {
			t.Fatalf("entry %s still holds its file", e.key)
		}
		data, err := os.ReadFile(filepath.Join(dir, e.key+".json"))
		var got journalEntry
		if err != nil || decodeEntry(data, &got) != nil || got.SandboxID == "" {
			t.Fatalf("entry %s after hand-over: %s (%v)", e.key, data, err)
		}
	}
	j.handed.release()
	for _, e := range entries[2:] {
		agePastGrace(t, filepath.Join(dir, e.key+".json"))
	}
	later := NewCreates(dir)
	if got := later.Begin(req("eval-0")); !got.adopted || got.key != entries[1].key {
		t.Fatal("an entry stamped by a clean end was not adoptable within the grace")
	}
	if got := later.Begin(req("eval-1")); got.adopted {
		t.Fatal("an entry past the grace was adopted")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(left) != 2 { // the adopted one, and eval-1's new one
		t.Fatalf("%d journal files left after the grace, want 2: %v", len(left), left)
	}
}

// The gap hand-over closes: Create returned, Terraform was killed before it
// stored the state (OpenTofu's local backend and remote backends persist
// every 20 s), so the next process's create of the same configuration gets
// the same key and adopts the sandbox. A plan that shows Terraform holds a
// sandbox removes its entry instead, so a create in the same working
// directory (create_before_destroy, a count that grows) never adopts one
// that state already has.
func TestCreateJournalHandedOverEntries(t *testing.T) {
	dir := t.TempDir()
	killed := NewCreates(dir)
	lost, kept := killed.Begin(req("eval-lost")), killed.Begin(req("eval-kept"))
	lost.RecordID("sbx-lost")
	kept.RecordID("sbx-kept")
	lost.HandOver()
	kept.HandOver()

	// The killed process's own journal never adopts its entries.
	if again := killed.Begin(req("eval-lost")); again.adopted {
		t.Fatal("a process adopted an entry it handed over itself")
	}

	// The next run's plan sees sbx-kept in prior state.
	NewCreates(dir).Forget("sbx-kept", "sbx-unknown")
	if _, err := os.Stat(filepath.Join(dir, kept.key+".json")); !os.IsNotExist(err) {
		t.Fatalf("the entry of a sandbox in prior state was not removed (err %v)", err)
	}

	// Its apply creates both again: the lost one adopts, the kept one not.
	next := NewCreates(dir)
	if got := next.Begin(req("eval-lost")); !got.adopted || got.key != lost.key {
		t.Fatalf("the lost sandbox's entry was not adopted: key %s adopted %t", got.key, got.adopted)
	}
	if got := next.Begin(req("eval-kept")); got.adopted || got.key == kept.key {
		t.Fatal("the entry of a sandbox in state was adopted")
	}
}

// forget reaches entries this process already holds for adoption (its
// scan ran before the plan that shows Terraform holds them).
func TestCreateJournalForgetAfterScan(t *testing.T) {
	dir := t.TempDir()
	old := NewCreates(dir).Begin(req("eval-0"))
	old.RecordID("sbx-0")
	old.HandOver()
	j := NewCreates(dir)
	_ = j.Begin(req("other")) // scans: holds old's entry
	j.Forget("sbx-0")
	if got := j.Begin(req("eval-0")); got.adopted {
		t.Fatal("an entry forgotten after the scan was adopted")
	}
	if _, err := os.Stat(filepath.Join(dir, old.key+".json")); !os.IsNotExist(err) {
		t.Fatalf("the forgotten entry is still on disk (err %v)", err)
	}
}

// Each workspace of a working directory has its own journal: its own
// state, so a create in one never adopts what another's apply made. The
// default workspace keeps the working directory's name.
func TestCurrentWorkspaceNamesTheJournal(t *testing.T) {
	wd := t.TempDir()
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if got := currentWorkspace(getenv, wd); got != "default" {
		t.Fatalf("no workspace recorded: %q, want default", got)
	}
	if err := os.MkdirAll(filepath.Join(wd, ".terraform"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wd, ".terraform", "environment"), []byte("staging"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := currentWorkspace(getenv, wd); got != "staging" {
		t.Fatalf("recorded workspace: %q, want staging", got)
	}
	env["TF_DATA_DIR"] = filepath.Join(wd, "elsewhere")
	if got := currentWorkspace(getenv, wd); got != "default" {
		t.Fatalf("TF_DATA_DIR without a workspace: %q, want default", got)
	}
	env["TF_WORKSPACE"] = "ci"
	if got := currentWorkspace(getenv, wd); got != "ci" {
		t.Fatalf("TF_WORKSPACE: %q, want ci", got)
	}
	names := map[string]bool{}
	for _, w := range []string{"default", "staging", "ci"} {
		names[journalName(wd, w)] = true
	}
	if len(names) != 3 {
		t.Fatalf("workspaces share a journal: %v", names)
	}
	if journalName(wd, "default") == journalName(t.TempDir(), "default") {
		t.Fatal("two working directories share a journal")
	}
}
