package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
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
func (c *inflightCreate) die() { c.release() }

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
	j1 := newCreateJournal(dir)
	e1 := j1.begin(req("eval-0"))
	if e1.adopted {
		t.Fatal("an empty journal adopted something")
	}
	r1 := req("eval-0")
	r1.IdempotencyKey = e1.key
	orphan, err := client.CreateSandbox(context.Background(), r1)
	if err != nil {
		t.Fatal(err)
	}
	e1.recordID(orphan.ID)
	e1.die()

	// Process 2 (a new journal on the same directory): a different
	// configuration gets a fresh key; the same one adopts the orphan's key.
	j2 := newCreateJournal(dir)
	other := j2.begin(req("eval-1"))
	if other.key == e1.key || other.adopted {
		t.Fatal("a different configuration adopted the orphan")
	}
	again := j2.begin(req("eval-0"))
	if again.key != e1.key || !again.adopted {
		t.Fatalf("the same configuration got key %s (adopted %t), want the orphan's %s", again.key, again.adopted, e1.key)
	}
	r2 := req("eval-0")
	r2.IdempotencyKey = again.key
	sb, err := client.CreateSandbox(context.Background(), r2)
	if err != nil {
		t.Fatal(err)
	}
	if sb.ID != orphan.ID || mock.Stats().SandboxesCreated != 1 || !adoptable(sb, r2) {
		t.Fatalf("got %s (created %d), want the orphan %s and one sandbox", sb.ID, mock.Stats().SandboxesCreated, orphan.ID)
	}
	// A third create of the same configuration in the same process must not
	// claim the same entry twice.
	third := j2.begin(req("eval-0"))
	if third.key == e1.key {
		t.Fatal("one leftover entry was claimed twice")
	}

	// Once Create returns, Terraform holds the ID: the entry goes.
	again.finish()
	other.finish()
	if entries, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(entries) != 1 { // the third, still in flight
		t.Fatalf("%d journal entries left, want 1: %v", len(entries), entries)
	}
}

// The review's race: two provider instances sharing a directory (parallel
// acceptance tests in one process, or two terraform runs in one working
// directory). An entry whose create is still in flight is never adopted by
// the other, and a finished entry is never written back by recordID.
func TestCreateJournalNeverAdoptsALiveCreate(t *testing.T) {
	dir := t.TempDir()
	owner := newCreateJournal(dir).begin(req("eval-0"))
	if got := newCreateJournal(dir).begin(req("eval-0")); got.key == owner.key || got.adopted {
		t.Fatal("a create still in flight was adopted by another journal")
	}
	owner.finish()
	owner.recordID("sbx-late") // a late write after finish must not recreate the file
	if _, err := os.Stat(filepath.Join(dir, owner.key+".json")); !os.IsNotExist(err) {
		t.Fatalf("the finished entry exists again (err %v)", err)
	}
}

func TestCreateJournalIsBestEffort(t *testing.T) {
	// An unusable directory disables the journal instead of failing creates.
	j := newCreateJournal("/proc/no-such-place/prime")
	e := j.begin(req("x"))
	if e.key == "" {
		t.Fatal("a key is always returned")
	}
	e.recordID("sbx")
	e.finish()

	// A disabled journal ("", create_journal = false) writes nothing.
	if e := newCreateJournal("").begin(req("x")); e.key == "" || e.path != "" || e.f != nil {
		t.Fatalf("a disabled journal recorded an entry: %+v", e)
	}
}

// Entries older than the replay window are removed, not adopted: an old
// idempotency key may have been forgotten by the platform, or reused.
func TestCreateJournalReplaysOnlyRecentEntries(t *testing.T) {
	dir := t.TempDir()
	stale := newCreateJournal(dir).begin(req("x"))
	stale.e.Started = time.Now().Add(-journalReplayWindow - time.Hour)
	if err := stale.write(); err != nil {
		t.Fatal(err)
	}
	stale.die()
	if got := newCreateJournal(dir).begin(req("x")); got.key == stale.key {
		t.Fatal("a stale entry was adopted")
	}
	if _, err := os.Stat(filepath.Join(dir, stale.key+".json")); !os.IsNotExist(err) {
		t.Fatalf("the stale entry was not removed (err %v)", err)
	}
}

// A replayed key only counts when its sandbox is the one asked for and
// still runs.
func TestAdoptable(t *testing.T) {
	want := req("eval-0")
	for _, tc := range []struct {
		sb   prime.Sandbox
		want bool
	}{
		{prime.Sandbox{Name: "eval-0", DockerImage: "img", Status: prime.StatusRunning}, true},
		{prime.Sandbox{Name: "eval-0", DockerImage: "img", Status: prime.StatusPending}, true},
		{prime.Sandbox{Name: "eval-0", DockerImage: "img", Status: prime.StatusTerminated}, false},
		{prime.Sandbox{Name: "eval-0", DockerImage: "img", Status: prime.StatusError}, false},
		{prime.Sandbox{Name: "eval-1", DockerImage: "img", Status: prime.StatusRunning}, false},
		{prime.Sandbox{Name: "eval-0", DockerImage: "other", Status: prime.StatusRunning}, false},
	} {
		if got := adoptable(&tc.sb, want); got != tc.want {
			b, _ := json.Marshal(tc.sb)
			t.Errorf("adoptable(%s) = %t, want %t", b, got, tc.want)
		}
	}
}

// A fleet's entries are finished together: every file goes and every lock
// is released (a nil entry, from a create that never began, is skipped).
func TestCreateJournalFinishAll(t *testing.T) {
	dir := t.TempDir()
	j := newCreateJournal(dir)
	entries := []*inflightCreate{nil}
	for i := range 40 {
		e := j.begin(req(fmt.Sprintf("eval-%d", i)))
		e.recordID(fmt.Sprintf("sbx-%d", i))
		entries = append(entries, e)
	}
	finishAll(entries)
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Fatalf("%d journal files left after finishAll: %v", len(left), left)
	}
	for _, e := range entries[1:] {
		if e.f != nil || e.path != "" {
			t.Fatalf("entry %s still holds its file", e.key)
		}
	}
}
