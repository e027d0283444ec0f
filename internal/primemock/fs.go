package primemock

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
// writes into one file): a runaway "repeat N > file" stops there. [guess] The
// platform documents no limit; this is the mock's own bound on memory.
const MaxFileBytes = 256 << 20

// maxSymlinkHops is Linux's limit (MAXSYMLINKS) on symlinks followed while
// resolving one path.
const maxSymlinkHops = 40

// errno is a file-system error, worded as strerror words it, so the shell
// can print "cat: /x: No such file or directory" as coreutils do.
type errno string

func (e errno) Error() string { return string(e) }

const (
	errNoEnt    errno = "No such file or directory"
	errNotDir   errno = "Not a directory"
	errIsDir    errno = "Is a directory"
	errExist    errno = "File exists"
	errLoop     errno = "Too many levels of symbolic links"
	errNotEmpty errno = "Directory not empty"
	errInval    errno = "Invalid argument"
	errFBig     errno = "File too large"
	errPerm     errno = "Operation not permitted"
	// errGone: the sandbox was deleted; its files are gone.
	errGone errno = "No such file or directory (the sandbox is gone)"
)

// blob is one stored content. data is never modified once stored.
type blob struct {
	sum  [32]byte
	data []byte
	refs int
}

// blobStore holds every file content of a Server once.
type blobStore struct {
	mu    sync.Mutex
	blobs map[[32]byte]*blob
	bytes int64
}

func newBlobStore() *blobStore { return &blobStore{blobs: map[[32]byte]*blob{}} }

// put stores data (which the store now owns) and returns its blob, with one
// reference for the caller. An empty content is nil: nothing to store.
func (st *blobStore) put(data []byte) *blob {
	if len(data) == 0 {
		return nil
	}
	sum := sha256.Sum256(data)
	st.mu.Lock()
	defer st.mu.Unlock()
	if b := st.blobs[sum]; b != nil {
		b.refs++
		return b
	}
	b := &blob{sum: sum, data: data, refs: 1}
	st.blobs[sum] = b
	st.bytes += int64(len(data))
	return b
}

func (st *blobStore) ref(b *blob) *blob {
	if b != nil {
		st.mu.Lock()
		b.refs++
		st.mu.Unlock()
	}
	return b
}

func (st *blobStore) unref(b *blob) {
	if b == nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if b.refs--; b.refs == 0 {
		delete(st.blobs, b.sum)
		st.bytes -= int64(len(b.data))
	}
}

// usage reports how many contents are stored and their total size.
func (st *blobStore) usage() (blobs int, bytes int64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.blobs), st.bytes
}

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

// fileSystem is one sandbox's tree. Its own lock guards it, never held
// while the Server's lock is taken.
type fileSystem struct {
	mu    sync.Mutex
	store *blobStore
	root  *node
	now   func() time.Time
	// gone: the sandbox was deleted or forgotten; its files are released
	// and every operation fails with errGone.
	gone bool
	// changed is closed and replaced on every change, for waitFor.
	changed chan struct{}
}

// unlockChanged wakes the waiters of a change and unlocks.
func (f *fileSystem) unlockChanged() {
	close(f.changed)
	f.changed = make(chan struct{})
	f.mu.Unlock()
}

