package main

import (
	"os"
	"path/filepath"
	"testing"
)

// Two runs of the same name (the file run and the big-file run at the same
// N were both files-n200-base) each get a directory and a provider wrapper
// of their own: the second one used to fail on the first one's symlink
// ("file exists"), which stopped the whole benchmark.
func TestRunsNeverShareADirectory(t *testing.T) {
	c := defaultConfig()
	c.workdir = t.TempDir()
	c.providerBin = filepath.Join(c.workdir, "terraform-provider-prime")
	if err := os.WriteFile(c.providerBin, []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	// A directory left on disk by an earlier invocation (a -workdir reused)
	// is not reused either.
	if err := os.MkdirAll(filepath.Join(c.workdir, "files-n7-base", "provider", "terraform-provider-prime"), 0o750); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for range 3 {
		e, err := prepareRun(c, "files-n7-base")
		if err != nil {
			t.Fatalf("a second run of the same name: %v", err)
		}
		if seen[e.dir] {
			t.Fatalf("two runs share %s", e.dir)
		}
		seen[e.dir] = true
		if _, err := os.Lstat(filepath.Join(e.dir, "provider", "terraform-provider-prime")); err != nil {
			t.Fatalf("run %s has no provider wrapper: %v", e.dir, err)
		}
	}
}

// The file run and the big-file run name their directories after their
// archive's set, so their names differ at the same N.
func TestFileRunsNameTheirArchive(t *testing.T) {
	if a, b := fileRunName("task", 200, false), fileRunName("big-task", 200, false); a == b {
		t.Fatalf("the file run and the big-file run at N=200 are both %q", a)
	}
}
