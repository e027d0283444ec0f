package prime

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func tarOf(t *testing.T, dir string) []byte {
	t.Helper()
	var buf bytes.Buffer
	n, err := WriteDirTar(&buf, dir)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) {
		t.Fatalf("WriteDirTar reported %d bytes, wrote %d", n, buf.Len())
	}
	return buf.Bytes()
}

func TestWriteDirTarIsDeterministic(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("modes and links are POSIX")
	}
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"b.txt": "bee", "a/z.txt": "zed", "a/b/c.txt": "sea", "run.sh": "#!/bin/sh\n"})
	if err := os.Chmod(filepath.Join(dir, "run.sh"), 0o755|fs.ModeSetuid); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../b.txt", filepath.Join(dir, "a", "link")); err != nil {
		t.Fatal(err)
	}
	first := tarOf(t, dir)

	// New timestamps, the same tree: the same bytes.
	later := time.Now().Add(time.Hour)
	_ = filepath.WalkDir(dir, func(p string, _ fs.DirEntry, _ error) error {
		_ = os.Chtimes(p, later, later)
		return nil
	})
	if second := tarOf(t, dir); !bytes.Equal(first, second) {
		t.Fatal("the same tree with new mtimes gave another archive")
	}

	tr := tar.NewReader(bytes.NewReader(first))
	var names []string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" || !h.ModTime.Equal(time.Unix(0, 0)) {
			t.Errorf("%s: uid %d gid %d uname %q gname %q mtime %s; want 0, 0, none, the epoch", h.Name, h.Uid, h.Gid, h.Uname, h.Gname, h.ModTime)
		}
		switch h.Name {
		case "run.sh":
			if h.Mode != 0o755 {
				t.Errorf("run.sh mode %o, want 755 (setuid dropped)", h.Mode)
			}
		case "a/link":
			if h.Typeflag != tar.TypeSymlink || h.Linkname != "../b.txt" {
				t.Errorf("a/link: type %q target %q; want a symlink to ../b.txt verbatim", h.Typeflag, h.Linkname)
			}
		case "b.txt":
			if b, _ := io.ReadAll(tr); string(b) != "bee" || h.Mode != 0o644 {
				t.Errorf("b.txt: %q mode %o", b, h.Mode)
			}
		}
	}
	want := []string{"a/", "a/b/", "a/b/c.txt", "a/link", "a/z.txt", "b.txt", "run.sh"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("names %v, want %v", names, want)
	}

	// A change of content or mode changes the fingerprint.
	if err := os.Chmod(filepath.Join(dir, "b.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(first, tarOf(t, dir)) {
		t.Error("a mode change left the archive unchanged")
	}
}

// hostileEntry is one entry of a test archive.
type hostileEntry struct {
	hdr  tar.Header
	body string
}

func buildTar(t *testing.T, entries []hostileEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := e.hdr
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(e.body))
		}
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if e.body != "" {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func reg(name, body string) hostileEntry {
	return hostileEntry{hdr: tar.Header{Name: name, Typeflag: tar.TypeReg}, body: body}
}

// listTree is every path under root, relative, with a marker of its kind.
func listTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = d.Type().String()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestExtractTarRefusesHostileEntries(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX paths and modes")
	}
	parent := t.TempDir()
	dest := filepath.Join(parent, "dest")
	if err := os.Mkdir(dest, 0o755); err != nil {
		t.Fatal(err)
	}
	archive := buildTar(t, []hostileEntry{
		{hdr: tar.Header{Name: "./", Typeflag: tar.TypeDir, Mode: 0o755}},
		reg("./good.txt", "good"),
		reg("../escape", "x"),
		reg("/etc/passwd", "x"),
		reg("a/../../x", "x"),
		{hdr: tar.Header{Name: "link", Typeflag: tar.TypeSymlink, Linkname: "/etc"}},
		reg("link/passwd", "root::0:0"),
		{hdr: tar.Header{Name: "hard", Typeflag: tar.TypeLink, Linkname: "good.txt"}},
		{hdr: tar.Header{Name: "dev", Typeflag: tar.TypeChar, Devmajor: 1, Devminor: 3}},
		{hdr: tar.Header{Name: "fifo", Typeflag: tar.TypeFifo}},
		reg("good.txt", "second"),
		{hdr: tar.Header{Name: "suid", Typeflag: tar.TypeReg, Mode: 0o4755}, body: "#!/bin/sh"},
		{hdr: tar.Header{Name: "sub/dir/", Typeflag: tar.TypeDir, Mode: 0o2775}},
		reg("sub/dir/file", "nested"),
	})
	res, err := ExtractTar(bytes.NewReader(archive), dest, ExtractLimits{MaxBytes: 1 << 20, MaxEntries: 100})
	if err != nil {
		t.Fatal(err)
	}
	refused := map[string]string{}
	for _, r := range res.Refused {
		refused[r.Name] = r.Reason
	}
	for name, reason := range map[string]string{
		"../escape": "..", "/etc/passwd": "absolute", "a/../../x": "..", "link": "symbolic link (to /etc)",
		"link/passwd": "below the refused entry link", "hard": "hard link", "dev": "device", "fifo": "fifo",
		"good.txt": "duplicate",
	} {
		if !strings.Contains(refused[name], reason) {
			t.Errorf("%s: refused as %q, want a reason with %q", name, refused[name], reason)
		}
	}
	if len(res.Refused) != 9 {
		t.Errorf("refused %v, want 9 entries", res.Refused)
	}

	// Nothing outside dest: the parent holds dest and nothing else.
	if got := listTree(t, parent); len(got) != len(listTree(t, dest))+1 {
		t.Errorf("the parent holds %v besides dest", got)
	}
	want := map[string]string{".": "d---------", "good.txt": "----------", "suid": "----------",
		"sub": "d---------", "sub/dir": "d---------", "sub/dir/file": "----------"}
	got := listTree(t, dest)
	if len(got) != len(want) {
		t.Errorf("dest holds %v, want %v", got, want)
	}
	for p, kind := range want {
		if got[p] != kind {
			t.Errorf("dest/%s: %q, want %q", p, got[p], kind)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dest, "good.txt")); string(b) != "good" {
		t.Errorf("good.txt = %q: a duplicate overwrote the first", b)
	}
	for p, mode := range map[string]fs.FileMode{"suid": 0o755, "sub/dir": fs.ModeDir | 0o775} {
		fi, err := os.Lstat(filepath.Join(dest, p))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != mode {
			t.Errorf("%s: mode %s, want %s (setuid/setgid/sticky stripped)", p, fi.Mode(), mode)
		}
	}
	sum := sha256.Sum256([]byte("nested"))
	files := map[string]ExtractedFile{}
	for _, f := range res.Files {
		files[f.Name] = f
	}
	if f := files["sub/dir/file"]; f.Size != 6 || f.SHA256 != hex.EncodeToString(sum[:]) || len(files) != 3 {
		t.Errorf("files = %+v", res.Files)
	}
}

