package prime

// Tar archives of directories: a deterministic one of a local tree (its
// sha256 is a plan-time fingerprint of the tree), and a careful unpacking
// of one that came from a sandbox, whose agent is not trusted.

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// archiveEpoch is every entry's mtime: a tree's archive must not change
// when only its timestamps do.
var archiveEpoch = time.Unix(0, 0).UTC()

// WriteDirTar writes a deterministic tar archive of the local directory dir
// to w and returns the bytes written. The same tree gives byte-identical
// output: entries in lexical order of their names (a directory before
// what it holds), names relative to dir without a leading "./" ("a/b",
// directories "a/"), no entry for dir itself, mtime the Unix epoch, uid
// and gid 0, no user or group names, permission bits kept (setuid, setgid
// and sticky dropped). Regular files, directories and symbolic links (as
// links, their target verbatim) are archived; anything else (devices,
// sockets, fifos) is an error naming its path. Files are streamed, never
// held in memory; one that changes size while it is read is an error.
func WriteDirTar(w io.Writer, dir string) (int64, error) {
	// A root that is a link to a directory is archived as that directory
	// (links below it stay links).
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return 0, fmt.Errorf("archiving %s: %w", dir, err)
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return 0, fmt.Errorf("archiving %s: not a directory", dir)
	}
	cw := &countingWriter{w: w}
	tw := tar.NewWriter(cw)
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		return writeTarEntry(tw, p, filepath.ToSlash(rel))
	})
	if err == nil {
		err = tw.Close()
	}
	if err != nil {
		return cw.n, fmt.Errorf("archiving %s: %w", dir, err)
	}
	return cw.n, nil
}

// writeTarEntry writes one entry (WalkDir visits names in lexical order).
func writeTarEntry(tw *tar.Writer, p, name string) error {
	fi, err := os.Lstat(p)
	if err != nil {
		return err
	}
	hdr := &tar.Header{Name: name, Mode: int64(fi.Mode().Perm()), ModTime: archiveEpoch, Format: tar.FormatPAX}
	switch m := fi.Mode(); {
	case m.IsRegular():
		hdr.Typeflag, hdr.Size = tar.TypeReg, fi.Size()
	case m.IsDir():
		hdr.Typeflag, hdr.Name = tar.TypeDir, name+"/"
	case m&fs.ModeSymlink != 0:
		target, err := os.Readlink(p)
		if err != nil {
			return err
		}
		hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, target
	default:
		return fmt.Errorf("%s: a %s cannot be archived (only files, directories and symbolic links)", p, fileKind(m))
	}
	// PAX is only written when USTAR cannot hold a name; asking for it
	// keeps long names, and the format, the same on every run.
	if err := tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	if hdr.Typeflag != tar.TypeReg {
		return nil
	}
	f, err := os.Open(p) //nolint:gosec // G304: archiving the caller's own tree is the point
	if err != nil {
		return err
	}
	defer f.Close()
	n, err := io.Copy(tw, io.LimitReader(f, hdr.Size))
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	if n != hdr.Size {
		return fmt.Errorf("%s: the file shrank from %d to %d bytes while it was archived", p, hdr.Size, n)
	}
	var one [1]byte
	if k, _ := f.Read(one[:]); k > 0 {
		return fmt.Errorf("%s: the file grew while it was archived", p)
	}
	return nil
}

func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeDevice != 0 && m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	case m&fs.ModeNamedPipe != 0:
		return "fifo"
	case m&fs.ModeSocket != 0:
		return "socket"
	}
	return "special file (" + m.Type().String() + ")"
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// ExtractLimits bound an extraction; zero means no limit.
type ExtractLimits struct {
	// MaxBytes bounds the total size of the regular files; an archive
	// that holds more is an error, not a truncation.
	MaxBytes int64
	// MaxEntries bounds the number of entries, refused ones included.
	MaxEntries int
}

// ExtractedFile is one regular file an extraction wrote.
type ExtractedFile struct {
	Name   string // relative to dest, slash-separated, no leading "./"
	Size   int64
	SHA256 string // hex
}

// RefusedEntry is an archive entry an extraction did not write, and why.
type RefusedEntry struct {
	Name   string
	Reason string
}

