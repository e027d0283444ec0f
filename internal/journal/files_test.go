package journal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// An entry's value is its last whole version: a version torn by a kill
// (the process died inside the write) counts as not written.
func TestEntryVersions(t *testing.T) {
	cases := []struct {
		name, data string
		want       string // "" when the entry has no whole version
	}{
		{"one version (the format before versions were appended)", `{"a":1}`, `{"a":1}`},
		{"appended versions: the last wins", "{\"a\":1}\n{\"a\":1,\"b\":2}", `{"a":1,"b":2}`},
		{"a torn last version: the one before", "{\"a\":1}\n{\"a\":1,\"b\"", `{"a":1}`},
		{"a torn version between whole ones", "{\"a\":1}\n{\"a\"\n{\"a\":3}", `{"a":3}`},
		{"a torn first version", `{"a":`, ""},
		{"empty (created, not yet written)", "", ""},
		{"not JSON", "not a journal entry", ""},
		{"garbage after a version", "{\"a\":1}\nxx{\"a\":2}", `{"a":1}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := string(currentVersion([]byte(c.data))); got != c.want {
				t.Fatalf("currentVersion(%q) = %q, want %q", c.data, got, c.want)
			}
			var v map[string]any
			if err := decodeEntry([]byte(c.data), &v); (err == nil) != (c.want != "") {
				t.Fatalf("decodeEntry(%q): %v", c.data, err)
			}
		})
	}
}

// A new version is appended to the entry through its lock, in one write,
// never by replacing the file: the entry keeps its file (and its lock),
// and a kill inside the write leaves the version before it.
func TestEntryVersionIsAppendedAndSurvivesATornWrite(t *testing.T) {
	dir := t.TempDir()
	owner := NewCreates(dir).Begin(req("eval-0"))
	path := filepath.Join(dir, owner.key+".json")
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	owner.RecordID("sbx-1")
	after, err := os.Stat(path)
	if err != nil || !os.SameFile(before, after) {
		t.Fatalf("recording the ID replaced the entry's file (%v)", err)
	}
	if got := NewCreates(dir).Begin(req("eval-0")); got.adopted {
		t.Fatal("an entry lost its lock when a version was appended: another journal adopted it")
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(tmps) != 0 {
		t.Fatalf("a version left temporary files: %v", tmps)
	}

	// The process dies inside its next write: half a version is on disk.
	if _, err := owner.f.WriteString("\n{\"idempotency_key\":\"" + owner.key + "\",\"sandbox_id\":\"sbx-"); err != nil {
		t.Fatal(err)
	}
	owner.die()
	next := NewCreates(dir).Begin(req("eval-0"))
	if !next.adopted || next.e.SandboxID != "sbx-1" {
		t.Fatalf("the entry was not adopted with its last whole version: %+v", next.e)
	}
	// The adopter's own versions go after the torn one and are read back.
	next.RecordID("sbx-2")
	next.die()
	if again := NewCreates(dir).Begin(req("eval-0")); !again.adopted || again.e.SandboxID != "sbx-2" {
		t.Fatalf("a version appended after a torn one was lost: %+v", again.e)
	}
}

// An entry is created under its own name and locked right after: a scan
// that locks it in between finds it empty and must leave it (its creator
// is about to write it), unless it is old enough to be a killed creator's.
func TestNewbornEmptyEntryIsLeftAlone(t *testing.T) {
	dir := t.TempDir()
	newborn := filepath.Join(dir, "newborn.json")
	abandoned := filepath.Join(dir, "abandoned.json")
	for _, p := range []string{newborn, abandoned} {
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(abandoned, old, old); err != nil {
		t.Fatal(err)
	}
	NewCreates(dir).Begin(req("eval-0")) // scans the directory
	if _, err := os.Stat(newborn); err != nil {
		t.Fatalf("a scan removed an entry being created: %v", err)
	}
	if _, err := os.Stat(abandoned); !os.IsNotExist(err) {
		t.Fatalf("a scan kept an empty entry two hours old: %v", err)
	}
}

// The clean-end stamp is a version too: appended, and the entry before it
// is kept whole.
func TestReleasedStampIsAppended(t *testing.T) {
	dir := t.TempDir()
	j := NewCreates(dir)
	c := j.Begin(req("eval-0"))
	c.RecordID("sbx-1")
	path := filepath.Join(dir, c.key+".json")
	c.HandOver()
	j.handed.release()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var e journalEntry
	if err := decodeEntry(data, &e); err != nil || e.SandboxID != "sbx-1" || e.ReleasedAt.IsZero() {
		t.Fatalf("stamped entry = %+v (%v) from %q", e, err, data)
	}
	if n := strings.Count(string(data), "\n") + 1; n != 3 {
		t.Fatalf("the entry holds %d versions, want 3 (created, its ID, stamped): %q", n, data)
	}
}
