package egress

// The allow/block/routes lists every resource that writes a policy shares
// (prime_egress_policy, the egress block of prime_sandbox and
// prime_sandbox_fleet, prime_fleet_egress_policy): their schema, reading
// and validating them, composing what is sent, and their canonical form
// in state. The policy semantics themselves live in
// prime.ComposeEgressPolicy.

import (
	"context"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

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
		"lists_sha256": schema.StringAttribute{
			Computed: true,
			MarkdownDescription: "SHA-256 (hex) naming what the lists let through: of `allow` or `block` and the " +
				"canonical entries of `effective_allow`/`effective_block`, sorted, one per line (`open` for an " +
				"unrestricted policy). Known at plan time; it changes exactly when the destinations change (not when " +
				"only their spelling does), so a command's `triggers` can name it to run again under new lists, and " +
				"it is the `egress_sha256` a command's run records when it starts under these lists.",
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

// Effective are the lists a policy sends (effective_allow and
// effective_block, canonical) and their digest (lists_sha256): what every
// resource that writes a policy records of it.
type Effective struct {
	EffectiveAllow types.List   `tfsdk:"effective_allow"`
	EffectiveBlock types.List   `tfsdk:"effective_block"`
	ListsSHA256    types.String `tfsdk:"lists_sha256"`
}

// unknownEffective is Effective while the lists are not known.
func unknownEffective() Effective {
	return Effective{EffectiveAllow: types.ListUnknown(types.StringType), EffectiveBlock: types.ListUnknown(types.StringType),
		ListsSHA256: types.StringUnknown()}
}

// effectiveOf is what a policy records of p.
func effectiveOf(ctx context.Context, p prime.EgressPolicy) (Effective, diag.Diagnostics) {
	var diags diag.Diagnostics
	allow, d := listValue(ctx, p.Allowlist)
	diags.Append(d...)
	block, d := listValue(ctx, p.Denylist)
	diags.Append(d...)
	return Effective{EffectiveAllow: allow, EffectiveBlock: block, ListsSHA256: types.StringValue(p.Digest())}, diags
}

// Policy reads the policy back from effective_allow/effective_block.
func (e Effective) Policy(ctx context.Context) (prime.EgressPolicy, diag.Diagnostics) {
	return PolicyOfEffective(ctx, e.EffectiveAllow, e.EffectiveBlock)
}

// withDigest fills lists_sha256 of a state recorded before it existed,
// from the recorded lists, so a refresh records it without a plan.
func (e *Effective) withDigest(ctx context.Context) {
	if !e.ListsSHA256.IsNull() || e.EffectiveAllow.IsUnknown() || e.EffectiveBlock.IsUnknown() ||
		e.EffectiveAllow.IsNull() && e.EffectiveBlock.IsNull() {
		return
	}
	p, d := e.Policy(ctx)
	if !d.HasError() {
		e.ListsSHA256 = types.StringValue(p.Digest())
	}
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