func TestExtractTarLimits(t *testing.T) {
	archive := buildTar(t, []hostileEntry{reg("a", strings.Repeat("x", 600)), reg("b", strings.Repeat("y", 600))})
	dest := t.TempDir()
	_, err := ExtractTar(bytes.NewReader(archive), dest, ExtractLimits{MaxBytes: 1000})
	if !errors.Is(err, ErrArchiveTooLarge) {
		t.Fatalf("err = %v, want ErrArchiveTooLarge", err)
	}
	if _, statErr := os.Stat(filepath.Join(dest, "b")); !errors.Is(statErr, fs.ErrNotExist) {
		t.Errorf("the file over the limit was written (%v): a limit is not a truncation", statErr)
	}
	_, err = ExtractTar(bytes.NewReader(archive), t.TempDir(), ExtractLimits{MaxEntries: 1})
	if !errors.Is(err, ErrArchiveTooManyEntries) {
		t.Fatalf("err = %v, want ErrArchiveTooManyEntries", err)
	}
}

// A tree through WriteDirTar and ExtractTar comes back whole; links are
// reported, not made.
func TestDirTarRoundTrip(t *testing.T) {
	src := t.TempDir()
	writeTree(t, src, map[string]string{"x/y.txt": "why", "z": ""})
	dest := t.TempDir()
	var buf bytes.Buffer
	if _, err := WriteDirTar(&buf, src); err != nil {
		t.Fatal(err)
	}
	res, err := ExtractTar(&buf, dest, ExtractLimits{})
	if err != nil || len(res.Refused) != 0 || len(res.Files) != 2 || strings.Join(res.Dirs, ",") != "x" {
		t.Fatalf("res %+v, err %v", res, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dest, "x", "y.txt")); string(b) != "why" {
		t.Errorf("x/y.txt = %q", b)
	}
	// A root that is a link archives the directory it points to.
	if runtime.GOOS != "windows" {
		link := filepath.Join(t.TempDir(), "link")
		if err := os.Symlink(src, link); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(tarOf(t, link), tarOf(t, src)) {
			t.Error("a linked root gave another archive than its directory")
		}
	}
}

func TestSafeEntryName(t *testing.T) {
	for _, tt := range []struct{ in, name, why string }{
		{"a/b", "a/b", ""},
		{"./a/b/", "a/b", ""},
		{"./", "", ""},
		{".", "", ""},
		{"a//b", "a/b", ""},
		{"../x", "", `".."`},
		{"a/../../x", "", `".."`},
		{"a/..", "", `".."`},
		{"/etc/passwd", "", "absolute"},
		{`a\b`, "", "backslash"},
	} {
		name, why := safeEntryName(tt.in)
		if name != tt.name || (tt.why == "") != (why == "") || !strings.Contains(why, tt.why) {
			t.Errorf("safeEntryName(%q) = %q, %q; want %q, …%s…", tt.in, name, why, tt.name, tt.why)
		}
	}
}
