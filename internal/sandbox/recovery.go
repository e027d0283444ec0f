package sandbox

// Recovery from the platform: how a create finds the sandbox that a lost
// apply (a killed Terraform, a lost CI runner) created for it, when the
// machine that runs this apply has no journal of that apply.
//
// Every sandbox is created with two labels (recoveryLabels): the workspace
// scope's (journal.Scope: the state this apply works for, derived alike on
// any machine from the configuration and environment) and its create's
// (the scope, the resource kind and the create request without its
// idempotency key and secret values). Before the first create of a team,
// the provider process lists that team's live sandboxes carrying the
// scope's label, once; each create then takes one with its own create
// label, if there is one that no plan on this machine saw Terraform hold
// (journal.Creates.Held) and that no other create of this process took, and
// adopts it instead of creating a second sandbox. Sandboxes of another
// scope — another workspace, another state — never carry this scope's
// label, so they are never adopted (nor deleted: recovery deletes
// nothing).

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/primeintellect/terraform-provider-prime/internal/journal"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// ReservedLabelPrefix starts the labels the provider adds to every
// sandbox it creates; a configuration's labels may not use it, and read
// back they are left out of `labels`.
const ReservedLabelPrefix = "tfprime-"

const (
	scopeLabelPrefix  = ReservedLabelPrefix + "ws-"
	createLabelPrefix = ReservedLabelPrefix + "id-"
)

// Kinds of create, part of the create label: a prime_sandbox and a fleet
// member with the same name and template are different resources.
const (
	createKindSandbox = "prime_sandbox"
	createKindFleet   = "prime_sandbox_fleet"
)

// Recovery is one provider process's recovery from the platform. The zero
// scope (or a nil Recovery) turns it off.
type Recovery struct {
	client *prime.Client
	scope  journal.Scope
	held   func(id string) bool

	mu    sync.Mutex
	teams map[string]*leftoverIndex
}

// NewRecovery is the recovery of a provider process: sandboxes are
// labelled for scope, and those held (a plan saw them in state) are never
// adopted.
func NewRecovery(c *prime.Client, scope journal.Scope, held func(id string) bool) *Recovery {
	if held == nil {
		held = func(string) bool { return false }
	}
	return &Recovery{client: c, scope: scope, held: held, teams: map[string]*leftoverIndex{}}
}

// RecoveryFrom is the recovery of the provider's configured data, asked for
// by capability; nil (off) before Configure.
func RecoveryFrom(data any) *Recovery {
	if r, ok := data.(interface{ SandboxRecovery() *Recovery }); ok {
		return r.SandboxRecovery()
	}
	return nil
}

// Scope is the workspace scope sandboxes are labelled for.
func (rc *Recovery) Scope() journal.Scope {
	if rc == nil {
		return journal.Scope{}
	}
	return rc.scope
}

// on reports whether recovery labels and adopts.
func (rc *Recovery) on() bool { return rc != nil && rc.scope.ID != "" }

// ScopeLabel is the label every sandbox of the scope carries ("" when
// recovery is off).
func (rc *Recovery) ScopeLabel() string {
	if !rc.on() {
		return ""
	}
	return scopeLabelPrefix + rc.scope.ID
}

// createLabel names a create: its scope, kind and request, without the
// idempotency key, the values of secrets (a label is readable by anyone
// who can list the account's sandboxes; which secrets are set still
// counts) and the recovery labels themselves.
func createLabel(scope journal.Scope, kind string, req prime.CreateSandboxRequest) string {
	req.IdempotencyKey = ""
	if req.Secrets != nil {
		names := make(map[string]string, len(req.Secrets))
		for k := range req.Secrets {
			names[k] = ""
		}
		req.Secrets = names
	}
	req.Labels = userLabels(req.Labels)
	sort.Strings(req.Labels)
	b, _ := json.Marshal(req)
	sum := sha256.Sum256(append([]byte(scope.ID+"\x00"+kind+"\x00"), b...))
	return createLabelPrefix + hex.EncodeToString(sum[:8])
}

// userLabels are labels without the provider's reserved ones.
func userLabels(labels []string) []string {
	out := make([]string, 0, len(labels))
	for _, l := range labels {
		if !strings.HasPrefix(l, ReservedLabelPrefix) {
			out = append(out, l)
		}
	}
	return out
}

// label adds the recovery labels of a create of kind to req, and returns
// its create label ("" when recovery is off).
func (rc *Recovery) label(kind string, req *prime.CreateSandboxRequest) string {
	if !rc.on() {
		return ""
	}
	id := createLabel(rc.scope, kind, *req)
	req.Labels = append(slices.Clone(userLabels(req.Labels)), rc.ScopeLabel(), id)
	return id
}

// leftoverIndex is one team's live sandboxes of the scope, listed once,
// by create label.
type leftoverIndex struct {
	once  sync.Once
	err   error
	mu    sync.Mutex
	byID  map[string][]prime.Sandbox
	taken map[string]bool
}

// take returns a live sandbox of the scope labelled id that no plan saw
// held and no create of this process took, or nil; except are sandboxes
// the caller holds itself (a fleet's current members). The first call of a
// team lists its sandboxes; an error there is every create's of that
// team: without the list, a create could duplicate what a lost apply made.
func (rc *Recovery) take(ctx context.Context, req prime.CreateSandboxRequest, id string, except map[string]bool) (*prime.Sandbox, error) {
	if !rc.on() || id == "" {
		return nil, nil
	}
	team := ""
	if req.TeamID != nil {
		team = *req.TeamID
	}
	rc.mu.Lock()
	ix := rc.teams[team]
	if ix == nil {
		ix = &leftoverIndex{}
		rc.teams[team] = ix
	}
	rc.mu.Unlock()
	ix.once.Do(func() { ix.byID, ix.err = rc.list(ctx, team) })
	if ix.err != nil {
		return nil, fmt.Errorf("looking for sandboxes an earlier, lost apply of this workspace created (label %s): %w; "+
			"nothing was created, so that none is created twice: apply again", rc.ScopeLabel(), ix.err)
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for _, sb := range ix.byID[id] {
		if ix.taken[sb.ID] || except[sb.ID] || rc.held(sb.ID) {
			continue
		}
		if ix.taken == nil {
			ix.taken = map[string]bool{}
		}
		ix.taken[sb.ID] = true
		return &sb, nil
	}
	return nil, nil
}

// list lists a team's live sandboxes that carry the scope's label, by
// create label. The filter is sent, and checked again here [I: the current
// list endpoint's label and is_active filters are not in its published
// page; an older page documents them].
func (rc *Recovery) list(ctx context.Context, team string) (map[string][]prime.Sandbox, error) {
	active := true
	scope := rc.ScopeLabel()
	out := map[string][]prime.Sandbox{}
	err := rc.client.WalkSandboxes(ctx, prime.ListSandboxesOptions{TeamID: team, Labels: []string{scope}, IsActive: &active},
		func(sb prime.Sandbox) bool {
			if prime.IsTerminalStatus(sb.Status) || !slices.Contains(sb.Labels, scope) {
				return true
			}
			for _, l := range sb.Labels {
				if strings.HasPrefix(l, createLabelPrefix) {
					out[l] = append(out[l], sb)
				}
			}
			return true
		})
	return out, err
}
