package primemock

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock/shell"
)

// Magic image substrings (see the package documentation).
const (
	MagicErrorImage = "prime-mock/error"
	MagicBuildImage = "prime-mock/build"
	// MagicOOMName in a sandbox's name makes that one sandbox fail while it
	// boots (OOM_KILLED), so one member of a fleet can fail while its
	// siblings, created from the same template, run.
	MagicOOMName = "prime-mock-oom"
)

// List paging limits [OLD: per_page 1-1000, default 50], and the batch
// status limit (the SDK sends 1-100 unique ids).
const (
	defaultPerPage    = 50
	maxPerPage        = 1000
	maxBatchStatusIDs = 100
	// A bulk delete names 1-500 sandbox ids or 1-50 labels (the published
	// schema of DELETE /sandbox).
	maxBulkDeleteIDs    = prime.MaxBulkDeleteIDs
	maxBulkDeleteLabels = 50
)

// isTerminal: the statuses the SDK's waiters treat as final.
func isTerminal(status string) bool {
	switch status {
	case prime.StatusError, prime.StatusTerminated, prime.StatusTimeout:
		return true
	}
	return false
}

// hasAllLabels is the list and bulk-delete label filter: ALL of want.
func hasAllLabels(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// sandbox is one record. All fields are guarded by Server.mu.
type sandbox struct {
	id     string
	owner  string // the API key that created it (idempotency scope)
	userID string
	req    prime.CreateSandboxRequest // as accepted, platform defaults filled in

	status                string
	createdAt, updatedAt  time.Time
	startedAt, terminated *time.Time
	exitCode              *int // the start process's, when its exit stopped the sandbox
	errorType, errorMsg   *string
	terminationReason     *string
	pendingBuild          *string
	logs                  []string
	lifecycle             *time.Timer
	// lifeTimer ends the sandbox when its lifetime or idle timeout passes
	// (lifetime.go); lastActive (mock clock) is its last activity.
	lifeTimer  *time.Timer
	lastActive time.Time

	// Egress.
	createLists   bool // created with network_allowlist/denylist
	desired       prime.EgressPolicy
	generation    int64
	appliedGen    int64
	appliedPolicy prime.EgressPolicy
	pending       []pendingPolicy
	runningAt     time.Time // real clock, for apply scheduling
	observedGen   int64     // highest applied_generation a client was told
	toldRunning   bool      // a status answer told a client it was RUNNING
	applyTimer    *time.Timer

	// Gateway.
	gatewayReady bool // RUNNING and past the gateway lag
	gatewayTimer *time.Timer
	execs        map[*execution]bool // running scripts, every transport
	// m is the sandbox's file system and process table; its files are
	// released when the sandbox ends.
	m *shell.Machine
	// x is its part in the resources: restore, volumes, pause (resources.go).
	x sandboxExtra
}

// pendingPolicy is an accepted generation the data plane has not applied.
type pendingPolicy struct {
	gen        int64
	policy     prime.EgressPolicy
	acceptedAt time.Time // real clock
	// delayed is false only for a fresh VM's open generation 0, which has
	// nothing to enforce and so counts as applied as soon as it runs.
	delayed bool
}

func (sb *sandbox) stopTimers() {
	if sb.lifecycle != nil {
		sb.lifecycle.Stop()
		sb.lifecycle = nil
	}
	if sb.applyTimer != nil {
		sb.applyTimer.Stop()
		sb.applyTimer = nil
	}
	if sb.gatewayTimer != nil {
		sb.gatewayTimer.Stop()
		sb.gatewayTimer = nil
	}
	if sb.lifeTimer != nil {
		sb.lifeTimer.Stop()
		sb.lifeTimer = nil
	}
}

// jobID and userNS name the sandbox on the gateway.
func (sb *sandbox) jobID() string  { return "job-" + sb.id }
func (sb *sandbox) userNS() string { return "ns-" + sb.userID }

// ts makes a timestamp the SDK parses: UTC, at most microseconds.
func ts(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

func tsPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := ts(*t)
	return &v
}

func strPtr(s string) *string { return &s }

func cloneStrPtr(p *string) *string {
	if p == nil {
		return nil
	}
	return strPtr(*p)
}

// lookup finds the caller's sandbox by the request's {id}. [I: foreign-404]
// Another owner's sandbox is not found, as a missing one: the contract
// lists no 403 for routes addressed by a sandbox ID.
func (s *Server) lookup(r *http.Request, caller string) (*sandbox, reply, bool) {
	id := r.PathValue("id")
	sb := s.sandboxes[id]
	if sb == nil || !s.mayAct(caller, sb) {
		return nil, errorReply(http.StatusNotFound, "Sandbox not found"), false
	}
	return sb, reply{}, true
}

// idAlphabet and the length give CUID-like ids ("c" + 24 characters).
const idAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

func (s *Server) newID() string {
	for {
		b := make([]byte, 25)
		b[0] = 'c'
		for i := 1; i < len(b); i++ {
			b[i] = idAlphabet[s.rng.IntN(len(idAlphabet))]
		}
		if id := string(b); s.sandboxes[id] == nil {
			return id
		}
	}
}

// logf appends a line to the sandbox's log.
func (s *Server) logf(sb *sandbox, format string, args ...any) {
	sb.logs = append(sb.logs, s.now().Format(time.RFC3339Nano)+" "+fmt.Sprintf(format, args...)+"\n")
}
