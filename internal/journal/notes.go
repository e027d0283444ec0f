package journal

import (
	"os"
	"path/filepath"
	"strings"
)

// Notes are small keyed records kept beside the create journal, under the
// same switch: one JSON file per key (the key names the file, so it never
// holds a path separator), replaced atomically (written under a temporary
// name, then renamed), without the entries' locks. A note is a hint its
// user checks against the platform before it acts on it (the egress
// domain's baselines of failed-closed creates), so a lost, stale or
// concurrent note is harmless. The directory is a subdirectory of the
// create journal's, which its scan ignores. Its files are an on-disk
// format: keep their names.
type Notes struct {
	dir string // "": none are kept on disk
}

// NotesOf is the notes named name beside j (none on disk when j is
// disabled).
func NotesOf(j *Creates, name string) *Notes {
	if j.Dir() == "" || name == "" || strings.ContainsAny(name, `/\`) {
		return &Notes{}
	}
	return &Notes{dir: filepath.Join(j.Dir(), name)}
}

// NewNotes keeps notes in dir ("": none on disk).
func NewNotes(dir string) *Notes { return &Notes{dir: dir} }

func validNoteKey(key string) bool { return key != "" && !strings.ContainsAny(key, `/\`) }

func (n *Notes) path(key string) string { return filepath.Join(n.dir, key+".json") }

// ReadAll calls keep with every note's key and content; a note keep
// refuses, or one that cannot be read, is removed.
func (n *Notes) ReadAll(keep func(key string, data []byte) bool) {
	if n == nil || n.dir == "" {
		return
	}
	files, _ := filepath.Glob(filepath.Join(n.dir, "*.json"))
	for _, p := range files {
		data, err := os.ReadFile(p) //nolint:gosec // G304: our own journal directory
		if err != nil || !keep(strings.TrimSuffix(filepath.Base(p), ".json"), data) {
			_ = os.Remove(p)
		}
	}
}

// Write replaces the note of key with data, best effort.
func (n *Notes) Write(key string, data []byte) {
	if n == nil || n.dir == "" || !validNoteKey(key) || os.MkdirAll(n.dir, 0o700) != nil {
		return
	}
	final := n.path(key)
	tmp := final + ".tmp"
	if os.WriteFile(tmp, data, 0o600) != nil || os.Rename(tmp, final) != nil {
		_ = os.Remove(tmp)
	}
}

// Remove drops the note of key.
func (n *Notes) Remove(key string) {
	if n == nil || n.dir == "" || !validNoteKey(key) {
		return
	}
	_ = os.Remove(n.path(key))
}
