package journal

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
// a small file and holds an exclusive lock on it. When the create returns,
// Terraform has the ID, but it stores state on its own schedule: OpenTofu's
// local backend and every remote backend persist an apply's state at most
// every 20 s, so a fleet created seconds before an hours-long agent run is
// saved only when the run ends. The entry is therefore handed over, not
// removed: unlocked and kept as it is. It goes once Terraform shows it
// holds the sandbox: a plan with the sandbox in its prior state (Forget),
// or handOverGrace after Terraform shut the provider down cleanly, after
// which it writes its final state (ReleaseAll). A killed Terraform
// leaves it for the next apply, which adopts the sandbox if its state lost
// it. A file nobody holds a lock on
// belongs to a create whose process died, or to one whose answer was lost
// (the caller got an error and no sandbox, so the sandbox, if the platform
// made it, is in no state: Release keeps the file for the next apply). The next create of the same
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

// Creates is the create journal of one Terraform working directory and
// workspace (a disabled one keeps nothing).
type Creates struct {
	dir string

	// handed are the entries this journal handed over.
	handed handedOverEntries
	// held is the ledger of sandboxes plans saw Terraform hold (held.go).
	held heldLedger

	mu sync.Mutex
	// byID indexes other processes' entries by sandbox ID for Forget,
	// built on its first call.
	byID map[string][]string
	// leftovers are the entries of dead creates found by the first scan,
	// by request hash; nil until scanned. Only dead processes' entries are
	// in it, so one scan per process is enough: a create of this process
	// never becomes a leftover while the process lives.
	leftovers map[string][]*InflightCreate
}

type journalEntry struct {
	Key         string    `json:"idempotency_key"`
	RequestHash string    `json:"request_hash"`
	SandboxID   string    `json:"sandbox_id,omitempty"`
	Started     time.Time `json:"started"`
	// ReleasedAt: when the process that returned it ended cleanly.
	ReleasedAt time.Time `json:"released_at,omitzero"`
}

// DefaultCreates is the journal for the provider's working directory
// and workspace, or a disabled one.
func DefaultCreates() *Creates {
	cache, err := os.UserCacheDir()
	if err != nil {
		return NewCreates("")
	}
	wd, err := os.Getwd()
	if err != nil {
		return NewCreates("")
	}
	return NewCreates(filepath.Join(cache, "terraform-provider-prime", "creates", journalName(wd, currentWorkspace(os.Getenv, wd))))
}

// journalName names a journal directory: the working directory and the
// workspace, hashed. Each workspace has its own state, so a create in one
// never adopts what another's apply made.
func journalName(wd, workspace string) string {
	key := wd
	if workspace != "default" {
		key += "\x00" + workspace
	}
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:8])
}

// currentWorkspace is the Terraform workspace of working directory wd, as
// Terraform finds it: TF_WORKSPACE, else the name the data directory
// records (TF_DATA_DIR, default .terraform), else "default". Terraform
// does not tell providers its workspace.
func currentWorkspace(getenv func(string) string, wd string) string {
	if w := getenv("TF_WORKSPACE"); w != "" {
		return w
	}
	if b, err := os.ReadFile(filepath.Join(dataDir(getenv, wd), "environment")); err == nil {
		if w := strings.TrimSpace(string(b)); w != "" {
			return w
		}
	}
	return "default"
}

// NewCreates uses dir ("" disables the journal, as does a platform
// without file locks).
func NewCreates(dir string) *Creates {
	if !journalLocksSupported {
		dir = ""
	}
	j := &Creates{dir: dir}
	if dir != "" {
		liveJournals.add(&j.handed)
		j.held.path = filepath.Join(dir, "held.log")
	}
	return j
}

