package shell

// tar: create, extract and list archives stored in the sandbox's file
// system, with GNU tar's member names ("./a" for "tar -cf A -C D .") and
// messages. Go's archive/tar reads ustar, PAX and GNU archives.

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock/sandboxfs"
)

func (in *interp) tar(_ int, args []string) int {
	// Old style: "tar xzf A" bundles the letters without a dash.
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		args = append([]string{"-" + args[0]}, args[1:]...)
	}
	o, bad := getopt(args, "xctzvpomhP", "fC", map[string]byte{
		"extract": 'x', "get": 'x', "create": 'c', "list": 't', "gzip": 'z', "gunzip": 'z', "verbose": 'v',
		"file": 'f', "directory": 'C', "no-same-owner": 'o', "same-permissions": 'p', "preserve-permissions": 'p',
		"strip-components": 's', "no-same-permissions": 'q', "touch": 'm', "absolute-names": 'P',
	})
	if bad != "" {
		in.errorf("tar: unrecognized option '%s'\nTry 'tar --help' or 'tar --usage' for more information.\n", bad)
		return 2
	}
	modes := 0
	for _, f := range []byte("xct") {
		if o.has(f) {
			modes++
		}
	}
	if modes != 1 {
		in.errorf("tar: You must specify one of the '-Acdtrux', '--delete' or '--test-label' options\nTry 'tar --help' or 'tar --usage' for more information.\n")
		return 2
	}
	t := &tarRun{in: in, archive: o.value['f'], dir: in.cwd, verbose: o.has('v'), gzip: o.has('z')}
	if t.archive == "" {
		t.archive = "-"
	}
	if d, ok := o.value['C']; ok {
		t.dir = in.abs(d)
	}
	if v, ok := o.value['s']; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			in.errorf("tar: Invalid number of elements: '%s'\n", v)
			return 2
		}
		t.strip = n
	}
	if o.has('c') {
		return t.create(o.operands)
	}
	return t.extract(o.has('t'))
}

type tarRun struct {
	in       *interp
	archive  string
	dir      string
	verbose  bool
	gzip     bool
	strip    int
	failed   bool
	warnedAb bool
}

func (t *tarRun) errorf(format string, args ...any) { t.in.errorf("tar: "+format+"\n", args...) }

// fatal is GNU tar's unrecoverable error.
func (t *tarRun) fatal(format string, args ...any) int {
	t.errorf(format, args...)
	t.errorf("Error is not recoverable: exiting now")
	return 2
}

func (t *tarRun) status() int {
	if t.failed {
		t.errorf("Exiting with failure status due to previous errors")
		return 2
	}
	return 0
}

func (t *tarRun) extract(list bool) int {
	var data []byte
	if t.archive == "-" {
		data = t.in.stdin()
	} else {
		var err error
		if data, err = t.in.m.fs.ReadFile(t.in.abs(t.archive)); err != nil {
			return t.fatal("%s: Cannot open: %v", t.archive, err)
		}
	}
	if !list {
		if fi, err := t.in.m.fs.Stat(t.dir, true); err != nil || !fi.IsDir() {
			if err == nil {
				err = sandboxfs.ErrNotDir
			}
			return t.fatal("%s: Cannot open: %v", t.dir, err)
		}
	}
	var r io.Reader = bytes.NewReader(data)
	// GNU tar recognises a compressed archive by itself when reading.
	if t.gzip || bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(r)
		if err != nil {
			t.errorf("This does not look like a tar archive")
			t.failed = true
			return t.status()
		}
		r = zr
	}
	tr := tar.NewReader(r)
	// Symlinks are made last, so that no member of the archive is written
	// through a link the same archive made (GNU tar delays the dangerous
	// ones for the same reason).
	type link struct{ name, target string }
	var links []link
	for members := 0; ; members++ {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			if members == 0 && len(data) > 0 && !allZero(data) {
				t.errorf("This does not look like a tar archive")
				t.failed = true
			}
			break
		}
		if err != nil {
			if members == 0 {
				t.errorf("This does not look like a tar archive")
			} else {
				t.errorf("Unexpected EOF in archive")
			}
			t.failed = true
			break
		}
		if list || t.verbose {
			t.in.write(1, hdr.Name+"\n")
		}
		if list {
			continue
		}
		name, ok := t.memberName(hdr.Name)
		if !ok {
			continue
		}
		dest := path.Join(t.dir, name)
		perm := fs.FileMode(hdr.Mode).Perm() //nolint:gosec // G115: masked to the permission bits
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := t.in.m.fs.Mkdir(dest, perm, true); err != nil {
				t.errorf("%s: Cannot mkdir: %v", hdr.Name, err)
				t.failed = true
				continue
			}
			_ = t.in.m.fs.Chmod(dest, func(fs.FileMode) fs.FileMode { return perm })
		case tar.TypeReg:
			body, err := io.ReadAll(io.LimitReader(tr, sandboxfs.MaxFileBytes+1))
			if err != nil {
				t.errorf("Unexpected EOF in archive")
				t.failed = true
				return t.status()
			}
			t.writeMember(hdr.Name, dest, body, perm)
		case tar.TypeLink:
			// [I: tar-hardlinks] A hard link becomes a copy: the mock has no inodes.
			src, ok := t.memberName(hdr.Linkname)
			if !ok {
				continue
			}
			body, err := t.in.m.fs.ReadFile(path.Join(t.dir, src))
			if err != nil {
				t.errorf("%s: Cannot hard link to '%s': %v", hdr.Name, hdr.Linkname, err)
				t.failed = true
				continue
			}
			t.writeMember(hdr.Name, dest, body, perm)
		case tar.TypeSymlink:
			links = append(links, link{dest, hdr.Linkname})
		}
		// Devices, fifos and the like are skipped.
	}
	for _, l := range links {
		if !t.prepare(l.name, l.name) {
			continue
		}
		if err := t.in.m.fs.Symlink(l.target, l.name); err != nil {
			t.errorf("%s: Cannot create symlink to '%s': %v", strings.TrimPrefix(l.name, t.dir+"/"), l.target, err)
			t.failed = true
		}
	}
	return t.status()
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// memberName makes a member's name safe to extract, as GNU tar does: a
// leading "/" is removed (once reported), a name with ".." is skipped.
func (t *tarRun) memberName(name string) (string, bool) {
	if strings.HasPrefix(name, "/") {
		if !t.warnedAb {
			t.errorf("Removing leading `/' from member names")
			t.warnedAb = true
		}
		name = strings.TrimLeft(name, "/")
	}
	for _, c := range strings.Split(name, "/") {
		if c == ".." {
			t.errorf("%s: Member name contains '..'", name)
			t.failed = true
			return "", false
		}
	}
	if t.strip > 0 {
		comps := sandboxfs.SplitPath(name)
		if len(comps) <= t.strip {
			return "", false
		}
		name = strings.Join(comps[t.strip:], "/")
	}
	clean := path.Clean("/" + name)
	if clean == "/" {
		return ".", true
	}
	return clean[1:], true
}