// ExtractResult is what ExtractTar wrote and what it refused.
type ExtractResult struct {
	Files   []ExtractedFile
	Dirs    []string // directories created, relative to dest
	Refused []RefusedEntry
}

// Errors of ExtractTar, matched with errors.Is.
var (
	ErrArchiveTooLarge       = errors.New("the archive exceeds its size limit")
	ErrArchiveTooManyEntries = errors.New("the archive exceeds its entry limit")
)

// ExtractTar unpacks an untrusted tar archive into dest, a directory the
// caller has just created empty (and renames into place afterwards; on an
// error dest may hold part of the archive and is the caller's to remove).
// Nothing is ever written outside dest: names that are absolute, hold a
// ".." component or clean to outside dest are refused; symbolic and hard
// links are refused, never created or followed, and so is every entry
// below a refused name; devices, fifos and anything that is not a regular
// file or a directory are refused; a name seen before is refused. Files
// are created with O_EXCL|O_NOFOLLOW and their permission bits without
// setuid, setgid or sticky. Refused entries do not fail the extraction:
// they are returned, with the reason, for the caller to report. Exceeding
// lim is an error.
func ExtractTar(r io.Reader, dest string, lim ExtractLimits) (*ExtractResult, error) {
	x := &extraction{dest: dest, lim: lim, seen: map[string]bool{}, implied: map[string]int{}, refused: map[string]bool{}, res: &ExtractResult{}}
	tr := tar.NewReader(r)
	for entries := 1; ; entries++ {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return x.res, fmt.Errorf("reading the archive: %w", err)
		}
		if lim.MaxEntries > 0 && entries > lim.MaxEntries {
			return x.res, fmt.Errorf("%w: more than %d entries", ErrArchiveTooManyEntries, lim.MaxEntries)
		}
		if err := x.entry(hdr, tr); err != nil {
			return x.res, err
		}
	}
	if err := x.setDirModes(); err != nil {
		return x.res, err
	}
	return x.res, nil
}

type extraction struct {
	dest    string
	lim     ExtractLimits
	total   int64
	seen    map[string]bool // names an entry took
	implied map[string]int  // directories created for names below them: index in dirs
	refused map[string]bool // refused names: nothing below them is written
	dirs    []dirMode
	res     *ExtractResult
}

type dirMode struct {
	path string
	mode fs.FileMode
}

