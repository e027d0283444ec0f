package journal

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The held ledger: the sandboxes a plan on this machine saw Terraform
// hold (in a resource's prior state), for recovery from the platform. A
// create adopts a live sandbox of its workspace scope with its
// configuration's labels, which is what a lost apply leaves behind; but a
// sandbox another resource of the same workspace holds can carry the same
// labels (a count of sandboxes with one name, a create_before_destroy
// replacement with an unchanged configuration), and the apply walk, which
// only sees the resources it changes, cannot tell. The plan walk before it
// sees every resource's prior state, so it notes their sandboxes here
// (Forget), and the create skips them (Held).
//
// One line per sandbox, "<unix seconds> <id>", appended; entries older than
// heldRetention are dropped when the ledger is loaded. A plan on another
// machine (a saved plan applied elsewhere) leaves nothing here: the
// provider's documentation says what recovery then cannot tell apart.

// heldRetention is how long a sandbox stays in the ledger after a plan
// last saw it held: longer than any sandbox lives between two plans.
const heldRetention = 30 * 24 * time.Hour

// heldLedger is the ledger of one create journal (disabled with it).
type heldLedger struct {
	mu     sync.Mutex
	path   string // "": disabled
	loaded bool
	ids    map[string]time.Time
}

// load reads the ledger once, dropping old entries (and rewriting it when
// it dropped any). The caller holds mu.
func (h *heldLedger) load() {
	if h.loaded {
		return
	}
	h.loaded, h.ids = true, map[string]time.Time{}
	f, err := os.Open(h.path)
	if err != nil {
		return
	}
	defer func() { _ = f.Close() }()
	dropped := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sec, id, ok := strings.Cut(sc.Text(), " ")
		n, err := strconv.ParseInt(sec, 10, 64)
		if !ok || err != nil || id == "" {
			continue
		}
		at := time.Unix(n, 0)
		if time.Since(at) > heldRetention {
			dropped = true
			continue
		}
		if at.After(h.ids[id]) {
			h.ids[id] = at
		}
	}
	if dropped {
		h.rewrite()
	}
}

// rewrite replaces the file with the entries in memory (best effort).
func (h *heldLedger) rewrite() {
	var b strings.Builder
	for id, at := range h.ids {
		fmt.Fprintf(&b, "%d %s\n", at.Unix(), id)
	}
	tmp := h.path + ".tmp"
	if os.WriteFile(tmp, []byte(b.String()), 0o600) == nil {
		_ = os.Rename(tmp, h.path)
	}
}

// record notes ids as held now (ids already noted today are not written
// again).
func (h *heldLedger) record(ids []string) {
	if h == nil || h.path == "" || len(ids) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.load()
	now := time.Now()
	var b strings.Builder
	for _, id := range ids {
		if id == "" || strings.ContainsAny(id, " \n") || now.Sub(h.ids[id]) < 24*time.Hour {
			continue
		}
		h.ids[id] = now
		fmt.Fprintf(&b, "%d %s\n", now.Unix(), id)
	}
	if b.Len() == 0 || os.MkdirAll(filepath.Dir(h.path), 0o700) != nil {
		return
	}
	f, err := os.OpenFile(h.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	_, _ = f.WriteString(b.String())
	_ = f.Close()
}

// has reports whether a plan on this machine saw id held.
func (h *heldLedger) has(id string) bool {
	if h == nil || h.path == "" {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.load()
	_, ok := h.ids[id]
	return ok
}
