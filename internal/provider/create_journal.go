package provider

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
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
// a small file; when the create returns, Terraform holds the ID and the file
// goes. A file left behind belongs to a create that never returned. The next
// create of the same configuration (same request, by hash) replays that key,
// and the platform answers with the sandbox it already made instead of
// making a second one. Everything is best effort: any file-system problem
// just disables the journal.
//
// Files live under the user's cache directory, per Terraform working
// directory (the provider's working directory), never in the project.

// journalRetention is how long a leftover entry may be adopted. Older ones
// are removed: their sandbox has long hit its lifetime or been cleaned up.
const journalRetention = 7 * 24 * time.Hour

type createJournal struct {
	dir string

	mu      sync.Mutex
	claimed map[string]bool // leftover keys adopted by this process
	pruned  bool
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

// newCreateJournal uses dir ("" disables the journal).
func newCreateJournal(dir string) *createJournal {
	return &createJournal{dir: dir, claimed: map[string]bool{}}
}

// requestHash identifies a configuration: the create body without its key.
func requestHash(r prime.CreateSandboxRequest) string {
	r.IdempotencyKey = ""
	b, _ := json.Marshal(r)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// inflightCreate is one create in progress.
type inflightCreate struct {
	j    *createJournal
	key  string
	path string
	e    journalEntry
}

// begin returns the key to create with: a leftover key of the same request
// if a killed process left one, else a fresh key, recorded.
func (j *createJournal) begin(r prime.CreateSandboxRequest) *inflightCreate {
	hash := requestHash(r)
	if j.dir != "" {
		j.mu.Lock()
		defer j.mu.Unlock()
		j.prune()
		if c := j.adopt(hash); c != nil {
			return c
		}
	}
	c := &inflightCreate{j: j, key: prime.NewIdempotencyKey()}
	c.e = journalEntry{Key: c.key, RequestHash: hash, Started: time.Now().UTC()}
	if j.dir != "" {
		c.path = filepath.Join(j.dir, c.key+".json")
		if os.MkdirAll(j.dir, 0o700) != nil || c.write() != nil {
			c.path = ""
		}
	}
	return c
}

// adopt claims a leftover entry for hash. Entries of this process's own
// creates are never leftovers: they were claimed or written by it.
func (j *createJournal) adopt(hash string) *inflightCreate {
	files, _ := filepath.Glob(filepath.Join(j.dir, "*.json"))
	for _, f := range files {
		key := strings.TrimSuffix(filepath.Base(f), ".json")
		if j.claimed[key] {
			continue
		}
		data, err := os.ReadFile(f) //nolint:gosec // G304: our own journal directory
		if err != nil {
			continue
		}
		var e journalEntry
		if json.Unmarshal(data, &e) != nil || e.RequestHash != hash || e.Key != key {
			continue
		}
		j.claimed[key] = true
		return &inflightCreate{j: j, key: key, path: f, e: e}
	}
	return nil
}

// prune removes entries past the retention, once per process. Keys this
// process writes are marked claimed so a concurrent create cannot adopt them.
func (j *createJournal) prune() {
	if j.pruned {
		return
	}
	j.pruned = true
	files, _ := filepath.Glob(filepath.Join(j.dir, "*.json"))
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil && time.Since(fi.ModTime()) > journalRetention {
			_ = os.Remove(f)
		}
	}
}

func (c *inflightCreate) write() error {
	c.j.claimed[c.key] = true
	data, err := json.Marshal(c.e)
	if err != nil {
		return err
	}
	return os.WriteFile(c.path, data, 0o600)
}

// recordID notes the sandbox the platform made (for whoever reads the file).
func (c *inflightCreate) recordID(id string) {
	if c.path == "" {
		return
	}
	c.j.mu.Lock()
	defer c.j.mu.Unlock()
	c.e.SandboxID = id
	_ = c.write()
}

// finish removes the entry: Create returned, so Terraform holds the ID (or
// no sandbox exists).
func (c *inflightCreate) finish() {
	if c.path != "" {
		_ = os.Remove(c.path)
	}
}