// safeEntryName is an archive name as a clean relative slash path ("" for
// the archive's root), or why it is refused.
func safeEntryName(name string) (string, string) {
	if strings.HasPrefix(name, "/") {
		return "", "absolute name"
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." {
			return "", `name with a ".." component`
		}
	}
	if strings.ContainsRune(name, 0) || strings.Contains(name, `\`) {
		return "", "name with a NUL or a backslash"
	}
	clean := path.Clean(name)
	if clean == "." {
		return "", ""
	}
	if clean == ".." || strings.HasPrefix(clean, "../") || path.IsAbs(clean) {
		return "", "name outside the destination"
	}
	return clean, ""
}

func (x *extraction) refuse(name, reason string) {
	x.res.Refused = append(x.res.Refused, RefusedEntry{Name: name, Reason: reason})
}

func (x *extraction) entry(hdr *tar.Header, body io.Reader) error {
	name, why := safeEntryName(hdr.Name)
	if why != "" {
		x.refuse(hdr.Name, why)
		return nil
	}
	if name == "" {
		return nil // the archive's own root ("./"): dest is it
	}
	if below := x.refusedAncestor(name); below != "" {
		x.refuse(hdr.Name, "below the refused entry "+below)
		return nil
	}
	switch hdr.Typeflag {
	case tar.TypeReg, tar.TypeDir:
	case tar.TypeSymlink:
		x.refused[name] = true
		x.refuse(hdr.Name, "symbolic link (to "+hdr.Linkname+"): links are not extracted")
		return nil
	case tar.TypeLink:
		x.refused[name] = true
		x.refuse(hdr.Name, "hard link (to "+hdr.Linkname+"): links are not extracted")
		return nil
	case tar.TypeChar, tar.TypeBlock:
		x.refused[name] = true
		x.refuse(hdr.Name, "device file")
		return nil
	case tar.TypeFifo:
		x.refused[name] = true
		x.refuse(hdr.Name, "fifo")
		return nil
	default:
		x.refused[name] = true
		x.refuse(hdr.Name, fmt.Sprintf("unsupported entry type %q", hdr.Typeflag))
		return nil
	}
	if x.seen[name] {
		x.refuse(hdr.Name, "duplicate name")
		return nil
	}
	if err := x.parents(name); err != nil {
		var refusal *refusalError
		if errors.As(err, &refusal) {
			x.refuse(hdr.Name, refusal.reason)
			return nil
		}
		return err
	}
	x.seen[name] = true
	target := filepath.Join(x.dest, filepath.FromSlash(name))
	mode := fs.FileMode(hdr.Mode).Perm() //nolint:gosec // G115: the mode's permission bits only
	if i, ok := x.implied[name]; ok && hdr.Typeflag == tar.TypeDir {
		// A directory listed after something below it: already made.
		x.dirs[i].mode = mode
		return nil
	}
	if hdr.Typeflag == tar.TypeDir {
		return x.mkdir(name, target, mode)
	}
	return x.file(hdr, name, target, mode, body)
}

// refusedAncestor is the refused name name lies below, or "".
func (x *extraction) refusedAncestor(name string) string {
	for p := path.Dir(name); p != "."; p = path.Dir(p) {
		if x.refused[p] {
			return p
		}
	}
	return ""
}

type refusalError struct{ reason string }

func (e *refusalError) Error() string { return e.reason }

// parents creates the directories name implies, checking that each one
// already there is a real directory (never a link, never a file).
func (x *extraction) parents(name string) error {
	dir := path.Dir(name)
	if dir == "." {
		return nil
	}
	var chain []string
	for p := dir; p != "."; p = path.Dir(p) {
		chain = append([]string{p}, chain...)
	}
	for _, p := range chain {
		target := filepath.Join(x.dest, filepath.FromSlash(p))
		fi, err := os.Lstat(target)
		switch {
		case err == nil && fi.IsDir():
			continue
		case err == nil:
			return &refusalError{"a parent (" + p + ") is not a directory"}
		case !errors.Is(err, fs.ErrNotExist):
			return err
		}
		if err := os.Mkdir(target, 0o700); err != nil {
			return err
		}
		x.implied[p] = len(x.dirs)
		x.dirs = append(x.dirs, dirMode{target, 0o755})
		x.res.Dirs = append(x.res.Dirs, p)
	}
	return nil
}

// mkdir creates a directory entry's directory: owner-only until the
// extraction ends (so nothing else can drop files into it meanwhile, and
// a read-only mode cannot stop its own files), then its mode.
func (x *extraction) mkdir(name, target string, mode fs.FileMode) error {
	if err := os.Mkdir(target, 0o700); err != nil {
		if errors.Is(err, fs.ErrExist) {
			x.refuse(name, "the name exists already")
			return nil
		}
		return err
	}
	x.dirs = append(x.dirs, dirMode{target, mode})
	x.res.Dirs = append(x.res.Dirs, name)
	return nil
}

func (x *extraction) file(hdr *tar.Header, name, target string, mode fs.FileMode, body io.Reader) error {
	if x.lim.MaxBytes > 0 && hdr.Size > x.lim.MaxBytes-x.total {
		return fmt.Errorf("%w: %s (%d bytes) would bring the files to more than %d bytes", ErrArchiveTooLarge, name, hdr.Size, x.lim.MaxBytes)
	}
	f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, 0o600) //nolint:gosec // G304: the name was checked to stay inside dest
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			x.refuse(name, "the name exists already")
			return nil
		}
		return err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), body)
	if err == nil {
		err = f.Chmod(mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		// A partial file must not pass for a whole one.
		_ = os.Remove(target)
		return fmt.Errorf("extracting %s: %w", name, err)
	}
	x.total += n
	x.res.Files = append(x.res.Files, ExtractedFile{Name: name, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))})
	return nil
}

// setDirModes gives directories their modes, deepest first, once their
// contents are in.
func (x *extraction) setDirModes() error {
	for i := len(x.dirs) - 1; i >= 0; i-- {
		if err := os.Chmod(x.dirs[i].path, x.dirs[i].mode); err != nil {
			return err
		}
	}
	return nil
}
