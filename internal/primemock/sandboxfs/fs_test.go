package sandboxfs

import (
	"bytes"
	"errors"
	"io/fs"
	"testing"
)

func newTestFS() *FS { return New(NewStore(), "test-host", nil) }

func TestFileSystemSkeleton(t *testing.T) {
	f := newTestFS()
	for _, d := range []string{"/", "/root", "/tmp", "/etc", "/home", "/sandbox-workspace", "/usr/bin", "/dev"} {
		if fi, err := f.Stat(d, true); err != nil || !fi.IsDir() {
			t.Errorf("%s: %+v %v, want a directory", d, fi, err)
		}
	}
	if b, err := f.ReadFile("/etc/hostname"); err != nil || string(b) != "test-host\n" {
		t.Errorf("/etc/hostname = %q %v", b, err)
	}
	if fi, err := f.Stat("/dev/null", true); err != nil || fi.Type != "device" {
		t.Errorf("/dev/null: %+v %v", fi, err)
	}
	if _, err := f.Stat("/nope", true); !errors.Is(err, ErrNoEnt) {
		t.Errorf("/nope: %v", err)
	}
}

// TestFileSystemResolve: symlinks in the directory part are followed, the
// last one only when asked; relative targets resolve against the link's
// directory; loops end with ELOOP.
func TestFileSystemResolve(t *testing.T) {
	f := newTestFS()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(f.Mkdir("/data/sub", 0o755, true))
	must(f.WriteFile("/data/sub/file", []byte("x"), 0o644))
	must(f.Symlink("/data", "/abs"))
	must(f.Symlink("sub", "/data/rel"))
	must(f.Symlink("../data/sub/file", "/tmp/up"))
	must(f.Symlink("/etc", "/data/etc"))
	must(f.Symlink("loop2", "/tmp/loop1"))
	must(f.Symlink("loop1", "/tmp/loop2"))
	must(f.Symlink("/nowhere/x", "/tmp/dangling"))
	for _, tc := range []struct {
		path   string
		follow bool
		want   string // type, or an error
	}{
		{"/abs/sub/file", true, "file"},
		{"/abs", false, "symlink"},
		{"/abs", true, "dir"},
		{"/data/rel/file", true, "file"},
		{"/tmp/up", true, "file"},
		{"/tmp/up", false, "symlink"},
		{"/data/etc/hostname", true, "file"},
		{"/tmp/loop1", true, errLoop.Error()},
		{"/tmp/loop1/x", false, errLoop.Error()},
		{"/tmp/dangling", true, ErrNoEnt.Error()},
		{"/data/sub/file/x", true, ErrNotDir.Error()},
		{"/data/../data/./sub", true, "dir"},
	} {
		fi, err := f.Stat(tc.path, tc.follow)
		got := fi.Type
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("stat(%s, follow %v) = %s, want %s", tc.path, tc.follow, got, tc.want)
		}
	}
	// Writing through a dangling link creates its target when the
	// target's directory exists (open with O_CREAT follows it).
	must(f.Symlink("/tmp/made", "/tmp/to-make"))
	must(f.WriteFile("/tmp/to-make", []byte("via link"), 0o644))
	if b, _ := f.ReadFile("/tmp/made"); string(b) != "via link" {
		t.Errorf("written through a link: %q", b)
	}
	if err := f.WriteFile("/tmp/dangling", []byte("x"), 0o644); !errors.Is(err, ErrNoEnt) {
		t.Errorf("through a link into a missing directory: %v", err)
	}
}

