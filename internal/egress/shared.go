package egress

// Egress policy pieces every resource that writes a policy shares —
// prime_egress_policy, the egress block of prime_sandbox and
// prime_sandbox_fleet, prime_fleet_egress_policy: the allow/block/routes
// schema, reading and validating them, composing what is sent, writing and
// waiting fail-closed, and restoring on destroy with the reuse guard. The
// policy semantics themselves live in prime.ComposeEgressPolicy.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

// DefaultTimeout is how long a write waits for the data plane to
// enforce a policy, as in the upstream fail-closed wait.
const DefaultTimeout = 60 * time.Second

const entryGrammarDoc = "Entries are exact hostnames (`api.example.com`, any case, internationalised names allowed, one " +
	"optional trailing dot), a leftmost wildcard (`*.example.com`: every name under example.com, at any depth, but " +
	"**not** example.com itself), IPv4 addresses (`1.2.3.4`) or IPv4 CIDRs (`10.0.0.0/8`). Entries are compared in " +
	"canonical form (lowercase, IDNA A-label, no trailing dot, an address equals its `/32`), so the platform's " +
	"normalisation never shows as a diff after an apply or a refresh."

// Lists are the three arguments that declare a policy.
type Lists struct {
	Allow  types.Set  `tfsdk:"allow"`
	Block  types.Set  `tfsdk:"block"`
	Routes types.List `tfsdk:"routes"`
}

// egressListAttributes is the schema of allow, block and routes. change
// ends each description: what changing the argument does.
func egressListAttributes(change string) map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"allow": schema.SetAttribute{
			Optional: true, ElementType: egressEntryType{},
			MarkdownDescription: "Allowlist: only these destinations, plus the hosts of `routes`, are reachable. " +
				"`allow = []` denies all egress except the routes. Exactly one of `allow` and `block` must be set; " +
				"at most 256 entries are sent, route hosts included. " + entryGrammarDoc + " " + change,
		},
		"block": schema.SetAttribute{
			Optional: true, ElementType: egressEntryType{},
			MarkdownDescription: "Blocklist: everything except these destinations is reachable. `block = []` " +
				"restricts nothing. Route hosts are not added in this mode, and an entry that matches a route host " +
				"is refused at plan time. Exactly one of `allow` and `block` must be set; at most 256 entries. " +
				entryGrammarDoc + " " + change,
		},
		"routes": schema.ListAttribute{
			Optional: true, ElementType: types.StringType,
			MarkdownDescription: "Framework routes the agent must always reach, such as an LLM interception " +
				"endpoint or MCP server URLs (`https://intercept.example.net/v1`). In allow mode their hostnames " +
				"are put in front of `allow` (deduplicated), so `allow = []` still reaches them. http(s) URLs " +
				"with an IPv4 or DNS host only (the platform is IPv4-only). " + change,
		},
	}
}

// effectiveListAttributes are the computed lists actually sent.
func effectiveListAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"effective_allow": schema.ListAttribute{
			Computed: true, ElementType: types.StringType,
			MarkdownDescription: "The allowlist sent to the platform, in canonical form: route hosts first, then " +
				"`allow`, deduplicated. Null in block mode.",
		},
		"effective_block": schema.ListAttribute{
			Computed: true, ElementType: types.StringType,
			MarkdownDescription: "The blocklist sent to the platform, in canonical form. Null in allow mode.",
		},
	}
}

// spec reads the lists. known is false when any of them is not yet known.
func (l Lists) spec(ctx context.Context) (spec prime.EgressPolicySpec, known bool, diags diag.Diagnostics) {
	known = true
	entries := func(v types.Set) []string {
		if v.IsNull() {
			return nil
		}
		if v.IsUnknown() {
			known = false
			return nil
		}
		out := make([]string, 0, len(v.Elements()))
		for _, e := range v.Elements() {
			if e.IsUnknown() {
				known = false
				continue
			}
			sv, isString := e.(basetypes.StringValuable)
			if !isString {
				continue
			}
			s, d := sv.ToStringValue(ctx)
			diags.Append(d...)
			out = append(out, s.ValueString())
		}
		return out
	}
	spec.Allow = sortByCanonical(entries(l.Allow))
	spec.Block = sortByCanonical(entries(l.Block))
	if l.Routes.IsUnknown() {
		known = false
	} else {
		routes, d := tfkit.StringList(ctx, l.Routes)
		diags.Append(d...)
		if routes == nil && !l.Routes.IsNull() {
			known = false
		}
		spec.Routes = routes
	}
	return spec, known, diags
}

