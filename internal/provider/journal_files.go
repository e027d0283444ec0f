package provider

import (
	"io"
	"os"
	"path/filepath"
	"strings"
)

// The files the create journal and the job journal keep: one JSON entry
// per file, held under an exclusive lock (tryLock) while its process owns
// it. The kernel releases the lock when the process dies, which is what
// makes an unlocked entry a leftover. Every operation is best effort: a
// file-system problem only means no entry.

// createLockedEntry writes data to dir/name.json: created and locked under
// a temporary name, then renamed, so the entry is locked from the moment
// another process can see it. It returns the locked file and the entry's
// path, or nil when that fails.
func createLockedEntry(dir, name string, data []byte) (*os.File, string) {
	if dir == "" || name == "" || strings.ContainsAny(name, `/\`) || os.MkdirAll(dir, 0o700) != nil {
		return nil, ""
	}
	final := filepath.Join(dir, name+".json")
	tmp := final + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600) //nolint:gosec // G304: our own journal directory
	if err != nil {
		return nil, ""
	}
	if locked, _ := tryLock(f); !locked {
		_ = f.Close()
		_ = os.Remove(tmp)
		return nil, ""
	}
	if writeEntry(f, data) != nil || os.Rename(tmp, final) != nil {
		_ = f.Close()
		_ = os.Remove(tmp)
		return nil, ""
	}
	return f, final
}

// writeEntry rewrites a locked entry through its file (never re-creating
// one that was removed).
func writeEntry(f *os.File, data []byte) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt(data, 0)
	return err
}

// scanLeftovers locks every entry of dir that no live process holds and
// offers it to keep, with its name (without .json) and its contents; an
// entry keep refuses is removed. Kept entries stay locked by this process
// through f, which keep takes over.
func scanLeftovers(dir string, keep func(name, path string, f *os.File, data []byte) bool) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, p := range files {
		f, err := os.OpenFile(p, os.O_RDWR, 0) //nolint:gosec // G304: our own journal directory
		if err != nil {
			continue
		}
		if locked, _ := tryLock(f); !locked {
			_ = f.Close() // owned by a live process
			continue
		}
		data, err := io.ReadAll(f)
		if err != nil || !keep(strings.TrimSuffix(filepath.Base(p), ".json"), p, f, data) {
			_ = os.Remove(p)
			_ = f.Close()
		}
	}
}
