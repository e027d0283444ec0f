package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// The files the create, checkpoint and job journals keep: one entry per
// file, held under an exclusive lock (tryLock) while its process owns it.
// The kernel releases the lock when the process dies, which is what makes
// an unlocked entry a leftover. Every operation is best effort: a
// file-system problem only means no entry.
//
// An entry is a sequence of versions, one JSON object each: its first
// version when it is created, then each later one (the sandbox ID, a job's
// outcome, the clean-end stamp) appended in one write by whoever holds its
// lock. Its value is its last whole version (currentVersion), so a process
// killed inside a write leaves the version before it, and a file written
// before versions were appended (one object) reads as it did. Appending
// costs one write where replacing the file (a temporary file, locked,
// renamed over the entry) cost an open, a rename and a close: at a few
// thousand members that was a third of the provider's CPU in a fleet's
// create. An entry is never rewritten in place either: a kill between a
// truncate and a write would leave an empty entry, and with it lose the one
// record that a job already ran.
//
// An entry is created under its own name (never replacing another) and
// locked right after, so a scan may lock a new entry before its creator
// does and find it empty: an empty entry is left alone unless it is old
// enough to be a killed creator's (bornEmptyAge), and the creator waits
// for that scan's lock. Whoever locks an entry checks afterwards that the
// name still leads to the file it locked (lockedCurrent): an entry a job
// renamed, or one removed, is not the one it opened.

// bornEmptyAge is how long an empty entry is taken for one being created:
// its creator writes it right after it locks it, so only a process killed
// in between leaves one older.
const bornEmptyAge = time.Hour

