package provider

import (
	"context"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

func req(name string) prime.CreateSandboxRequest {
	return prime.CreateSandboxRequest{Name: name, DockerImage: "img", Labels: []string{}}
}

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
	r1 := req("eval-0")
	r1.IdempotencyKey = e1.key
	orphan, err := client.CreateSandbox(context.Background(), r1)
	if err != nil {
		t.Fatal(err)
	}
	e1.recordID(orphan.ID)

	// Process 2 (a new journal on the same directory): a different
	// configuration gets a fresh key; the same one adopts the orphan's key.
	j2 := newCreateJournal(dir)
	other := j2.begin(req("eval-1"))
	if other.key == e1.key {
		t.Fatal("a different configuration adopted the orphan")
	}
	again := j2.begin(req("eval-0"))
	if again.key != e1.key {
		t.Fatalf("the same configuration got a fresh key %s, want the orphan's %s", again.key, e1.key)
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
	if third := j2.begin(req("eval-0")); third.key == e1.key {
		t.Fatal("one leftover entry was claimed twice")
	}

	// Once Create returns, Terraform holds the ID: the entry goes.
	again.finish()
	other.finish()
	if entries, _ := os.ReadDir(dir); len(entries) != 1 { // the third, still in flight
		t.Fatalf("%d journal entries left, want 1", len(entries))
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

	// Entries older than the retention are dropped, not adopted.
	dir := t.TempDir()
	old := newCreateJournal(dir)
	stale := old.begin(req("x"))
	past := time.Now().Add(-journalRetention - time.Hour)
	if err := os.Chtimes(stale.path, past, past); err != nil {
		t.Fatal(err)
	}
	if got := newCreateJournal(dir).begin(req("x")); got.key == stale.key {
		t.Fatal("a stale entry was adopted")
	}
}