// sortByCanonical orders set elements by their canonical form, so the list
// sent (and effective_allow/effective_block) does not depend on how entries
// are spelled or on Terraform's set order. Invalid entries sort last.
func sortByCanonical(entries []string) []string {
	if entries == nil {
		return nil
	}
	key := func(s string) string {
		if c, err := prime.CanonicalEgressEntry(s); err == nil {
			return "0" + c
		}
		return "1" + s
	}
	sort.SliceStable(entries, func(i, j int) bool { return key(entries[i]) < key(entries[j]) })
	return entries
}

// Validate reports every error at plan time. Entries known now are
// checked even while others are unknown; counts, duplicates and the
// allow/block choice wait until everything is known. Warnings are not
// reported here: Terraform validates a configuration several times per
// run (the validate walk, then per instance in the plan and again in the
// apply), so they come once, from warnPlanned.
func (l Lists) Validate(ctx context.Context, base path.Path, diags *diag.Diagnostics) {
	spec, known, d := l.spec(ctx)
	diags.Append(d...)
	if !known {
		if (l.Allow.IsUnknown() || l.Block.IsUnknown()) && spec.Allow == nil && spec.Block == nil {
			return
		}
		if spec.Allow != nil && spec.Block != nil {
			spec.Block = nil
		}
		if spec.Allow == nil && spec.Block == nil {
			spec.Allow = []string{}
		}
		_, findings := prime.ComposeEgressPolicy(spec)
		addFindingErrors(diags, findings, true, base)
		return
	}
	_, findings := prime.ComposeEgressPolicy(spec)
	addFindingErrors(diags, findings, false, base)
}

// warnPlanned reports the lists' warnings (a wildcard without its apex, a
// duplicate) once per attribute, for a plan that writes them: the plan of
// a create or of a change of the lists, not every plan of an unchanged
// configuration.
func (l Lists) warnPlanned(ctx context.Context, base path.Path, diags *diag.Diagnostics) {
	spec, known, _ := l.spec(ctx)
	if !known {
		return
	}
	_, findings := prime.ComposeEgressPolicy(spec)
	if hasErrors(findings) {
		return // the errors are reported by validate
	}
	addFindingWarnings(diags, findings, base)
}

// compose is the policy to send, at apply time (every value is known and
// validation already passed, its warnings already shown).
func (l Lists) compose(ctx context.Context, base path.Path, diags *diag.Diagnostics) (prime.EgressPolicy, bool) {
	spec, known, d := l.spec(ctx)
	diags.Append(d...)
	if !known {
		diags.AddError("Egress policy not known", "allow, block and routes must be known at apply time")
		return prime.EgressPolicy{}, false
	}
	policy, findings := prime.ComposeEgressPolicy(spec)
	addFindingErrors(diags, findings, false, base)
	return policy, !diags.HasError()
}

// Planned is the composed policy when it is known and valid (for planning
// effective_allow/effective_block), else nil.
func (l Lists) Planned(ctx context.Context) (*prime.EgressPolicy, diag.Diagnostics) {
	spec, known, diags := l.spec(ctx)
	if !known {
		return nil, diags
	}
	policy, findings := prime.ComposeEgressPolicy(spec)
	if hasErrors(findings) {
		return nil, diags
	}
	return &policy, diags
}

// findingPath is a finding's attribute under base (the resource's root,
// or a block such as egress) and its name in messages.
func findingPath(f prime.Finding, base path.Path) (path.Path, string) {
	if len(base.Steps()) > 0 {
		return base.AtName(f.Attribute), base.String() + "." + f.Attribute
	}
	return path.Root(f.Attribute), f.Attribute
}

// addFindingErrors attaches the error findings to their attribute, naming
// it in the message: one error per finding, each a reason to fix.
func addFindingErrors(diags *diag.Diagnostics, findings []prime.Finding, onlyEntries bool, base path.Path) {
	for _, f := range findings {
		if f.Severity != prime.FindingError || onlyEntries && f.Entry == "" {
			continue
		}
		p, name := findingPath(f, base)
		diags.AddAttributeError(p, "Invalid egress policy", name+": "+f.Message)
	}
}

