package sandboxfs

// A sandbox's file system: directories, regular files and symlinks, in
// memory. The gateway's file routes and the shell both work on it. File
// contents live in a blob store that every sandbox of a Server shares, keyed
// by SHA-256 and reference counted, so a thousand sandboxes given the same
// archive, and the files unpacked from it, hold one copy of each.

import (
	"context"
	"crypto/sha256"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// MaxFileBytes bounds one file of the mock (an upload, or what the shell
// writes into one file): a runaway "repeat N > file" stops there. [I: file-max] The
// platform documents no limit; this is the mock's own bound on memory.
const MaxFileBytes = 256 << 20

// maxSymlinkHops is Linux's limit (MAXSYMLINKS) on symlinks followed while
// resolving one path.
const maxSymlinkHops = 40

// Errno is a file-system error, worded as strerror words it, so the shell
// can print "cat: /x: No such file or directory" as coreutils do.
type Errno string

func (e Errno) Error() string { return string(e) }

const (
	ErrNoEnt    Errno = "No such file or directory"
	ErrNotDir   Errno = "Not a directory"
	ErrIsDir    Errno = "Is a directory"
	ErrExist    Errno = "File exists"
	errLoop     Errno = "Too many levels of symbolic links"
	errNotEmpty Errno = "Directory not empty"
	ErrInval    Errno = "Invalid argument"
	ErrFBig     Errno = "File too large"
	errPerm     Errno = "Operation not permitted"
	// errGone: the sandbox was deleted; its files are gone.
	ErrGone Errno = "No such file or directory (the sandbox is gone)"
)

type nodeKind uint8

const (
	kindDir nodeKind = iota + 1
	kindFile
	kindSymlink
	kindDevNull // /dev/null: reads nothing, swallows writes
)

// node is a directory, a regular file, a symlink or /dev/null.
type node struct {
	kind     nodeKind
	perm     fs.FileMode
	mtime    time.Time
	children map[string]*node // directories
	target   string           // symlinks
	// A regular file's content is its blob, except while the shell has it
	// open for writing: then it grows in buf, and is stored as a blob when
	// the last writer closes it (hashing once, not on every write).
	blob    *blob
	buf     []byte
	writers int
	// unlinked: removed while open; its last writer stores nothing.
	unlinked bool
}

// FS is one sandbox's tree. Its own lock guards it, never held
// while the Server's lock is taken.
type FS struct {
	mu    sync.Mutex
	store *Store
	root  *node
	now   func() time.Time
	// gone: the sandbox was deleted or forgotten; its files are released
	// and every operation fails with errGone.
	gone bool
	// changed is closed and replaced on every change, for waitFor.
	changed chan struct{}
}

// unlockChanged wakes the waiters of a change and unlocks.
func (f *FS) unlockChanged() {
	close(f.changed)
	f.changed = make(chan struct{})
	f.mu.Unlock()
}

// WaitFor waits until match accepts the content of file p (nil, false
// while it does not exist), re-reading it after every change.
func (f *FS) WaitFor(ctx context.Context, p string, match func(data []byte, exists bool) bool) ([]byte, error) {
	for {
		f.mu.Lock()
		data, err := f.readFileLocked(p)
		wake := f.changed
		gone := f.gone
		f.mu.Unlock()
		if match(data, err == nil) {
			return data, nil
		}
		if gone {
			return nil, ErrGone
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// workspaceDir is the sandbox object's diskMountPath (the SDK's fixtures
// show it), a directory every sandbox has.
const WorkspaceDir = "/sandbox-workspace"

// skeleton is what every sandbox starts with [I: fs-skeleton: a Debian-like image].
var skeleton = []string{
	"/bin", "/dev", "/etc", "/home", "/opt", "/root", WorkspaceDir, "/srv", "/tmp",
	"/usr/bin", "/usr/local/bin", "/usr/sbin", "/var/log", "/var/tmp",
}

func New(store *Store, hostname string, now func() time.Time) *FS {
	if now == nil {
		now = time.Now
	}
	f := &FS{store: store, now: now, changed: make(chan struct{})}
	f.root = f.newDir(0o755)
	for _, d := range skeleton {
		_ = f.mkdirAllLocked(d, 0o755)
	}
	f.root.children["tmp"].perm = 0o777 | fs.ModeSticky
	f.root.children["dev"].children["null"] = &node{kind: kindDevNull, perm: 0o666, mtime: f.now()}
	_ = f.writeFileLocked("/etc/hostname", []byte(hostname+"\n"), 0o644)
	_ = f.writeFileLocked("/etc/os-release", []byte("PRETTY_NAME=\"prime-mock (an in-memory sandbox)\"\nID=prime-mock\n"), 0o644)
	return f
}

func (f *FS) newDir(perm fs.FileMode) *node {
	return &node{kind: kindDir, perm: perm, mtime: f.now(), children: map[string]*node{}}
}

// Release forgets every file (the sandbox is gone); contents shared with
// other sandboxes stay stored for them.
func (f *FS) Release() {
	f.mu.Lock()
	defer f.unlockChanged()
	if f.gone {
		return
	}
	var drop func(n *node)
	drop = func(n *node) {
		for _, c := range n.children {
			drop(c)
		}
		f.store.unref(n.blob)
		n.blob, n.buf = nil, nil
	}
	drop(f.root)
	f.root, f.gone = nil, true
}

// CleanAbs checks that p is absolute and cleans it.
func CleanAbs(p string) (string, bool) {
	if !strings.HasPrefix(p, "/") || strings.ContainsRune(p, 0) {
		return "", false
	}
	return path.Clean(p), true
}

// resolved is where a path leads: the directory holding its last
// component, that component's name, and its node (nil when it does not
// exist). For "/" dir is nil and n is the root.
type resolved struct {
	dir  *node
	name string
	n    *node
}

// resolve walks an absolute, clean path. Symlinks in the directory part
// are always followed, the last component's only when follow is set, as
// the kernel resolves paths (at most maxSymlinkHops of them).
func (f *FS) resolve(p string, follow bool) (resolved, error) {
	if f.gone {
		return resolved{}, ErrGone
	}
	comps := SplitPath(p)
	stack := []*node{f.root}
	names := []string{""}
	hops := 0
	for i := 0; i < len(comps); i++ {
		c := comps[i]
		last := i == len(comps)-1
		cur := stack[len(stack)-1]
		switch c {
		case "", ".":
			if last {
				return f.resolvedTop(stack, names), nil
			}
			continue
		case "..":
			if len(stack) > 1 {
				stack, names = stack[:len(stack)-1], names[:len(names)-1]
			}
			if last {
				return f.resolvedTop(stack, names), nil
			}
			continue
		}
		if cur.kind != kindDir {
			return resolved{}, ErrNotDir
		}
		child := cur.children[c]
		if child == nil {
			if last {
				return resolved{dir: cur, name: c}, nil
			}
			return resolved{}, ErrNoEnt
		}
		if child.kind == kindSymlink && (!last || follow) {
			if hops++; hops > maxSymlinkHops {
				return resolved{}, errLoop
			}
			rest := slices.Clone(comps[i+1:])
			if strings.HasPrefix(child.target, "/") {
				stack, names = stack[:1], names[:1]
			}
			comps = append(SplitPath(child.target), rest...)
			i = -1
			if len(comps) == 0 { // a link to "/"
				return f.resolvedTop(stack, names), nil
			}
			continue
		}
		if last {
			return resolved{dir: cur, name: c, n: child}, nil
		}
		stack, names = append(stack, child), append(names, c)
	}
	return f.resolvedTop(stack, names), nil
}

func (f *FS) resolvedTop(stack []*node, names []string) resolved {
	if len(stack) == 1 {
		return resolved{n: stack[0]}
	}
	return resolved{dir: stack[len(stack)-2], name: names[len(names)-1], n: stack[len(stack)-1]}
}

func SplitPath(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" {
			out = append(out, c)
		}
	}
	return out
}

// content is a file's bytes, not to be modified by the caller.
func (n *node) content() []byte {
	if n.writers > 0 {
		return n.buf[:len(n.buf):len(n.buf)]
	}
	if n.blob == nil {
		return nil
	}
	return n.blob.data
}

func (n *node) size() int64 { return int64(len(n.content())) }

// Stat resolves p and returns its node's description.
func (f *FS) Stat(p string, follow bool) (FileInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, err := f.resolve(p, follow)
	if err != nil {
		return FileInfo{}, err
	}
	if r.n == nil {
		return FileInfo{}, ErrNoEnt
	}
	return r.n.info(path.Base(p)), nil
}

// ReadFile returns a file's content (not to be modified).
func (f *FS) ReadFile(p string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.readFileLocked(p)
}

func (f *FS) readFileLocked(p string) ([]byte, error) {
	r, err := f.resolve(p, true)
	switch {
	case err != nil:
		return nil, err
	case r.n == nil:
		return nil, ErrNoEnt
	case r.n.kind == kindDir:
		return nil, ErrIsDir
	}
	return r.n.content(), nil
}

// Sum is the SHA-256 of a file's content (stored contents know theirs).
func (f *FS) Sum(p string) ([32]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, err := f.resolve(p, true)
	switch {
	case err != nil:
		return [32]byte{}, err
	case r.n == nil:
		return [32]byte{}, ErrNoEnt
	case r.n.kind == kindDir:
		return [32]byte{}, ErrIsDir
	case r.n.writers == 0 && r.n.blob != nil:
		return r.n.blob.sum, nil
	}
	return sha256.Sum256(r.n.content()), nil
}

// ReadDir lists a directory, sorted by name.
func (f *FS) ReadDir(p string) ([]FileInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, err := f.resolve(p, true)
	switch {
	case err != nil:
		return nil, err
	case r.n == nil:
		return nil, ErrNoEnt
	case r.n.kind != kindDir:
		return nil, ErrNotDir
	}
	out := make([]FileInfo, 0, len(r.n.children))
	for name, c := range r.n.children {
		out = append(out, c.info(name))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// FileInfo describes one entry of a sandbox's file system.
type FileInfo struct {
	Name string `json:"name"`
	// Type is "dir", "file", "symlink" or "device".
	Type string `json:"type"`
	// Mode is the permission bits (and sticky, setuid, setgid).
	Mode    fs.FileMode `json:"mode"`
	Size    int64       `json:"size"`
	Target  string      `json:"target,omitempty"`
	ModTime time.Time   `json:"mod_time"`
}

func (n *node) info(name string) FileInfo {
	fi := FileInfo{Name: name, Mode: n.perm, ModTime: n.mtime}
	switch n.kind {
	case kindDir:
		fi.Type = "dir"
	case kindFile:
		fi.Type, fi.Size = "file", n.size()
	case kindSymlink:
		fi.Type, fi.Target, fi.Size = "symlink", n.target, int64(len(n.target))
	case kindDevNull:
		fi.Type = "device"
	}
	return fi
}

// IsDir reports whether the entry is a directory.
func (fi FileInfo) IsDir() bool { return fi.Type == "dir" }
