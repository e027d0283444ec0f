package provider

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// The create journal closes the one gap that saving the ID before the boot
// wait cannot: a Terraform process killed (SIGKILL, OOM, a lost CI runner)
// while a create is in flight. Terraform persists a resource's ID only when
// its create returns, so that sandbox would run with nobody tracking it.
//
// Before each create the provider records the request's idempotency key in
// a small file and holds an exclusive lock on it; when the create returns,
// Terraform holds the ID and the file goes. A file nobody holds a lock on
// belongs to a create whose process died, or to one whose answer was lost
// (the caller got an error and no sandbox, so the sandbox, if the platform
// made it, is in no state: release keeps the file for the next apply). The next create of the same
// configuration (same request, by hash) replays that key, and the platform
// answers with the sandbox it already made instead of making a second one;
// the caller adopts it only if its name and image match and it still runs.
//
// The lock is what makes a leftover a leftover: an entry of a create still
// in flight — in another process, or in another provider instance of this
// one (parallel tests) — is never adopted, so one key cannot serve two
// creates, and a finished entry is never written again.
//
// Everything is best effort: any file-system problem just disables the
// journal. Files live under the user's cache directory, per Terraform
// working directory, never in the project.

// journalReplayWindow is how old a leftover entry may be and still be
// replayed. Older entries are removed: their sandbox has long been noticed
// (or hit its lifetime), and the platform's memory of an idempotency key is
// not promised for longer [inferred: no retention is documented, so the
// window is kept short].
const journalReplayWindow = 24 * time.Hour

type createJournal struct {
	dir string

	mu sync.Mutex
	// leftovers are the entries of dead creates found by the first scan,
	// by request hash; nil until scanned. Only dead processes' entries are
	// in it, so one scan per process is enough: a create of this process
	// never becomes a leftover while the process lives.
	leftovers map[string][]*inflightCreate
}

type journalEntry struct {
	Key         string    `json:"idempotency_key"`
	RequestHash string    `json:"request_hash"`
	SandboxID   string    `json:"sandbox_id,omitempty"`
	Started     time.Time `json:"started"`
}

// defaultCreateJournal is the journal for the provider's working directory,
// or a disabled one.
func defaultCreateJournal() *createJournal {
	cache, err := os.UserCacheDir()
	if err != nil {
		return newCreateJournal("")
	}
	wd, err := os.Getwd()
	if err != nil {
		return newCreateJournal("")
	}
	sum := sha256.Sum256([]byte(wd))
	return newCreateJournal(filepath.Join(cache, "terraform-provider-prime", "creates", hex.EncodeToString(sum[:8])))
}

// newCreateJournal uses dir ("" disables the journal, as does a platform
// without file locks).
func newCreateJournal(dir string) *createJournal {
	if !journalLocksSupported {
		dir = ""
	}
	return &createJournal{dir: dir}
}

// requestHash identifies a configuration: the create body without its key.
func requestHash(r prime.CreateSandboxRequest) string {
	r.IdempotencyKey = ""
	b, _ := json.Marshal(r)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// inflightCreate is one create in progress. While it lives, f holds the
// entry's lock.
type inflightCreate struct {
	key string
	// adopted is true when key is a dead create's, replayed: the caller
	// must check that the sandbox it gets back is the one it wants.
	adopted bool
	path    string
	f       *os.File
	e       journalEntry
}

// begin returns the key to create with: a leftover key of the same request
// if a killed process left one, else a fresh key, recorded and locked.
func (j *createJournal) begin(r prime.CreateSandboxRequest) *inflightCreate {
	hash := requestHash(r)
	if j.dir != "" {
		if c := j.adopt(hash); c != nil {
			return c
		}
	}
	return j.fresh(hash)
}

// fresh records a new key for hash.
func (j *createJournal) fresh(hash string) *inflightCreate {
	c := &inflightCreate{key: prime.NewIdempotencyKey()}
	c.e = journalEntry{Key: c.key, RequestHash: hash, Started: time.Now().UTC()}
	data, err := json.Marshal(c.e)
	if err != nil {
		return c
	}
	// Written and locked under a temporary name, then renamed: the entry is
	// locked from the moment another process can see it.
	c.f, c.path = createLockedEntry(j.dir, c.key, data)
	return c
}

// adopt claims a leftover entry for hash, scanning the directory once.
func (j *createJournal) adopt(hash string) *inflightCreate {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.leftovers == nil {
		j.leftovers = j.scan()
	}
	list := j.leftovers[hash]
	if len(list) == 0 {
		return nil
	}
	c := list[0]
	j.leftovers[hash] = list[1:]
	return c
}

// scan locks every entry no live create holds, keeps those young enough to
// replay (still locked, now by this process) and removes the rest.
func (j *createJournal) scan() map[string][]*inflightCreate {
	out := map[string][]*inflightCreate{}
	scanLeftovers(j.dir, func(key, path string, f *os.File, data []byte) bool {
		var e journalEntry
		if json.Unmarshal(data, &e) != nil || e.Key != key || time.Since(e.Started) > journalReplayWindow {
			return false
		}
		out[e.RequestHash] = append(out[e.RequestHash], &inflightCreate{key: key, adopted: true, path: path, f: f, e: e})
		return true
	})
	return out
}

// write stores the entry through the locked file (never re-creating a file
// that was removed).
func (c *inflightCreate) write() error {
	data, err := json.Marshal(c.e)
	if err != nil {
		return err
	}
	return writeEntry(c.f, data)
}

// recordID notes the sandbox the platform made (for whoever reads the file).
func (c *inflightCreate) recordID(id string) {
	if c.f == nil {
		return
	}
	c.e.SandboxID = id
	_ = c.write()
}

// finish removes the entry: Create returned, so Terraform holds the ID (or
// no sandbox exists). The lock is released after the removal, so nobody can
// adopt the entry in between.
func (c *inflightCreate) finish() {
	if c.path != "" {
		_ = os.Remove(c.path)
		c.path = ""
	}
	c.release()
}

// finishAll finishes a fleet's entries, a few at a time: one by one, a
// thousand removals held a fleet's Create for about 0.2 s after its last
// member was ready. Nil entries are skipped.
func finishAll(cs []*inflightCreate) {
	var wg sync.WaitGroup
	slots := make(chan struct{}, 16)
	for _, c := range cs {
		if c == nil {
			continue
		}
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			c.finish()
		}()
	}
	wg.Wait()
}

// release drops the entry's lock and keeps the file: from then on it is a
// leftover that the next process's scan replays. (This process scanned
// before its first create, so it never adopts its own released entries.)
func (c *inflightCreate) release() {
	if c.f != nil {
		_ = c.f.Close() // closing the file releases its lock
		c.f = nil
	}
}