// addFindingWarnings attaches the warning findings as one warning per
// attribute, listing every entry concerned: a list with several wildcards
// without their apex reads as one warning, not one per entry (which
// Terraform's CLI would fold into "and N more similar warnings", hiding
// all but the first).
func addFindingWarnings(diags *diag.Diagnostics, findings []prime.Finding, base path.Path) {
	byAttr := map[string][]string{}
	paths := map[string]path.Path{}
	for _, f := range findings {
		if f.Severity == prime.FindingError {
			continue
		}
		p, name := findingPath(f, base)
		byAttr[name] = append(byAttr[name], f.Message)
		paths[name] = p
	}
	for _, name := range tfkit.SortedKeys(byAttr) {
		msgs := byAttr[name]
		detail := name + ": " + msgs[0]
		if len(msgs) > 1 {
			detail = name + ":\n\n- " + strings.Join(msgs, "\n- ")
		}
		diags.AddAttributeWarning(paths[name], "Egress policy warning", detail)
	}
}

func hasErrors(findings []prime.Finding) bool {
	for _, f := range findings {
		if f.Severity == prime.FindingError {
			return true
		}
	}
	return false
}

// listValue turns a composed list into a state value (null for nil).
func listValue(ctx context.Context, list []string) (types.List, diag.Diagnostics) {
	if list == nil {
		return types.ListNull(types.StringType), nil
	}
	return types.ListValueFrom(ctx, types.StringType, list)
}

// effectiveValues are a policy's lists as effective_allow/effective_block.
func effectiveValues(ctx context.Context, p prime.EgressPolicy) (allow, block types.List, diags diag.Diagnostics) {
	allow, d := listValue(ctx, p.Allowlist)
	diags.Append(d...)
	block, d = listValue(ctx, p.Denylist)
	diags.Append(d...)
	return allow, block, diags
}

// PolicyOfEffective reads a policy back from effective_allow/effective_block.
func PolicyOfEffective(ctx context.Context, allow, block types.List) (prime.EgressPolicy, diag.Diagnostics) {
	var diags diag.Diagnostics
	var p prime.EgressPolicy
	if !allow.IsNull() && !allow.IsUnknown() {
		l, d := tfkit.StringList(ctx, allow)
		diags.Append(d...)
		p.Allowlist = l
	}
	if !block.IsNull() && !block.IsUnknown() {
		l, d := tfkit.StringList(ctx, block)
		diags.Append(d...)
		p.Denylist = l
	}
	return p, diags
}

// listsFromPlatform are allow/block as a user would write the platform's
// policy: route hosts this configuration adds are left out, both-null reads
// as open (block = []).
func listsFromPlatform(platform prime.EgressPolicy, routes []string) (allow, block types.Set) {
	if platform.Allowlist == nil && platform.Denylist == nil {
		platform.Denylist = []string{}
	}
	if platform.Allowlist != nil {
		return entrySet(withoutRouteHosts(platform.Allowlist, routes)), types.SetNull(egressEntryType{})
	}
	return types.SetNull(egressEntryType{}), entrySet(platform.Denylist)
}

// withoutRouteHosts drops the hosts the configuration adds from routes, so
// a drifted allowlist reads back as what a user would write in allow.
func withoutRouteHosts(list []string, routes []string) []string {
	policy, _ := prime.ComposeEgressPolicy(prime.EgressPolicySpec{Allow: []string{}, Routes: routes})
	hosts := map[string]bool{}
	for _, h := range policy.Allowlist {
		hosts[h] = true
	}
	out := []string{}
	for _, e := range list {
		c, err := prime.CanonicalEgressEntry(e)
		if err == nil && hosts[c] {
			continue
		}
		out = append(out, e)
	}
	return out
}

func entrySet(list []string) types.Set {
	elems := make([]attr.Value, 0, len(list))
	seen := map[string]bool{}
	for _, e := range list {
		if seen[e] {
			continue
		}
		seen[e] = true
		elems = append(elems, newEgressEntry(e))
	}
	return types.SetValueMust(egressEntryType{}, elems)
}

