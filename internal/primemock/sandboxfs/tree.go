package sandboxfs

// Changes to the tree: create, mkdir, remove, rename, symlink, chmod, touch, copy and clone.

import (
	"io/fs"
	"path"
	"slices"
	"strings"
)

// WriteFile creates or replaces a regular file. Its parent must exist; a
// new file gets perm, an existing one keeps its mode.
func (f *FS) WriteFile(p string, data []byte, perm fs.FileMode) error {
	f.mu.Lock()
	defer f.unlockChanged()
	return f.writeFileLocked(p, data, perm)
}

func (f *FS) writeFileLocked(p string, data []byte, perm fs.FileMode) error {
	if len(data) > MaxFileBytes {
		return ErrFBig
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
func (f *FS) createLocked(p string, perm fs.FileMode) (*node, error) {
	r, err := f.resolve(p, true)
	if err != nil {
		return nil, err
	}
	switch {
	case r.n == nil:
		if r.dir == nil || r.dir.kind != kindDir {
			return nil, ErrNoEnt
		}
		n := &node{kind: kindFile, perm: perm.Perm(), mtime: f.now()}
		r.dir.children[r.name] = n
		r.dir.mtime = n.mtime
		return n, nil
	case r.n.kind == kindDir:
		return nil, ErrIsDir
	}
	return r.n, nil
}

// Mkdir creates a directory; with parents it creates the missing ones and
// accepts an existing directory (mkdir -p).
func (f *FS) Mkdir(p string, perm fs.FileMode, parents bool) error {
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
		return ErrExist
	case r.dir == nil:
		return ErrNoEnt
	}
	r.dir.children[r.name] = f.newDir(perm.Perm())
	return nil
}

func (f *FS) mkdirAllLocked(p string, perm fs.FileMode) error {
	if f.gone {
		return ErrGone
	}
	comps := SplitPath(p)
	for i := range comps {
		sub := "/" + strings.Join(comps[:i+1], "/")
		r, err := f.resolve(sub, true)
		if err != nil {
			return err
		}
		switch {
		case r.n == nil:
			if r.dir == nil {
				return ErrNoEnt
			}
			r.dir.children[r.name] = f.newDir(perm.Perm())
		case r.n.kind != kindDir:
			if i == len(comps)-1 {
				return ErrExist
			}
			return ErrNotDir
		}
	}
	return nil
}

// Remove deletes p (a symlink itself, not its target); a directory needs
// recursive unless it is empty and dirOK.
func (f *FS) Remove(p string, recursive, dirOK bool) error {
	f.mu.Lock()
	defer f.unlockChanged()
	r, err := f.resolve(p, false)
	switch {
	case err != nil:
		return err
	case r.n == nil:
		return ErrNoEnt
	case r.dir == nil:
		return errPerm // the root
	case r.n.kind == kindDir && !recursive && !(dirOK && len(r.n.children) == 0):
		if dirOK {
			return errNotEmpty
		}
		return ErrIsDir
	}
	delete(r.dir.children, r.name)
	r.dir.mtime = f.now()
	f.dropLocked(r.n)
	return nil
}

// dropLocked releases the contents of a detached subtree. Files still open
// for writing keep their buffer until their writers close them.
func (f *FS) dropLocked(n *node) {
	for _, c := range n.children {
		f.dropLocked(c)
	}
	n.unlinked = true
	f.store.unref(n.blob)
	n.blob = nil
}

// Rename moves src to dst, replacing a file (or an empty directory) there;
// when dst is an existing directory, src moves into it (as mv does).
func (f *FS) Rename(src, dst string, into bool) error {
	f.mu.Lock()
	defer f.unlockChanged()
	s, err := f.resolve(src, false)
	switch {
	case err != nil:
		return err
	case s.n == nil:
		return ErrNoEnt
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
		return ErrNoEnt
	}
	if d.n == s.n {
		return nil
	}
	if s.n.kind == kindDir && f.contains(s.n, d.dir) {
		return ErrInval // into itself
	}
	if d.n != nil {
		switch {
		case d.n.kind == kindDir && s.n.kind != kindDir:
			return ErrIsDir
		case d.n.kind == kindDir && len(d.n.children) > 0:
			return errNotEmpty
		case d.n.kind != kindDir && s.n.kind == kindDir:
			return ErrNotDir
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
func (f *FS) contains(dir, sub *node) bool {
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

// Symlink creates p pointing at target (which need not exist).
func (f *FS) Symlink(target, p string) error {
	f.mu.Lock()
	defer f.unlockChanged()
	return f.symlinkLocked(target, p)
}

func (f *FS) symlinkLocked(target, p string) error {
	r, err := f.resolve(p, false)
	switch {
	case err != nil:
		return err
	case r.n != nil:
		return ErrExist
	case r.dir == nil:
		return ErrNoEnt
	}
	r.dir.children[r.name] = &node{kind: kindSymlink, perm: 0o777, target: target, mtime: f.now()}
	return nil
}

// Chmod sets the permission bits (and setuid, setgid, sticky) of p.
func (f *FS) Chmod(p string, mode func(fs.FileMode) fs.FileMode) error {
	f.mu.Lock()
	defer f.unlockChanged()
	r, err := f.resolve(p, true)
	switch {
	case err != nil:
		return err
	case r.n == nil:
		return ErrNoEnt
	}
	r.n.perm = mode(r.n.perm) & (fs.ModePerm | fs.ModeSticky | fs.ModeSetuid | fs.ModeSetgid)
	return nil
}

// Touch creates an empty file or updates its time.
func (f *FS) Touch(p string) error {
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

// CopyTree copies src to dst (a new name whose parent exists); contents
// are shared, not duplicated. Directories need recursive.
func (f *FS) CopyTree(src, dst string, recursive bool) error {
	f.mu.Lock()
	defer f.unlockChanged()
	s, err := f.resolve(src, true)
	switch {
	case err != nil:
		return err
	case s.n == nil:
		return ErrNoEnt
	case s.n.kind == kindDir && !recursive:
		return ErrIsDir
	}
	d, err := f.resolve(dst, true)
	switch {
	case err != nil:
		return err
	case d.dir == nil && d.n == nil:
		return ErrNoEnt
	case s.n.kind == kindDir && d.n != nil:
		return ErrExist
	case s.n.kind == kindDir && f.contains(s.n, d.dir):
		return ErrInval
	case d.n != nil && d.n.kind == kindDir:
		return ErrIsDir
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
func (f *FS) blobOf(n *node) *blob {
	if n.writers > 0 {
		return f.store.put(slices.Clone(n.buf))
	}
	return f.store.ref(n.blob)
}

func (f *FS) clone(n *node) *node {
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
