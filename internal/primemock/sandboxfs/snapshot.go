package sandboxfs

// Snapshots of a file system tree: a checkpoint's root file system, a
// volume's published head. A snapshot is detached from the sandbox it came
// from (it holds its own references to the shared blobs), so it outlives
// that sandbox, and restoring it or attaching it gives each sandbox a
// private copy that shares contents with every other copy.

import (
	"io/fs"
	"time"
)

// Snapshot is a detached tree; root nil is an empty directory.
type Snapshot struct {
	store *Store
	root  *node
}

// Snapshot copies the tree at p (following symlinks to it); p must be a
// directory. Files open for writing are taken as they are now.
func (f *FS) Snapshot(p string) (*Snapshot, error) {
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
	return &Snapshot{store: f.store, root: f.detach(r.n)}, nil
}

// detach copies n keeping its modification times; contents are shared.
func (f *FS) detach(n *node) *node {
	c := &node{kind: n.kind, perm: n.perm, mtime: n.mtime, target: n.target}
	switch n.kind {
	case kindDir:
		c.children = make(map[string]*node, len(n.children))
		for name, ch := range n.children {
			if ch.unlinked {
				continue
			}
			c.children[name] = f.detach(ch)
		}
	case kindFile:
		c.blob = f.blobOf(n)
	}
	return c
}

// copyTree returns a new tree equal to the snapshot, with its own
// references; an empty snapshot gives an empty directory.
func (sn *Snapshot) copyTree() *node {
	if sn == nil || sn.root == nil {
		return &node{kind: kindDir, perm: 0o755, children: map[string]*node{}}
	}
	var cp func(n *node) *node
	cp = func(n *node) *node {
		c := &node{kind: n.kind, perm: n.perm, mtime: n.mtime, target: n.target}
		switch n.kind {
		case kindDir:
			c.children = make(map[string]*node, len(n.children))
			for name, ch := range n.children {
				c.children[name] = cp(ch)
			}
		case kindFile:
			c.blob = sn.store.ref(n.blob)
		}
		return c
	}
	return cp(sn.root)
}

// Release drops the snapshot's references.
func (sn *Snapshot) Release() {
	if sn == nil || sn.root == nil {
		return
	}
	var drop func(n *node)
	drop = func(n *node) {
		for _, c := range n.children {
			drop(c)
		}
		sn.store.unref(n.blob)
		n.blob = nil
	}
	drop(sn.root)
	sn.root = nil
}

// Usage counts the snapshot's files and their bytes.
func (sn *Snapshot) Usage() (files int, bytes int64) {
	if sn == nil || sn.root == nil {
		return 0, 0
	}
	var walk func(n *node)
	walk = func(n *node) {
		for _, c := range n.children {
			walk(c)
		}
		if n.kind == kindFile {
			files++
			bytes += n.size()
		}
	}
	walk(sn.root)
	return files, bytes
}

// RestoreRoot replaces the whole tree with a copy of sn (a restore boots
// from the checkpoint's root file system) and names the machine host.
func (f *FS) RestoreRoot(sn *Snapshot, hostname string) error {
	f.mu.Lock()
	defer f.unlockChanged()
	if f.gone {
		return ErrGone
	}
	f.dropLocked(f.root)
	f.root = sn.copyTree()
	if f.root.children["etc"] == nil {
		f.root.children["etc"] = f.newDir(0o755)
	}
	return f.writeFileLocked("/etc/hostname", []byte(hostname+"\n"), 0o644)
}

// Graft puts a copy of sn at p (creating its parents), replacing what was
// there: a volume's private copy at its mount path.
func (f *FS) Graft(p string, sn *Snapshot, perm fs.FileMode) error {
	f.mu.Lock()
	defer f.unlockChanged()
	if err := f.mkdirAllLocked(p, perm); err != nil {
		return err
	}
	r, err := f.resolve(p, true)
	if err != nil {
		return err
	}
	if r.dir == nil {
		return errPerm // never over the root
	}
	f.dropLocked(r.n)
	r.dir.children[r.name] = sn.copyTree()
	return nil
}

// Remove drops the subtree at p (no symlinks followed) from the snapshot.
func (sn *Snapshot) Remove(p string) {
	if sn.root == nil {
		return
	}
	comps := SplitPath(p)
	dir := sn.root
	for i, c := range comps {
		child := dir.children[c]
		if child == nil {
			return
		}
		if i == len(comps)-1 {
			delete(dir.children, c)
			(&Snapshot{store: sn.store, root: child}).Release()
			return
		}
		if child.kind != kindDir {
			return
		}
		dir = child
	}
}

// Clone is a second snapshot equal to sn, with its own references.
func (sn *Snapshot) Clone() *Snapshot {
	return &Snapshot{store: sn.store, root: sn.copyTree()}
}

// ReadDir lists a directory of the snapshot, sorted by name.
func (sn *Snapshot) ReadDir(p string) ([]FileInfo, error) {
	fsys := &FS{store: sn.store, root: sn.root, now: time.Now, changed: make(chan struct{})}
	return fsys.ReadDir(p)
}