// Write writes a policy and waits for the data plane within timeout,
// measured from the moment the platform accepted it (as in the upstream
// fail-closed wait). A policy accepted but not enforced in time is an
// *prime.EgressNotAppliedError; the written generation is returned with it
// (0 when nothing was accepted). timeoutKey names the timeouts key for
// messages.
func Write(ctx context.Context, c *prime.Client, id string, policy prime.EgressPolicy, timeout time.Duration, timeoutKey string) (*prime.EgressPolicyStatus, int64, error) {
	put, err := putEgress(ctx, c, id, policy, timeout)
	if err != nil {
		return nil, 0, err
	}
	final, err := waitEgress(ctx, c, id, put.Generation, put, timeout, timeoutKey)
	if err != nil {
		return nil, put.Generation, err
	}
	return final, put.Generation, nil
}

// putEgress writes a policy; the platform's answer carries the generation
// it accepted.
func putEgress(ctx context.Context, c *prime.Client, id string, policy prime.EgressPolicy, timeout time.Duration) (*prime.EgressPolicyStatus, error) {
	put, err := c.PutEgressPolicy(ctx, id, policy)
	if err != nil {
		return nil, fmt.Errorf("the platform refused the egress policy for sandbox %s: %w", id, err)
	}
	tflog.Info(ctx, "egress policy accepted; waiting for the data plane to enforce it", map[string]any{
		"sandbox_id": id, "generation": put.Generation, "timeout": timeout.String(),
	})
	return put, nil
}

// waitEgress waits, fail-closed, for generation gen to be enforced.
func waitEgress(ctx context.Context, c *prime.Client, id string, gen int64, last *prime.EgressPolicyStatus, timeout time.Duration, timeoutKey string) (*prime.EgressPolicyStatus, error) {
	wctx, cancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("timeouts.%s (%s) reached", timeoutKey, timeout))
	defer cancel()
	return c.WaitForEgressApplied(wctx, id, gen, last)
}

// FailClosedMessage explains a policy that is not enforced after a write.
func FailClosedMessage(id string, timeout time.Duration, timeoutKey string, err error) string {
	var notApplied *prime.EgressNotAppliedError
	if !errors.As(err, &notApplied) {
		return fmt.Sprintf("egress policy for sandbox %s: %v", id, err)
	}
	if notApplied.Paused {
		return fmt.Sprintf("egress policy for sandbox %s was accepted (generation %d) but is not enforced: the sandbox "+
			"is PAUSED, and the platform applies the policy when the sandbox resumes.\n\n"+
			"Failing closed: the policy is not recorded as applied, and nothing that depends on it was started. The "+
			"requested restriction stays requested, so the sandbox resumes under it. Resume the sandbox and apply "+
			"again: the policy is then written and waited for as usual.", id, notApplied.Want)
	}
	return fmt.Sprintf("egress policy for sandbox %s was accepted (generation %d) but is not enforced after %s "+
		"(the platform reports applied_generation %d, applied %t).\n\n"+
		"Failing closed: the policy is not recorded as applied, and nothing that depends on it was started. "+
		"The requested restriction stays requested on the platform; the next apply writes it again and waits "+
		"again, without lifting it in between. If the data plane is only slow, raise timeouts.%s.",
		id, notApplied.Want, timeout, notApplied.Last.AppliedGeneration, notApplied.Last.Applied, timeoutKey)
}

// ReadStatus GETs the policy; gone is true when the sandbox is gone or
// terminated (the egress endpoints answer 404 or 409 then).
func ReadStatus(ctx context.Context, c *prime.Client, id string) (st *prime.EgressPolicyStatus, gone bool, err error) {
	st, err = c.GetEgressPolicy(ctx, id)
	switch code := prime.StatusCodeOf(err); {
	case err == nil:
		return st, false, nil
	case code == http.StatusNotFound:
		return nil, true, nil
	case code == http.StatusConflict || code == http.StatusBadRequest:
		sb, gerr := c.GetSandbox(ctx, id)
		switch {
		case errors.Is(gerr, prime.ErrNotFound):
			return nil, true, nil
		case gerr != nil:
			return nil, false, gerr
		case prime.IsTerminalStatus(sb.Status):
			return nil, true, nil
		}
	}
	return nil, false, err
}

