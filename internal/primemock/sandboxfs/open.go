package sandboxfs

// Open files: a write that lands whole when closed, shared by dup'ed descriptors.

import (
	"slices"
)

// OpenFile is a regular file the shell has open for writing. Every writer
// appends (as with O_APPEND): the shell never seeks.
type OpenFile struct {
	fs   *FS
	n    *node
	refs int
}

// OpenWrite opens p for writing, creating it (0644) or truncating it unless
// appending. /dev/null opens as a sink.
func (f *FS) OpenWrite(p string, appendMode bool) (*OpenFile, error) {
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
	return &OpenFile{fs: f, n: n, refs: 1}, nil
}

// Write appends b; beyond MaxFileBytes it writes what fits and fails.
func (o *OpenFile) Write(b []byte) error {
	f := o.fs
	f.mu.Lock()
	defer f.unlockChanged()
	if o.n.kind != kindFile || f.gone {
		return nil
	}
	room := MaxFileBytes - len(o.n.buf)
	if len(b) > room {
		o.n.buf = append(o.n.buf, b[:max(room, 0)]...)
		return ErrFBig
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

// Full reports whether the file has reached MaxFileBytes.
func (o *OpenFile) Full() bool {
	o.fs.mu.Lock()
	defer o.fs.mu.Unlock()
	return o.n.kind == kindFile && len(o.n.buf) >= MaxFileBytes
}

// Dup is another descriptor for the same open file.
func (o *OpenFile) Dup() *OpenFile {
	o.fs.mu.Lock()
	defer o.fs.mu.Unlock()
	o.refs++
	return o
}

// Close drops one descriptor; the last writer of a file stores its content.
func (o *OpenFile) Close() {
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
