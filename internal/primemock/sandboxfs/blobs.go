package sandboxfs

// The blob store behind file contents: one copy of each content, by SHA-256, reference counted.

import (
	"crypto/sha256"
	"sync"
)

// blob is one stored content. data is never modified once stored.
type blob struct {
	sum  [32]byte
	data []byte
	refs int
}

// Store holds every file content of a Server once.
type Store struct {
	mu    sync.Mutex
	blobs map[[32]byte]*blob
	bytes int64
}

func NewStore() *Store { return &Store{blobs: map[[32]byte]*blob{}} }

// put stores data (which the store now owns) and returns its blob, with one
// reference for the caller. An empty content is nil: nothing to store.
func (st *Store) put(data []byte) *blob {
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

func (st *Store) ref(b *blob) *blob {
	if b != nil {
		st.mu.Lock()
		b.refs++
		st.mu.Unlock()
	}
	return b
}

func (st *Store) unref(b *blob) {
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

// Usage reports how many contents are stored and their total size.
func (st *Store) Usage() (blobs int, bytes int64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.blobs), st.bytes
}