// baselineOf is the policy a sandbox object says it holds: its create-time
// lists, or open. Captured before a prime_egress_policy's first write, it is
// what that policy's destroy restores, so a born-restricted sandbox goes
// back to its born lists and never to an open policy.
func baselineOf(sb *prime.Sandbox) prime.EgressPolicy {
	switch {
	case sb.NetworkAllowlist != nil:
		return prime.EgressPolicy{Allowlist: sb.NetworkAllowlist}
	case sb.NetworkDenylist != nil:
		return prime.EgressPolicy{Denylist: sb.NetworkDenylist}
	}
	return prime.OpenEgressPolicy()
}

// teardownRestoreWait bounds how long a destroy waits for its restore to
// be enforced (timeouts.delete, when shorter, bounds it instead). A healthy
// data plane enforces a write well within it, so a kept sandbox is open
// again when the destroy returns. A stalled one would otherwise hold every
// destroy for the whole timeout, although the sandboxes of a teardown are
// deleted next whatever their policy: past this wait the destroy goes on,
// and a setup step that needs the restore waits for the rest (see
// pendingRestores).
const teardownRestoreWait = 10 * time.Second

// restoreResult is what a restore did, for its caller's warnings.
type restoreResult struct {
	// NewerGen, when set, is another writer's newer generation, left in
	// place (OwnGen is the generation this resource wrote).
	NewerGen, OwnGen int64
	// PendingGen, when set, is a teardown restore the platform accepted
	// but did not enforce within Waited.
	PendingGen int64
	Waited     time.Duration
	// What names the restored policy in messages.
	What string
}

// restoreEgress is a policy's destroy: unless a newer generation than ours
// holds the sandbox (someone else's policy: never undone, the reuse guard),
// write the baseline back and wait until it is enforced. ownGen < 0 means
// unknown (the guard then compares nothing).
//
// A teardown (a destroy, the policy's or a replacement's) waits at most
// teardownRestoreWait: a restore not enforced by then is reported in
// PendingGen, noted for the setup steps that need it, and the destroy goes
// on. Other restores (a member removed from a fleet policy, whose sandbox
// stays) wait for the whole timeout and fail closed.
func restoreEgress(ctx context.Context, c *prime.Client, id string, ownGen int64, baseline prime.EgressPolicy, timeout time.Duration, teardown bool) (restoreResult, error) {
	res := restoreResult{What: "unrestricted egress"}
	if !baseline.IsOpen() {
		res.What = "its create-time egress lists (" + Describe(baseline) + ")"
	}
	st, gone, err := ReadStatus(ctx, c, id)
	switch {
	case err != nil:
		return res, fmt.Errorf("reading the egress policy of sandbox %s: %w", id, err)
	case gone:
		return res, nil // nothing to restore on a sandbox that is gone
	}
	if ownGen >= 0 && st.Generation > ownGen {
		res.NewerGen, res.OwnGen = st.Generation, ownGen
		return res, nil
	}
	if prime.SamePolicy(st.Policy, baseline) && st.Enforces(st.Generation) {
		return res, nil
	}
	if !teardown {
		if _, _, err := Write(ctx, c, id, baseline, timeout, "delete"); err != nil {
			var notApplied *prime.EgressNotAppliedError
			if errors.As(err, &notApplied) {
				return res, fmt.Errorf("restoring %s on sandbox %s was accepted (generation %d) but is not enforced after "+
					"%s. The sandbox may still hold this policy, so the resource stays in state; run the apply again to "+
					"retry, or raise timeouts.delete", res.What, id, notApplied.Want, timeout)
			}
			return res, fmt.Errorf("restoring %s on sandbox %s: %w", res.What, id, err)
		}
		return res, nil
	}
	put, err := putEgress(ctx, c, id, baseline, timeout)
	if err != nil {
		return res, fmt.Errorf("restoring %s on sandbox %s: %w", res.What, id, err)
	}
	deadline := time.Now().Add(timeout)
	res.Waited = min(timeout, teardownRestoreWait)
	if _, err := waitEgress(ctx, c, id, put.Generation, put, res.Waited, "delete"); err != nil {
		var notApplied *prime.EgressNotAppliedError
		if !errors.As(err, &notApplied) {
			return res, fmt.Errorf("restoring %s on sandbox %s: %w", res.What, id, err)
		}
		// Teardown is never held hostage by a data plane that does not
		// converge: the restore is accepted, and a kept sandbox stays safe
		// because require_open_egress waits for it, then refuses every
		// setup step while the restriction holds.
		res.PendingGen = put.Generation
		pendingRestores.note(c, id, put.Generation, deadline)
	}
	return res, nil
}