func TestFileSystemOperations(t *testing.T) {
	f := newTestFS()
	for _, tc := range []struct {
		name string
		op   func() error
		want error
	}{
		{"mkdir without parent", func() error { return f.Mkdir("/a/b", 0o755, false) }, ErrNoEnt},
		{"mkdir -p", func() error { return f.Mkdir("/a/b", 0o755, true) }, nil},
		{"mkdir -p existing", func() error { return f.Mkdir("/a/b", 0o755, true) }, nil},
		{"mkdir existing", func() error { return f.Mkdir("/a", 0o755, false) }, ErrExist},
		{"write into missing dir", func() error { return f.WriteFile("/x/y", nil, 0o644) }, ErrNoEnt},
		{"write a directory", func() error { return f.WriteFile("/a", []byte("x"), 0o644) }, ErrIsDir},
		{"write", func() error { return f.WriteFile("/a/b/f", []byte("data"), 0o600) }, nil},
		{"mkdir -p over a file", func() error { return f.Mkdir("/a/b/f", 0o755, true) }, ErrExist},
		{"mkdir -p under a file", func() error { return f.Mkdir("/a/b/f/g", 0o755, true) }, ErrNotDir},
		{"rm a directory", func() error { return f.Remove("/a", false, false) }, ErrIsDir},
		{"rmdir a full directory", func() error { return f.Remove("/a", false, true) }, errNotEmpty},
		{"rm the root", func() error { return f.Remove("/", true, false) }, errPerm},
		{"rename into itself", func() error { return f.Rename("/a", "/a/b/c", false) }, ErrInval},
		{"rename a file over a directory", func() error { return f.Rename("/a/b/f", "/a", false) }, ErrIsDir},
		{"rename", func() error { return f.Rename("/a/b/f", "/tmp/g", false) }, nil},
		{"rename into a directory", func() error { return f.Rename("/tmp/g", "/a", true) }, nil},
		{"copy a directory without -r", func() error { return f.CopyTree("/a", "/tmp/a2", false) }, ErrIsDir},
		{"copy a tree", func() error { return f.CopyTree("/a", "/tmp/a2", true) }, nil},
		{"symlink over a file", func() error { return f.Symlink("x", "/a/g") }, ErrExist},
		{"rm -r", func() error { return f.Remove("/a", true, false) }, nil},
		{"rm missing", func() error { return f.Remove("/a", true, false) }, ErrNoEnt},
	} {
		if err := tc.op(); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if b, err := f.ReadFile("/tmp/a2/g"); err != nil || string(b) != "data" {
		t.Errorf("copied file: %q %v", b, err)
	}
	if fi, _ := f.Stat("/tmp/a2/g", true); fi.Mode != 0o600 {
		t.Errorf("copied mode %v, want 0600", fi.Mode)
	}
}

// TestBlobStoreShares: a thousand sandboxes given the same 1 MiB file (and
// a copy of it each) store it once; it is released with the last of them.
func TestBlobStoreShares(t *testing.T) {
	store := NewStore()
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	var fss []*FS
	for range 1000 {
		f := New(store, "h", nil)
		if err := f.WriteFile("/tmp/archive", bytes.Clone(data), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := f.CopyTree("/tmp/archive", "/root/copy", false); err != nil {
			t.Fatal(err)
		}
		fss = append(fss, f)
	}
	_, base := NewStore().Usage()
	blobs, stored := store.Usage()
	// The skeleton's small files are shared too.
	if stored > int64(len(data))+4096 || blobs > 4 {
		t.Fatalf("1000 copies of 1 MiB stored as %d blobs, %d bytes (base %d)", blobs, stored, base)
	}
	for _, f := range fss[:999] {
		f.Release()
	}
	if _, stored := store.Usage(); stored < int64(len(data)) {
		t.Fatalf("released while one sandbox still holds it: %d bytes", stored)
	}
	fss[999].Release()
	if blobs, stored := store.Usage(); blobs != 0 || stored != 0 {
		t.Fatalf("after every sandbox went: %d blobs, %d bytes", blobs, stored)
	}
	if _, err := fss[0].ReadFile("/etc/hostname"); !errors.Is(err, ErrGone) {
		t.Errorf("a released file system: %v, want errGone", err)
	}
}

// TestOpenFile: a file open for writing shows what was written so far,
// appends, and is stored once its last writer closes it; a file removed
// while open stores nothing.
func TestOpenFile(t *testing.T) {
	f := newTestFS()
	w, err := f.OpenWrite("/tmp/log", false)
	if err != nil {
		t.Fatal(err)
	}
	w2 := w.Dup()
	_ = w.Write([]byte("a"))
	_ = w2.Write([]byte("b"))
	if b, _ := f.ReadFile("/tmp/log"); string(b) != "ab" {
		t.Errorf("while open: %q", b)
	}
	w.Close()
	if blobs, _ := f.store.Usage(); blobs != 2 { // hostname, os-release
		t.Errorf("stored before the last writer closed: %d blobs", blobs)
	}
	w2.Close()
	if b, _ := f.ReadFile("/tmp/log"); string(b) != "ab" {
		t.Errorf("after close: %q", b)
	}
	a, _ := f.OpenWrite("/tmp/log", true)
	_ = a.Write([]byte("c"))
	a.Close()
	if b, _ := f.ReadFile("/tmp/log"); string(b) != "abc" {
		t.Errorf("appended: %q", b)
	}
	tr, _ := f.OpenWrite("/tmp/log", false)
	tr.Close()
	if fi, _ := f.Stat("/tmp/log", true); fi.Size != 0 {
		t.Errorf("truncated: size %d", fi.Size)
	}
	_, before := f.store.Usage()
	gone, _ := f.OpenWrite("/tmp/gone", false)
	_ = gone.Write([]byte("unlinked"))
	if err := f.Remove("/tmp/gone", false, false); err != nil {
		t.Fatal(err)
	}
	gone.Close()
	if _, stored := f.store.Usage(); stored != before {
		t.Errorf("a removed file was stored: %d bytes", stored)
	}
	if n, err := f.OpenWrite("/dev/null", false); err != nil || n.Write([]byte("x")) != nil {
		t.Errorf("/dev/null: %v", err)
	}
	if err := f.Chmod("/tmp/log", func(fs.FileMode) fs.FileMode { return 0o755 }); err != nil {
		t.Fatal(err)
	}
	if fi, _ := f.Stat("/tmp/log", true); fi.Mode != 0o755 {
		t.Errorf("chmod: %v", fi.Mode)
	}
}
