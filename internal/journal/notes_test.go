package journal

import (
	"os"
	"path/filepath"
	"testing"
)

// TestNotes: one file per key beside the create journal, never a path
// outside it, and a note ReadAll's caller refuses is gone.
func TestNotes(t *testing.T) {
	j := NewCreates(t.TempDir())
	n := NotesOf(j, "things")
	if j.Dir() != "" && n.dir != filepath.Join(j.Dir(), "things") {
		t.Fatalf("notes in %q, want beside the create journal", n.dir)
	}
	n = NewNotes(t.TempDir())
	n.Write("a", []byte(`1`))
	n.Write("b", []byte(`2`))
	n.Write("../c", []byte(`3`))
	n.Write(`x\y`, []byte(`4`))
	got := map[string]string{}
	n.ReadAll(func(key string, data []byte) bool {
		got[key] = string(data)
		return key == "a"
	})
	if len(got) != 2 || got["a"] != "1" || got["b"] != "2" {
		t.Fatalf("read %v, want a and b only", got)
	}
	if _, err := os.Stat(filepath.Join(n.dir, "b.json")); !os.IsNotExist(err) {
		t.Fatalf("a refused note is still there: %v", err)
	}
	n.Remove("a")
	if files, _ := filepath.Glob(filepath.Join(filepath.Dir(n.dir), "*", "*")); len(files) != 0 {
		t.Fatalf("files left: %v", files)
	}
	var none *Notes
	none.Write("a", nil)
	none.ReadAll(func(string, []byte) bool { t.Fatal("a nil notebook read a note"); return true })
}