// restoreNote is one sandbox's restore, for a warning: Key is the fleet
// member's key ("" for prime_egress_policy).
type restoreNote struct {
	Key, SandboxID string
	restoreResult
}

// addRestoreWarnings reports what restores left: a newer policy of another
// writer in place, restores not yet enforced. Each is one warning for the
// whole resource, however many members it concerns, with the explanation
// once.
func addRestoreWarnings(diags *diag.Diagnostics, notes []restoreNote) {
	sort.Slice(notes, func(i, j int) bool { return notes[i].Key < notes[j].Key })
	var newer, pending []restoreNote
	for _, n := range notes {
		if n.NewerGen > 0 {
			newer = append(newer, n)
		}
		if n.PendingGen > 0 {
			pending = append(pending, n)
		}
	}
	if len(newer) == 1 && newer[0].Key == "" {
		n := newer[0]
		diags.AddWarning("Newer egress policy left in place", fmt.Sprintf("Sandbox %s holds egress policy generation %d, "+
			"newer than generation %d written by this resource; it belongs to another writer (a create_before_destroy "+
			"replacement, the CLI) and is left in place.", n.SandboxID, n.NewerGen, n.OwnGen))
	} else if len(newer) > 0 {
		items := make([]string, len(newer))
		for i, n := range newer {
			items[i] = fmt.Sprintf("member %q (sandbox %s holds generation %d, this resource wrote %d)", n.Key, n.SandboxID, n.NewerGen, n.OwnGen)
		}
		diags.AddWarning("Newer egress policy left in place", fmt.Sprintf("%d %s a newer egress policy than this "+
			"resource wrote; it belongs to another writer (a create_before_destroy replacement, the CLI) and is left in "+
			"place: %s.", len(newer), tfkit.PluralVerb(len(newer), "member's sandbox holds", "members' sandboxes hold"), strings.Join(items, ", ")))
	}
	if len(pending) == 0 {
		return
	}
	const rest = "The destroy does not wait longer, so that teardown completes: a sandbox destroyed next is deleted " +
		"whatever its policy. A sandbox that is kept holds its previous restriction until the data plane enforces the " +
		"restore; a setup step with require_open_egress = true waits for it during this apply (up to timeouts.delete " +
		"from the write) and refuses to run while it is pending, naming the generation."
	if len(pending) == 1 && pending[0].Key == "" {
		n := pending[0]
		diags.AddWarning("Egress restore not yet enforced", fmt.Sprintf("Restoring %s on sandbox %s was accepted "+
			"(generation %d) but is not enforced after %s. %s", n.What, n.SandboxID, n.PendingGen, n.Waited, rest))
		return
	}
	items := make([]string, len(pending))
	for i, n := range pending {
		items[i] = fmt.Sprintf("member %q (sandbox %s, generation %d: %s)", n.Key, n.SandboxID, n.PendingGen, n.What)
	}
	diags.AddWarning("Egress restore not yet enforced", fmt.Sprintf("Restoring what the sandboxes held before this "+
		"policy was accepted on %d %s but is not enforced after %s: %s. %s", len(pending),
		tfkit.PluralVerb(len(pending), "member", "members"), pending[0].Waited, strings.Join(items, ", "), rest))
}

// pendingRestores are the teardown restores this provider process wrote
// and stopped waiting for (restoreEgress). A setup step that needs open
// egress on such a sandbox in the same run — the new setup of a day-two
// re-lock, right after the old policy's destroy — waits for the restore
// until its own deadline (its write plus timeouts.delete) instead of
// refusing at once. Keyed by client, so that providers sharing a process
// (the acceptance tests) never see each other's.
var pendingRestores = &restoreWaits{deadlines: map[restoreWaitKey]time.Time{}}

