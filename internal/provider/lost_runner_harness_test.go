package provider

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A lost runner, as ephemeral CI has them: the next apply runs on another
// machine with the same working directory and the same state (a remote
// backend), but a HOME — and so a cache directory, and the provider's
// local journals in it — of its own.

// onNewRunner gives w's runs from now on a HOME of their own, as a new
// runner has: an empty cache directory, hence no journal of what an
// earlier apply did. It returns the HOME.
func (w *tfWork) onNewRunner() string {
	w.t.Helper()
	home := w.t.TempDir()
	env := make([]string, 0, len(w.Env)+1)
	for _, kv := range w.Env {
		k, _, _ := strings.Cut(kv, "=")
		if k != "HOME" && k != "XDG_CACHE_HOME" {
			env = append(env, kv)
		}
	}
	w.Env = append(env, "HOME="+home)
	return home
}

// journalsIn lists the journal entry files the provider left under home's
// cache directory.
func journalsIn(t *testing.T, home string) []string {
	t.Helper()
	var found []string
	root := filepath.Join(home, ".cache", "terraform-provider-prime")
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".json") {
			found = append(found, p)
		}
		return nil
	})
	return found
}