// prepare removes what stands where a member goes (a file or a link is
// replaced, not written through; a directory stays and refuses a file).
func (t *tarRun) prepare(member, dest string) bool {
	fi, err := t.in.m.fs.Stat(dest, false)
	if err != nil {
		// Missing parents are created, as GNU tar does.
		if mkErr := t.in.m.fs.Mkdir(path.Dir(dest), 0o755, true); mkErr != nil {
			t.errorf("%s: Cannot open: %v", member, mkErr)
			t.failed = true
			return false
		}
		return true
	}
	if fi.IsDir() {
		t.errorf("%s: Cannot open: %v", member, sandboxfs.ErrIsDir)
		t.failed = true
		return false
	}
	_ = t.in.m.fs.Remove(dest, false, false)
	return true
}

func (t *tarRun) writeMember(member, dest string, body []byte, perm fs.FileMode) {
	if !t.prepare(member, dest) {
		return
	}
	if err := t.in.m.fs.WriteFile(dest, body, perm); err != nil {
		t.errorf("%s: Cannot open: %v", member, err)
		t.failed = true
		return
	}
	_ = t.in.m.fs.Chmod(dest, func(fs.FileMode) fs.FileMode { return perm })
}

func (t *tarRun) create(operands []string) int {
	if len(operands) == 0 {
		return t.fatal("Cowardly refusing to create an empty archive")
	}
	archive := ""
	if t.archive != "-" {
		archive = t.in.abs(t.archive)
		// The archive exists (empty) while the tree is read, as with GNU
		// tar, which is why it can meet itself.
		if err := t.in.m.fs.WriteFile(archive, nil, 0o644); err != nil {
			return t.fatal("%s: Cannot open: %v", t.archive, err)
		}
	}
	var buf bytes.Buffer
	var w io.Writer = &buf
	var zw *gzip.Writer
	if t.gzip {
		zw = gzip.NewWriter(&buf)
		w = zw
	}
	tw := tar.NewWriter(w)
	var add func(name, p string) error
	add = func(name, p string) error {
		if p == archive {
			t.errorf("%s: file is the archive; not dumped", name)
			return nil
		}
		fi, err := t.in.m.fs.Stat(p, false)
		if err != nil {
			t.errorf("%s: Cannot stat: %v", name, err)
			t.failed = true
			return nil
		}
		hdr := &tar.Header{
			Name: name, Mode: int64(fi.Mode.Perm()), ModTime: fi.ModTime.Truncate(1e9),
			Uname: "root", Gname: "root",
		}
		if t.verbose {
			t.in.write(1, name+"\n")
		}
		switch fi.Type {
		case "dir":
			hdr.Typeflag = tar.TypeDir
			if !strings.HasSuffix(hdr.Name, "/") {
				hdr.Name += "/"
			}
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			entries, err := t.in.m.fs.ReadDir(p)
			if err != nil {
				return err
			}
			for _, e := range entries {
				if err := add(strings.TrimSuffix(hdr.Name, "/")+"/"+e.Name, path.Join(p, e.Name)); err != nil {
					return err
				}
			}
			return nil
		case "symlink":
			hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, fi.Target
			return tw.WriteHeader(hdr)
		case "file":
			body, err := t.in.m.fs.ReadFile(p)
			if err != nil {
				return err
			}
			hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(body))
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			_, err = tw.Write(body)
			return err
		}
		t.errorf("%s: socket ignored", name)
		return nil
	}
	for _, op := range operands {
		name := op
		if name == "." {
			name = "./"
		}
		if err := add(name, path.Join(t.dir, op)); err != nil {
			return t.fatal("%s: %v", op, err)
		}
	}
	if err := tw.Close(); err != nil {
		return t.fatal("%v", err)
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			return t.fatal("%v", err)
		}
	}
	if archive == "" {
		t.in.writeBytes(1, buf.Bytes())
		return t.status()
	}
	if err := t.in.m.fs.WriteFile(archive, buf.Bytes(), 0o644); err != nil {
		return t.fatal("%s: Cannot write: %v", t.archive, err)
	}
	return t.status()
}
