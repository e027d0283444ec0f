package journal

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// secondLedger opens the ledger file of l again, as another process would:
// flock(2) locks belong to an open file, so two opens contend like two
// processes.
func secondLedger(t *testing.T, dir, account string) *Lookups {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, account), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return &Lookups{f: f}
}

func TestLookupsLedgerIsSharedAndSliding(t *testing.T) {
	dir := t.TempDir()
	a := OpenLookups(dir, "acct-shared")
	if a == nil {
		t.Skip("no file locks here")
	}
	b := secondLedger(t, dir, "acct-shared")
	t0 := time.Unix(1_800_000_000, 0)
	step := func(l *Lookups, at time.Duration, n int) (bool, time.Time) {
		t.Helper()
		ok, until, err := l.Take(t0.Add(at), n, 30, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return ok, until
	}
	if ok, _ := step(a, 0, 20); !ok {
		t.Fatal("20 of 30 refused on an empty ledger")
	}
	// The other process sees the 20: 15 more do not fit until they leave,
	// 61 s after the second they were taken in (never less than 60 s).
	ok, until := step(b, 10*time.Second, 15)
	if ok {
		t.Fatal("the second process took 15 while the first held 20 of 30")
	}
	if want := t0.Add(61 * time.Second); !until.Equal(want) {
		t.Errorf("fits at %v, want %v", until.Sub(t0), want.Sub(t0))
	}
	if ok, _ := step(b, 10*time.Second, 10); !ok {
		t.Fatal("10 that fit were refused")
	}
	for _, l := range []*Lookups{a, b} {
		if used, err := l.Used(t0.Add(20*time.Second), time.Minute); err != nil || used != 30 {
			t.Errorf("used = %d (%v), want 30 from both processes", used, err)
		}
	}
	// At 60 s the first 20 still count; at 61 s they have left, the 10
	// taken at 10 s still count.
	if ok, _ := step(a, 60*time.Second, 1); ok {
		t.Error("a lookup fitted at 60 s while 30 were taken within the window")
	}
	if ok, _ := step(a, 61*time.Second, 20); !ok {
		t.Error("20 refused after the first 20 left the window")
	}
	if ok, until := step(b, 61*time.Second, 1); ok || !until.Equal(t0.Add(71*time.Second)) {
		t.Errorf("take at 61 s: ok=%v fits at %v, want refused until 71 s", ok, until.Sub(t0))
	}
}

// However many goroutines in however many processes take at once, the
// ledger never grants more than the limit.
func TestLookupsLedgerNeverGrantsMoreThanTheLimit(t *testing.T) {
	dir := t.TempDir()
	a := OpenLookups(dir, "acct-race")
	if a == nil {
		t.Skip("no file locks here")
	}
	ledgers := []*Lookups{a, secondLedger(t, dir, "acct-race"), secondLedger(t, dir, "acct-race")}
	now := time.Unix(1_800_000_000, 0)
	var granted atomic.Int64
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Go(func() {
			for range 50 {
				ok, _, err := ledgers[i%len(ledgers)].Take(now, 1, 250, time.Minute)
				if err != nil {
					t.Error(err)
					return
				}
				if ok {
					granted.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if got := granted.Load(); got != 250 {
		t.Errorf("granted %d lookups of 600 asked, want exactly the limit 250", got)
	}
}

func TestLookupsLedgerRefusesAFileThatIsNotOne(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "acct-other"), []byte("not a ledger"), 0o600); err != nil {
		t.Fatal(err)
	}
	l := OpenLookups(dir, "acct-other")
	if l == nil {
		t.Skip("no file locks here")
	}
	if _, _, err := l.Take(time.Now(), 1, 10, time.Minute); err == nil {
		t.Fatal("a take on a file that is not a ledger succeeded")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "acct-other")); string(b) != "not a ledger" {
		t.Errorf("the file was changed to %q", b)
	}
}

func TestOpenLookups(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "acct-stale")
	if err := os.WriteFile(stale, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-25 * time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	l := OpenLookups(dir, "acct-open")
	if l == nil {
		t.Skip("no file locks here")
	}
	if OpenLookups(dir, "acct-open") != l {
		t.Error("a second open in one process made a second ledger (and file)")
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("a ledger untouched for 25 h was kept (%v)", err)
	}
	for _, account := range []string{"", "../escape", "a/b"} {
		if OpenLookups(dir, account) != nil {
			t.Errorf("OpenLookups(%q) opened a ledger", account)
		}
	}
	if info, err := os.Stat(filepath.Join(dir, "acct-open")); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("ledger file mode: %v (%v), want 0600", info.Mode().Perm(), err)
	}
}