// requestHash identifies a configuration: the create body without its key.
func requestHash(r prime.CreateSandboxRequest) string {
	r.IdempotencyKey = ""
	b, _ := json.Marshal(r)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// InflightCreate is one create in progress. While it lives, f holds the
// entry's lock.
type InflightCreate struct {
	j   *Creates
	key string
	// adopted is true when key is a dead create's, replayed: the caller
	// must check that the sandbox it gets back is the one it wants.
	adopted bool
	heldEntry
	e journalEntry
}

// Dir is the journal's directory ("" when it is disabled), for notes
// kept beside it under the same switch.
func (j *Creates) Dir() string {
	if j == nil {
		return ""
	}
	return j.dir
}

// Key is the idempotency key to create with.
func (c *InflightCreate) Key() string { return c.key }

// Adopted reports whether Key is a dead create's, replayed: the caller
// must check that the sandbox it gets back is the one it wants.
func (c *InflightCreate) Adopted() bool { return c.adopted }

// Begin returns the key to create with: a leftover key of the same request
// if a killed process left one, else a fresh key, recorded and locked.
func (j *Creates) Begin(r prime.CreateSandboxRequest) *InflightCreate {
	hash := requestHash(r)
	if j.dir != "" {
		if c := j.adopt(hash); c != nil {
			return c
		}
	}
	return j.fresh(hash)
}

// Fresh records a new key for r, never a leftover one: the sandbox of the
// key Begin adopted is not one this configuration can use.
func (j *Creates) Fresh(r prime.CreateSandboxRequest) *InflightCreate {
	return j.fresh(requestHash(r))
}

// fresh records a new key for hash.
func (j *Creates) fresh(hash string) *InflightCreate {
	c := &InflightCreate{j: j, key: prime.NewIdempotencyKey()}
	c.e = journalEntry{Key: c.key, RequestHash: hash, Started: time.Now().UTC()}
	data, err := json.Marshal(c.e)
	if err != nil {
		return c
	}
	// Created under its own name and locked at once (files.go).
	c.f, c.path = createLockedEntry(j.dir, c.key, data)
	return c
}

// adopt claims a leftover entry for hash, scanning the directory once.
func (j *Creates) adopt(hash string) *InflightCreate {
	j.mu.Lock()
	defer j.mu.Unlock()
	return takeLeftover(&j.leftovers, j.scan, hash)
}

// scan locks every entry no live create holds, keeps those young enough to
// replay (still locked, now by this process) and removes the rest.
func (j *Creates) scan() map[string][]*InflightCreate {
	out := map[string][]*InflightCreate{}
	scanLeftovers(j.dir, func(key, path string, f *os.File, data []byte) bool {
		var e journalEntry
		if decodeEntry(data, &e) != nil || e.Key != key || time.Since(e.Started) > journalReplayWindow || pastGrace(e.ReleasedAt) {
			return false
		}
		out[e.RequestHash] = append(out[e.RequestHash], &InflightCreate{j: j, key: key, adopted: true, heldEntry: heldEntry{path: path, f: f}, e: e})
		return true
	})
	return out
}

// write stores the entry through the locked file (never re-creating a file
// that was removed).
func (c *InflightCreate) write() error { return c.writeJSON(c.e) }

// RecordID notes the sandbox the platform made (for whoever reads the file).
func (c *InflightCreate) RecordID(id string) {
	if c.f == nil {
		return
	}
	c.e.SandboxID = id
	_ = c.write()
}

// Finish removes the entry: no sandbox exists, or it is not one this
// configuration can use. The lock is released after the removal, so nobody
// can adopt the entry in between.
func (c *InflightCreate) Finish() { c.finish() }

// HandOver drops the entry's lock and keeps the file (it already holds the
// sandbox ID, so nothing is written: a fleet hands a thousand over at once):
// Create returned the sandbox to Terraform, which may be killed before it
// stores it. This process never adopts the entry (its scan ran before its
// first create); the next process does, unless a plan shows that Terraform
// holds the sandbox (Forget) or this one ended cleanly more than
// handOverGrace ago (ReleaseAll).
func (c *InflightCreate) HandOver() {
	if c == nil {
		return
	}
	c.handOver(&c.j.handed)
}

// HandOverAll hands a fleet's entries over, a few at a time. Nil entries
// are skipped.
func HandOverAll(cs []*InflightCreate) {
	inParallel(len(cs), func(i int) {
		if cs[i] != nil {
			cs[i].HandOver()
		}
	})
}

// Forget removes the entries of sandboxes Terraform holds: it planned them
// from prior state, so no later create may adopt them. Entries this
// process holds for adoption are finished; unlocked ones are removed. The
// sandboxes go into the held ledger, which recovery from the platform
// consults (Held).
func (j *Creates) Forget(ids ...string) {
	if j == nil || j.dir == "" || len(ids) == 0 {
		return
	}
	j.held.record(ids)
	gone := setOf(ids)
	j.mu.Lock()
	defer j.mu.Unlock()
	forgetIndexed(j.dir, &j.byID, func(data []byte) string {
		var e journalEntry
		_ = decodeEntry(data, &e)
		return e.SandboxID
	}, ids)
	dropLeftovers(j.leftovers, func(c *InflightCreate) bool { return gone[c.e.SandboxID] }, (*InflightCreate).Finish)
}

// Release drops the entry's lock and keeps the file: from then on it is a
// leftover that the next process's scan replays. (This process scanned
// before its first create, so it never adopts its own released entries.)
func (c *InflightCreate) Release() { c.release() }

// Held reports whether a plan on this machine saw Terraform hold sandbox
// id (Forget): recovery from the platform never adopts it.
func (j *Creates) Held(id string) bool {
	if j == nil {
		return false
	}
	return j.held.has(id)
}