// createLockedEntry creates the entry dir/name.json with data as its first
// version, locked by the caller. It returns the locked file (open for
// appending) and the entry's path, or nil when that fails.
func createLockedEntry(dir, name string, data []byte) (*os.File, string) {
	if dir == "" || name == "" || strings.ContainsAny(name, `/\`) || os.MkdirAll(dir, 0o700) != nil {
		return nil, ""
	}
	path := filepath.Join(dir, name+".json")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600) //nolint:gosec // G304: our own journal directory
	if err != nil {
		return nil, "" // never replace another entry
	}
	// A scan that locked the empty file first leaves it as it is and lets
	// go within microseconds; a scan never removes a young empty entry.
	if lockWait(f) != nil || !lockedCurrent(f, path) {
		_ = f.Close()
		return nil, ""
	}
	if _, err := f.Write(data); err != nil {
		_ = os.Remove(path)
		_ = f.Close()
		return nil, ""
	}
	return f, path
}

// appendVersion appends data to the entry held through f (opened for
// appending) as its new version. A removed entry (nil f) is never created
// again.
func appendVersion(f *os.File, data []byte) error {
	if f == nil {
		return nil
	}
	_, err := f.Write(append([]byte{'\n'}, data...))
	return err
}

// currentVersion is an entry's last whole version, or nil when it has none
// (empty, or nothing in it whole JSON). Versions are lines: json.Marshal
// never writes a newline inside one, and each is appended after one, so a
// version torn by a kill is a line of its own that does not parse, and the
// versions an adopter appends after it still count.
func currentVersion(data []byte) json.RawMessage {
	for len(data) > 0 {
		i := bytes.LastIndexByte(data, '\n')
		line := bytes.TrimSpace(data[i+1:])
		if len(line) > 0 && json.Valid(line) {
			return line
		}
		if i < 0 {
			break
		}
		data = data[:i]
	}
	return nil
}

// errNoVersion: an entry without a whole version.
var errNoVersion = errors.New("journal entry without a whole version")

// decodeEntry decodes an entry's current version into v.
func decodeEntry(data []byte, v any) error {
	cur := currentVersion(data)
	if cur == nil {
		return errNoVersion
	}
	return json.Unmarshal(cur, v)
}

// lockUnowned opens the entry at path and locks it if no live process
// holds it: the open, locked file, or nil.
func lockUnowned(path string, flag int) *os.File {
	f, err := os.OpenFile(path, flag, 0) //nolint:gosec // G304: our own journal directory
	if err != nil {
		return nil
	}
	if locked, _ := tryLock(f); !locked || !lockedCurrent(f, path) {
		_ = f.Close() // owned by a live process, or replaced since it was opened
		return nil
	}
	return f
}

// lockedCurrent reports whether path still names the file f locked (not a
// version that replaced it, nor nothing).
func lockedCurrent(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	return err == nil && os.SameFile(a, b)
}

// scanLeftovers locks every entry of dir that no live process holds and
// offers it to keep, with its name (without .json) and its contents; an
// entry keep refuses is removed. Kept entries stay locked by this process
// through f, which keep takes over. Temporary files of writes a killed
// process never finished go too.
func scanLeftovers(dir string, keep func(name, path string, f *os.File, data []byte) bool) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, p := range files {
		f := lockUnowned(p, os.O_RDWR|os.O_APPEND)
		if f == nil {
			continue
		}
		data, err := io.ReadAll(f)
		if err == nil && len(data) == 0 && bornRecently(f) {
			_ = f.Close() // its creator is about to write it
			continue
		}
		if err != nil || !keep(strings.TrimSuffix(filepath.Base(p), ".json"), p, f, data) {
			_ = os.Remove(p)
			_ = f.Close()
		}
	}
	removeStaleTemporaries(dir)
}

// bornRecently reports whether the entry open in f was created less than
// bornEmptyAge ago.
func bornRecently(f *os.File) bool {
	info, err := f.Stat()
	return err == nil && time.Since(info.ModTime()) < bornEmptyAge
}

// removeStaleTemporaries removes temporary entry files older than an hour:
// a version was once written under a temporary name and renamed, and a
// killed writer left one.
func removeStaleTemporaries(dir string) {
	tmps, _ := filepath.Glob(filepath.Join(dir, "*.tmp"))
	for _, p := range tmps {
		if info, err := os.Stat(p); err == nil && time.Since(info.ModTime()) > time.Hour {
			_ = os.Remove(p)
		}
	}
}

// handOverGrace is how long an entry handed over by a process that ended
// cleanly stays adoptable. Terraform writes its final state after it shuts
// the provider down, and a kill in between (a remote backend's upload
// takes seconds) would otherwise lose what the apply made. Past the grace
// the entry goes: a later create of the same configuration in this
// working directory (another state, say) is a new one.
const handOverGrace = 10 * time.Minute

// stampReleased appends to the entry at path (unless a live process holds
// it) a version that records that its process ended cleanly at now.
func stampReleased(path string, now time.Time) {
	f := lockUnowned(path, os.O_RDWR|os.O_APPEND)
	if f == nil {
		return
	}
	defer func() { _ = f.Close() }()
	data, err := io.ReadAll(f)
	var fields map[string]json.RawMessage
	if err != nil || decodeEntry(data, &fields) != nil {
		return
	}
	fields["released_at"], _ = json.Marshal(now.UTC())
	if data, err = json.Marshal(fields); err == nil {
		_ = appendVersion(f, data)
	}
}

// pastGrace reports whether an entry stamped released at t is too old to
// adopt.
func pastGrace(t time.Time) bool {
	return !t.IsZero() && time.Since(t) > handOverGrace
}

// readUnlockedEntries offers every entry of dir that no live process holds
// to read (concurrently: read must be safe for that), with its path and
// contents; an entry read asks to remove goes, the others are left as they
// were.
func readUnlockedEntries(dir string, read func(path string, data []byte) (remove bool)) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	inParallel(len(files), func(i int) {
		p := files[i]
		f := lockUnowned(p, os.O_RDONLY)
		if f == nil {
			return
		}
		if data, err := io.ReadAll(f); err == nil && read(p, data) {
			_ = os.Remove(p)
		}
		_ = f.Close()
	})
}

// removeUnlockedEntry removes the entry at path unless a live process
// holds it.
func removeUnlockedEntry(path string) {
	if f := lockUnowned(path, os.O_RDONLY); f != nil {
		_ = os.Remove(path)
		_ = f.Close()
	}
}

// handedOverEntries are the entries one journal handed over, for
// ReleaseAll to stamp.
type handedOverEntries struct {
	mu    sync.Mutex
	paths []string
}

func (h *handedOverEntries) add(path string) {
	h.mu.Lock()
	h.paths = append(h.paths, path)
	h.mu.Unlock()
}

// release stamps the entries handed over released: adoptable for
// handOverGrace more, then gone.
func (h *handedOverEntries) release() {
	h.mu.Lock()
	paths := h.paths
	h.paths = nil
	h.mu.Unlock()
	now := time.Now()
	inParallel(len(paths), func(i int) { stampReleased(paths[i], now) })
}

// inParallel runs fn(0..n-1), sixteen at a time.
func inParallel(n int, fn func(i int)) {
	var wg sync.WaitGroup
	slots := make(chan struct{}, 16)
	for i := range n {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			fn(i)
		}()
	}
	wg.Wait()
}

// setOf is the set of names.
func setOf(names []string) map[string]bool {
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set[n] = true
	}
	return set
}

// liveJournals are the hand-over lists of every journal (create and job)
// this process made, for ReleaseAll.
var liveJournals journalSet

type journalSet struct {
	mu   sync.Mutex
	list []*handedOverEntries
}

func (s *journalSet) add(h *handedOverEntries) {
	s.mu.Lock()
	s.list = append(s.list, h)
	s.mu.Unlock()
}

// ReleaseAll stamps the entries of every create and every command
// result this process returned to Terraform released: adoptable for
// handOverGrace more (Terraform writes its final state after shutting the
// provider down, and may die in between), then removed by the next scan.
// Call it only after Terraform shut the provider down cleanly (the plugin
// server returned). A killed Terraform never gets here, and its entries
// stay until a plan shows them in state, or for the replay window.
func ReleaseAll() {
	liveJournals.mu.Lock()
	list := liveJournals.list
	liveJournals.mu.Unlock()
	for _, h := range list {
		h.release()
	}
}

// takeLeftover claims the first of a dead process's entries for hash,
// scanning the journal's directory the first time (the caller holds the
// journal's lock); nil when there is none.
func takeLeftover[E any](leftovers *map[string][]*E, scan func() map[string][]*E, hash string) *E {
	if *leftovers == nil {
		*leftovers = scan()
	}
	list := (*leftovers)[hash]
	if len(list) == 0 {
		return nil
	}
	(*leftovers)[hash] = list[1:]
	return list[0]
}

// heldEntry is an entry file this process owns: f holds its lock while
// path names it. It is the life cycle the create and checkpoint journals
// share: write through the lock, finish (remove), release (keep for the
// next process) or hand over (keep, and let ReleaseAll stamp it).
type heldEntry struct {
	path string
	f    *os.File
}

// writeJSON appends v to the entry as its new version (never re-creating
// an entry that was removed).
func (h *heldEntry) writeJSON(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return appendVersion(h.f, data)
}

// finish removes the entry, then releases its lock, so nobody can adopt
// it in between.
func (h *heldEntry) finish() {
	if h.path != "" {
		_ = os.Remove(h.path)
		h.path = ""
	}
	h.release()
}

// release drops the lock and keeps the file: from then on it is a
// leftover the next process's scan finds.
func (h *heldEntry) release() {
	if h.f != nil {
		_ = h.f.Close() // closing the file releases its lock
		h.f = nil
	}
}

// handOver releases the entry into to: kept unlocked, stamped by
// ReleaseAll. An entry without a file (a disabled journal) has nothing to
// hand over.
func (h *heldEntry) handOver(to *handedOverEntries) {
	if h.f == nil {
		return
	}
	to.add(h.path)
	h.path = ""
	h.release()
}

// forgetIndexed removes the unlocked entries of dir whose key (keyOf, ""
// for none) is one of keys. The first call reads the directory once: it
// removes the matching entries on the way and indexes the others in
// *index for later calls (one per resource planned), which then remove
// only what the index names. The caller serialises calls.
func forgetIndexed(dir string, index *map[string][]string, keyOf func(data []byte) string, keys []string) {
	gone := setOf(keys)
	if *index == nil {
		var mu sync.Mutex
		idx := map[string][]string{}
		readUnlockedEntries(dir, func(path string, data []byte) bool {
			k := keyOf(data)
			if k == "" {
				return false
			}
			if gone[k] {
				return true
			}
			mu.Lock()
			idx[k] = append(idx[k], path)
			mu.Unlock()
			return false
		})
		*index = idx
	}
	for _, k := range keys {
		for _, p := range (*index)[k] {
			removeUnlockedEntry(p)
		}
		delete(*index, k)
	}
}

// dropLeftovers finishes the leftovers (held by this process for
// adoption) that gone says Terraform holds, and keeps the others.
func dropLeftovers[E any](leftovers map[string][]*E, gone func(*E) bool, finish func(*E)) {
	for h, list := range leftovers {
		kept := list[:0]
		for _, e := range list {
			if gone(e) {
				finish(e)
				continue
			}
			kept = append(kept, e)
		}
		leftovers[h] = kept
	}
}