type restoreWaitKey struct {
	client  *prime.Client
	sandbox string
	gen     int64
}

type restoreWaits struct {
	mu        sync.Mutex
	deadlines map[restoreWaitKey]time.Time
}

// note records a pending restore, dropping those whose deadline passed.
func (r *restoreWaits) note(c *prime.Client, id string, gen int64, deadline time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	for k, d := range r.deadlines {
		if now.After(d) {
			delete(r.deadlines, k)
		}
	}
	r.deadlines[restoreWaitKey{c, id, gen}] = deadline
}

// take returns and forgets a pending restore's deadline.
func (r *restoreWaits) take(c *prime.Client, id string, gen int64) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := restoreWaitKey{c, id, gen}
	d, ok := r.deadlines[k]
	delete(r.deadlines, k)
	return d, ok
}

// NotePendingRestore records a teardown restore of open egress that this
// process wrote and stopped waiting for, until deadline (restoreEgress
// notes its own; a reader's tests note one to stand for it).
func NotePendingRestore(c *prime.Client, id string, gen int64, deadline time.Time) {
	pendingRestores.note(c, id, gen, deadline)
}

// PendingRestoreNoted says whether a restore is still noted (one that
// AwaitPendingRestore waited for is not).
func PendingRestoreNoted(c *prime.Client, id string, gen int64) bool {
	pendingRestores.mu.Lock()
	defer pendingRestores.mu.Unlock()
	_, ok := pendingRestores.deadlines[restoreWaitKey{c, id, gen}]
	return ok
}

// AwaitPendingRestore is for a reader that needs open egress and found st:
// an open policy accepted but not enforced. When this process wrote it as
// a teardown restore, it waits for it until the restore's deadline and
// returns the latest status; otherwise (another process's restore, from an
// earlier run: the data plane has had its time) it returns st at once.
func AwaitPendingRestore(ctx context.Context, c *prime.Client, id string, st *prime.EgressPolicyStatus) *prime.EgressPolicyStatus {
	deadline, ok := pendingRestores.take(c, id, st.Generation)
	if !ok || !time.Now().Before(deadline) {
		return st
	}
	wctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	tflog.Info(ctx, "waiting for the pending restore of open egress before a setup step", map[string]any{
		"sandbox_id": id, "generation": st.Generation, "until": deadline.Format(time.RFC3339),
	})
	if final, _ := c.WaitForEgressApplied(wctx, id, st.Generation, st); final != nil {
		return final
	}
	return st
}

// Baselines travel in private state, as JSON.
const baselineKey = "baseline"

func encodeBaseline(p prime.EgressPolicy) []byte {
	b, _ := json.Marshal(p)
	return b
}

// decodeBaseline reads a stored baseline; absent (an import, a policy
// created before baselines were recorded) means open.
func decodeBaseline(b []byte) prime.EgressPolicy {
	var p prime.EgressPolicy
	if len(b) == 0 || json.Unmarshal(b, &p) != nil || (p.Allowlist == nil && p.Denylist == nil) {
		return prime.OpenEgressPolicy()
	}
	return p
}

// sandboxAcceptsPolicy explains why a sandbox cannot take an egress policy,
// or returns "".
func sandboxAcceptsPolicy(sb *prime.Sandbox) string {
	switch {
	case sb.Status == prime.StatusPaused:
		// The platform accepts a policy on a paused VM and applies it on
		// resume: it is written (the sandbox then resumes restricted), and
		// the wait reports it not enforced.
		return ""
	case sb.Status != prime.StatusRunning:
		return fmt.Sprintf("sandbox %s is %s; an egress policy can only be applied to a RUNNING (or PAUSED) sandbox "+
			"(make the policy depend on the sandbox, whose create waits for RUNNING)", sb.ID, sb.Status)
	}
	return ""
}

// Describe renders a policy for messages.
func Describe(p prime.EgressPolicy) string {
	switch {
	case p.IsOpen():
		return "open"
	case p.Allowlist != nil && len(p.Allowlist) == 0:
		return "deny all"
	case p.Allowlist != nil:
		return "allow " + strings.Join(p.Allowlist, ", ")
	}
	return "block " + strings.Join(p.Denylist, ", ")
}