// waitFor waits until match accepts the content of file p (nil, false
// while it does not exist), re-reading it after every change.
func (f *fileSystem) waitFor(ctx context.Context, p string, match func(data []byte, exists bool) bool) ([]byte, error) {
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
			return nil, errGone
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// skeleton is what every sandbox starts with [guess: a Debian-like image;
// /sandbox-workspace is the sandbox object's diskMountPath].
var skeleton = []string{
	"/bin", "/dev", "/etc", "/home", "/opt", "/root", defaultDiskMountPath, "/srv", "/tmp",
	"/usr/bin", "/usr/local/bin", "/usr/sbin", "/var/log", "/var/tmp",
}

func newFileSystem(store *blobStore, hostname string, now func() time.Time) *fileSystem {
	if now == nil {
		now = time.Now
	}
	f := &fileSystem{store: store, now: now, changed: make(chan struct{})}
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

func (f *fileSystem) newDir(perm fs.FileMode) *node {
	return &node{kind: kindDir, perm: perm, mtime: f.now(), children: map[string]*node{}}
}

// release forgets every file (the sandbox is gone); contents shared with
// other sandboxes stay stored for them.
func (f *fileSystem) release() {
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

// cleanAbs checks that p is absolute and cleans it.
func cleanAbs(p string) (string, bool) {
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
func (f *fileSystem) resolve(p string, follow bool) (resolved, error) {
	if f.gone {
		return resolved{}, errGone
	}
	comps := splitPath(p)
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
			return resolved{}, errNotDir
		}
		child := cur.children[c]
		if child == nil {
			if last {
				return resolved{dir: cur, name: c}, nil
			}
			return resolved{}, errNoEnt
		}
		if child.kind == kindSymlink && (!last || follow) {
			if hops++; hops > maxSymlinkHops {
				return resolved{}, errLoop
			}
			rest := slices.Clone(comps[i+1:])
			if strings.HasPrefix(child.target, "/") {
				stack, names = stack[:1], names[:1]
			}
			comps = append(splitPath(child.target), rest...)
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

func (f *fileSystem) resolvedTop(stack []*node, names []string) resolved {
	if len(stack) == 1 {
		return resolved{n: stack[0]}
	}
	return resolved{dir: stack[len(stack)-2], name: names[len(names)-1], n: stack[len(stack)-1]}
}

func splitPath(p string) []string {
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

// stat resolves p and returns its node's description.
func (f *fileSystem) stat(p string, follow bool) (FileInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, err := f.resolve(p, follow)
	if err != nil {
		return FileInfo{}, err
	}
	if r.n == nil {
		return FileInfo{}, errNoEnt
	}
	return r.n.info(path.Base(p)), nil
}

// readFile returns a file's content (not to be modified).
func (f *fileSystem) readFile(p string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.readFileLocked(p)
}

func (f *fileSystem) readFileLocked(p string) ([]byte, error) {
	r, err := f.resolve(p, true)
	switch {
	case err != nil:
		return nil, err
	case r.n == nil:
		return nil, errNoEnt
	case r.n.kind == kindDir:
		return nil, errIsDir
	}
	return r.n.content(), nil
}

// sum is the SHA-256 of a file's content (stored contents know theirs).
func (f *fileSystem) sum(p string) ([32]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, err := f.resolve(p, true)
	switch {
	case err != nil:
		return [32]byte{}, err
	case r.n == nil:
		return [32]byte{}, errNoEnt
	case r.n.kind == kindDir:
		return [32]byte{}, errIsDir
	case r.n.writers == 0 && r.n.blob != nil:
		return r.n.blob.sum, nil
	}
	return sha256.Sum256(r.n.content()), nil
}

// writeFile creates or replaces a regular file. Its parent must exist; a
// new file gets perm, an existing one keeps its mode.
func (f *fileSystem) writeFile(p string, data []byte, perm fs.FileMode) error {
	f.mu.Lock()
	defer f.unlockChanged()
	return f.writeFileLocked(p, data, perm)
}

func (f *fileSystem) writeFileLocked(p string, data []byte, perm fs.FileMode) error {
	if len(data) > MaxFileBytes {
		return errFBig
	}
	n, err := f.createLocked(p, perm)
	if err != nil {
		return err
	}
	if n.kind == kindDevNull {
		return nil
	}
	if n.writers > 0 {
		// The shell has it open: its writers now append to this content.
		n.buf = slices.Clone(data)
	} else {
		old := n.blob
		n.blob = f.store.put(data)
		f.store.unref(old)
	}
	n.mtime = f.now()
	return nil
}

// createLocked finds or creates the regular file p (following a symlink at
// the end, as open(O_CREAT) does).
func (f *fileSystem) createLocked(p string, perm fs.FileMode) (*node, error) {
	r, err := f.resolve(p, true)
	if err != nil {
		return nil, err
	}
	switch {
	case r.n == nil:
		if r.dir == nil || r.dir.kind != kindDir {
			return nil, errNoEnt
		}
		n := &node{kind: kindFile, perm: perm.Perm(), mtime: f.now()}
		r.dir.children[r.name] = n
		r.dir.mtime = n.mtime
		return n, nil
	case r.n.kind == kindDir:
		return nil, errIsDir
	}
	return r.n, nil
}

// mkdir creates a directory; with parents it creates the missing ones and
// accepts an existing directory (mkdir -p).
func (f *fileSystem) mkdir(p string, perm fs.FileMode, parents bool) error {
	f.mu.Lock()
	defer f.unlockChanged()
	if parents {
		return f.mkdirAllLocked(p, perm)
	}
	r, err := f.resolve(p, false)
	switch {
	case err != nil:
		return err
	case r.n != nil:
		return errExist
	case r.dir == nil:
		return errNoEnt
	}
	r.dir.children[r.name] = f.newDir(perm.Perm())
	return nil
}

func (f *fileSystem) mkdirAllLocked(p string, perm fs.FileMode) error {
	if f.gone {
		return errGone
	}
	comps := splitPath(p)
	for i := range comps {
		sub := "/" + strings.Join(comps[:i+1], "/")
		r, err := f.resolve(sub, true)
		if err != nil {
			return err
		}
		switch {
		case r.n == nil:
			if r.dir == nil {
				return errNoEnt
			}
			r.dir.children[r.name] = f.newDir(perm.Perm())
		case r.n.kind != kindDir:
			if i == len(comps)-1 {
				return errExist
			}
			return errNotDir
		}
	}
	return nil
}

// remove deletes p (a symlink itself, not its target); a directory needs
// recursive unless it is empty and dirOK.
func (f *fileSystem) remove(p string, recursive, dirOK bool) error {
	f.mu.Lock()
	defer f.unlockChanged()
	r, err := f.resolve(p, false)
	switch {
	case err != nil:
		return err
	case r.n == nil:
		return errNoEnt
	case r.dir == nil:
		return errPerm // the root
	case r.n.kind == kindDir && !recursive && !(dirOK && len(r.n.children) == 0):
		if dirOK {
			return errNotEmpty
		}
		return errIsDir
	}
	delete(r.dir.children, r.name)
	r.dir.mtime = f.now()
	f.dropLocked(r.n)
	return nil
}

// dropLocked releases the contents of a detached subtree. Files still open
// for writing keep their buffer until their writers close them.
func (f *fileSystem) dropLocked(n *node) {
	for _, c := range n.children {
		f.dropLocked(c)
	}
	n.unlinked = true
	f.store.unref(n.blob)
	n.blob = nil
}

// rename moves src to dst, replacing a file (or an empty directory) there;
// when dst is an existing directory, src moves into it (as mv does).
func (f *fileSystem) rename(src, dst string, into bool) error {
	f.mu.Lock()
	defer f.unlockChanged()
	s, err := f.resolve(src, false)
	switch {
	case err != nil:
		return err
	case s.n == nil:
		return errNoEnt
	case s.dir == nil:
		return errPerm
	}
	if into {
		// mv SRC DIR moves into DIR, also when DIR is a symlink to one.
		if t, err := f.resolve(dst, true); err == nil && t.n != nil && t.n.kind == kindDir {
			dst = path.Join(dst, s.name)
		}
	}
	d, err := f.resolve(dst, false)
	if err != nil {
		return err
	}
	if d.dir == nil {
		return errNoEnt
	}
	if d.n == s.n {
		return nil
	}
	if s.n.kind == kindDir && f.contains(s.n, d.dir) {
		return errInval // into itself
	}
	if d.n != nil {
		switch {
		case d.n.kind == kindDir && s.n.kind != kindDir:
			return errIsDir
		case d.n.kind == kindDir && len(d.n.children) > 0:
			return errNotEmpty
		case d.n.kind != kindDir && s.n.kind == kindDir:
			return errNotDir
		}
		f.dropLocked(d.n)
	}
	delete(s.dir.children, s.name)
	d.dir.children[d.name] = s.n
	now := f.now()
	s.dir.mtime, d.dir.mtime = now, now
	return nil
}

// contains reports whether sub is dir or lies below it.
func (f *fileSystem) contains(dir, sub *node) bool {
	if dir == sub {
		return true
	}
	for _, c := range dir.children {
		if c.kind == kindDir && f.contains(c, sub) {
			return true
		}
	}
	return false
}

// symlink creates p pointing at target (which need not exist).
func (f *fileSystem) symlink(target, p string) error {
	f.mu.Lock()
	defer f.unlockChanged()
	return f.symlinkLocked(target, p)
}

func (f *fileSystem) symlinkLocked(target, p string) error {
	r, err := f.resolve(p, false)
	switch {
	case err != nil:
		return err
	case r.n != nil:
		return errExist
	case r.dir == nil:
		return errNoEnt
	}
	r.dir.children[r.name] = &node{kind: kindSymlink, perm: 0o777, target: target, mtime: f.now()}
	return nil
}

// chmod sets the permission bits (and setuid, setgid, sticky) of p.
func (f *fileSystem) chmod(p string, mode func(fs.FileMode) fs.FileMode) error {
	f.mu.Lock()
	defer f.unlockChanged()
	r, err := f.resolve(p, true)
	switch {
	case err != nil:
		return err
	case r.n == nil:
		return errNoEnt
	}
	r.n.perm = mode(r.n.perm) & (fs.ModePerm | fs.ModeSticky | fs.ModeSetuid | fs.ModeSetgid)
	return nil
}

// touch creates an empty file or updates its time.
func (f *fileSystem) touch(p string) error {
	f.mu.Lock()
	defer f.unlockChanged()
	r, err := f.resolve(p, true)
	if err != nil {
		return err
	}
	if r.n != nil {
		r.n.mtime = f.now()
		return nil
	}
	_, err = f.createLocked(p, 0o644)
	return err
}

// readDir lists a directory, sorted by name.
func (f *fileSystem) readDir(p string) ([]FileInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, err := f.resolve(p, true)
	switch {
	case err != nil:
		return nil, err
	case r.n == nil:
		return nil, errNoEnt
	case r.n.kind != kindDir:
		return nil, errNotDir
	}
	out := make([]FileInfo, 0, len(r.n.children))
	for name, c := range r.n.children {
		out = append(out, c.info(name))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// copyTree copies src to dst (a new name whose parent exists); contents
// are shared, not duplicated. Directories need recursive.
func (f *fileSystem) copyTree(src, dst string, recursive bool) error {
	f.mu.Lock()
	defer f.unlockChanged()
	s, err := f.resolve(src, true)
	switch {
	case err != nil:
		return err
	case s.n == nil:
		return errNoEnt
	case s.n.kind == kindDir && !recursive:
		return errIsDir
	}
	d, err := f.resolve(dst, true)
	switch {
	case err != nil:
		return err
	case d.dir == nil && d.n == nil:
		return errNoEnt
	case s.n.kind == kindDir && d.n != nil:
		return errExist
	case s.n.kind == kindDir && f.contains(s.n, d.dir):
		return errInval
	case d.n != nil && d.n.kind == kindDir:
		return errIsDir
	case d.n != nil:
		// Overwrite a file's content, keeping the node (as cp does).
		if d.n.kind == kindFile {
			if d.n.writers > 0 { // open for writing: its writers go on from here
				d.n.buf = slices.Clone(s.n.content())
			} else {
				old := d.n.blob
				d.n.blob = f.blobOf(s.n)
				f.store.unref(old)
			}
			d.n.mtime = f.now()
		}
		return nil
	}
	d.dir.children[d.name] = f.clone(s.n)
	return nil
}

// blobOf is a stored reference to a file's current content.
func (f *fileSystem) blobOf(n *node) *blob {
	if n.writers > 0 {
		return f.store.put(slices.Clone(n.buf))
	}
	return f.store.ref(n.blob)
}

func (f *fileSystem) clone(n *node) *node {
	c := &node{kind: n.kind, perm: n.perm, mtime: f.now(), target: n.target}
	switch n.kind {
	case kindDir:
		c.children = make(map[string]*node, len(n.children))
		for name, ch := range n.children {
			c.children[name] = f.clone(ch)
		}
	case kindFile:
		c.blob = f.blobOf(n)
	}
	return c
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

// openFile is a regular file the shell has open for writing. Every writer
// appends (as with O_APPEND): the shell never seeks.
type openFile struct {
	fs   *fileSystem
	n    *node
	refs int
}

// openWrite opens p for writing, creating it (0644) or truncating it unless
// appending. /dev/null opens as a sink.
func (f *fileSystem) openWrite(p string, appendMode bool) (*openFile, error) {
	f.mu.Lock()
	defer f.unlockChanged()
	n, err := f.createLocked(p, 0o644)
	if err != nil {
		return nil, err
	}
	if n.kind == kindFile {
		if n.writers == 0 {
			if appendMode && n.blob != nil {
				n.buf = slices.Clone(n.blob.data)
			} else {
				n.buf = nil
			}
			f.store.unref(n.blob)
			n.blob = nil
		} else if !appendMode {
			n.buf = nil
		}
		n.writers++
		n.mtime = f.now()
	}
	return &openFile{fs: f, n: n, refs: 1}, nil
}

// write appends b; beyond MaxFileBytes it writes what fits and fails.
func (o *openFile) write(b []byte) error {
	f := o.fs
	f.mu.Lock()
	defer f.unlockChanged()
	if o.n.kind != kindFile || f.gone {
		return nil
	}
	room := MaxFileBytes - len(o.n.buf)
	if len(b) > room {
		o.n.buf = append(o.n.buf, b[:max(room, 0)]...)
		return errFBig
	}
	if need := len(o.n.buf) + len(b); need > cap(o.n.buf) {
		// Double: append grows large slices by a quarter, which copies a
		// 64 MiB file written in pieces dozens of times.
		grown := make([]byte, len(o.n.buf), max(need, 2*cap(o.n.buf)))
		copy(grown, o.n.buf)
		o.n.buf = grown
	}
	o.n.buf = append(o.n.buf, b...)
	o.n.mtime = f.now()
	return nil
}

// full reports whether the file has reached MaxFileBytes.
func (o *openFile) full() bool {
	o.fs.mu.Lock()
	defer o.fs.mu.Unlock()
	return o.n.kind == kindFile && len(o.n.buf) >= MaxFileBytes
}

// dup is another descriptor for the same open file.
func (o *openFile) dup() *openFile {
	o.fs.mu.Lock()
	defer o.fs.mu.Unlock()
	o.refs++
	return o
}

// close drops one descriptor; the last writer of a file stores its content.
func (o *openFile) close() {
	f := o.fs
	f.mu.Lock()
	defer f.unlockChanged()
	if o.refs--; o.refs > 0 || o.n.kind != kindFile {
		return
	}
	if o.n.writers--; o.n.writers == 0 {
		buf := o.n.buf
		o.n.buf = nil
		if !f.gone && !o.n.unlinked {
			o.n.blob = f.store.put(buf)
		}
	}
}
