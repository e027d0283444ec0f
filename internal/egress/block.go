package egress

// The egress block of prime_sandbox and prime_sandbox_fleet: a sandbox born
// restricted. The lists mean exactly what they mean on prime_egress_policy
// (Lists, one composition); they go into the create body, the create
// waits fail-closed until the data plane enforces them, a change updates
// them in place through set-network, and removing the block reopens egress.

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

var BlockPath = path.Root("egress")

var objectAsOptions = basetypes.ObjectAsOptions{}

// egressBlockDoc explains the block once, for the sandbox and the fleet;
// failClosed says what a create that fails closed leaves (it differs).
func egressBlockDoc(failClosed string) string {
	return "Egress lists the sandbox is **born** with: sent in the create request, so the " +
		"sandbox never has an open second. Create returns only once the data plane enforces them, or fails closed " +
		"within `timeouts.egress` (default 60 s): " + failClosed + ", and nothing that depends on it " +
		"starts. " + egressBlockDocRest
}

// What a born create that fails closed leaves, per resource.
const (
	SandboxBornFailClosed = "the sandbox stays in state, tainted"
	FleetBornFailClosed   = "members whose lists are not enforced fail the apply and are deleted, the healthy " +
		"members stay in state"
)

const egressBlockDocRest = "`allow`, `block` and `routes` mean exactly what they mean on `prime_egress_policy` (route hosts first " +
	"in allow mode, `allow = []` denies all but the routes, `*` refused, at most 256 entries with the route hosts). " +
	"Changing the lists updates them in place through set-network and waits again; removing the block reopens " +
	"egress. Use it when setup needs no network or is baked into the image; for trusted setup with the network " +
	"open, use `prime_egress_policy` after the setup instead. A `prime_egress_policy` on a born-restricted " +
	"sandbox is layered on top: its destroy restores these lists, never an open policy."

// Block is the schema of the egress block; failClosed as in
// egressBlockDoc.
func Block(failClosed string) schema.Block {
	attrs := egressListAttributes("Changing it updates the sandbox's policy in place and waits for enforcement.")
	for k, v := range effectiveListAttributes() {
		attrs[k] = v
	}
	return schema.SingleNestedBlock{MarkdownDescription: egressBlockDoc(failClosed), Attributes: attrs}
}

// ComputedAttributes are the sandbox-level egress status attributes.
func ComputedAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"egress_generation": schema.Int64Attribute{
			Computed: true,
			MarkdownDescription: "Generation of the sandbox's own egress policy: the born lists (generation the platform " +
				"gave them) or the last update of the `egress` block. Null without an `egress` block.",
		},
		"egress_applied": schema.BoolAttribute{
			Computed: true,
			MarkdownDescription: "Whether the data plane enforces the `egress` block's policy (`applied_generation` ≥ " +
				"`egress_generation`). Always `true` after a successful apply; a refresh that finds it `false` warns, and " +
				"the next apply writes the policy again and waits. Null without an `egress` block.",
		},
		"egress_override_generation": schema.Int64Attribute{
			Computed: true,
			MarkdownDescription: "Generation of a newer policy another writer put on the sandbox — a " +
				"`prime_egress_policy` layered on top, or the CLI — while the `egress` block was in force; null while " +
				"the block's policy is the newest. The sandbox does not fight that writer (a refresh shows the change " +
				"here and warns if its destinations differ); destroying the `prime_egress_policy` restores the block's " +
				"lists. While it holds, changing or removing the `egress` block fails without writing anything, " +
				"since the write would lift that policy: remove or change the layered policy first (in the same " +
				"apply is fine).",
		},
	}
}

func BlockObjectType() types.ObjectType {
	return types.ObjectType{AttrTypes: map[string]attr.Type{
		"allow": types.SetType{ElemType: egressEntryType{}}, "block": types.SetType{ElemType: egressEntryType{}},
		"routes": types.ListType{ElemType: types.StringType}, "effective_allow": types.ListType{ElemType: types.StringType},
		"effective_block": types.ListType{ElemType: types.StringType}, "lists_sha256": types.StringType,
	}}
}

// BornPolicy is the policy the block asks for, or nil without a block.
func BornPolicy(ctx context.Context, v types.Object, diags *diag.Diagnostics) (*prime.EgressPolicy, bool) {
	m, d := BlockModelOf(ctx, v)
	diags.Append(d...)
	if m == nil {
		return nil, true
	}
	p, ok := m.Lists.compose(ctx, BlockPath, diags)
	return &p, ok
}

// SetCreateLists puts a born policy into a create request.
func SetCreateLists(r *prime.CreateSandboxRequest, p *prime.EgressPolicy) {
	if p == nil {
		return
	}
	if p.Allowlist != nil {
		l := append([]string{}, p.Allowlist...)
		r.NetworkAllowlist = &l
		return
	}
	l := append([]string{}, p.Denylist...)
	r.NetworkDenylist = &l
}

// PlanBlock fills the egress attributes of a plan. prior is the state's
// (nil on create). It reports whether the apply writes the policy.
func PlanBlock(ctx context.Context, plan, prior *BlockState, diags *diag.Diagnostics) (writes bool) {
	m, d := BlockModelOf(ctx, plan.Egress)
	diags.Append(d...)
	if m == nil {
		plan.EgressGeneration, plan.EgressApplied = types.Int64Null(), types.BoolNull()
		plan.EgressOverride = types.Int64Null()
		if prior != nil && !prior.Egress.IsNull() {
			return true // reopen
		}
		return false
	}
	m.Effective = unknownEffective()
	policy, d := m.Lists.Planned(ctx)
	diags.Append(d...)
	if policy != nil {
		m.Effective, d = effectiveOf(ctx, *policy)
		diags.Append(d...)
	}
	plan.Egress, d = BlockValue(ctx, m)
	diags.Append(d...)
	plan.EgressApplied = types.BoolValue(true)

	writes = true
	if prior != nil && policy != nil {
		if pm, d := BlockModelOf(ctx, prior.Egress); pm != nil && !d.HasError() {
			was, d := pm.Policy(ctx)
			diags.Append(d...)
			writes = !prime.SamePolicy(was, *policy) || !prior.EgressApplied.ValueBool()
		}
	}
	if writes {
		m.Lists.warnPlanned(ctx, BlockPath, diags)
		plan.EgressGeneration, plan.EgressOverride = types.Int64Unknown(), types.Int64Null()
		return true
	}
	plan.EgressGeneration, plan.EgressOverride = prior.EgressGeneration, prior.EgressOverride
	return false
}

// SetBornLists puts a born policy into a create request when the create
// can carry it, and reports whether it did. A restore (checkpoint_id)
// cannot, as far as is known: [I] the 2026 contract does not show whether a
// create may carry checkpoint_id and the network lists together, so a
// restored sandbox is created open and locked by EnforceBorn right after
// it is RUNNING, before its create returns.
func SetBornLists(r *prime.CreateSandboxRequest, p *prime.EgressPolicy) bool {
	if p == nil || r.IsRestore() {
		return false
	}
	SetCreateLists(r, p)
	return true
}

// EnforceBorn makes a new, RUNNING sandbox enforce its egress block's
// policy, fail-closed within timeout: the lists the create carried are
// waited for (WaitBorn); lists it could not carry (a restore) are written
// and then waited for through the same wait. gen is the policy's
// generation once known (the create's may be 0), nil before, also on error.
func EnforceBorn(ctx context.Context, c *prime.Client, id string, policy prime.EgressPolicy, sentAtCreate bool, timeout time.Duration) (gen *int64, err error) {
	if sentAtCreate {
		st, err := WaitBorn(ctx, c, id, timeout)
		if st == nil {
			return nil, err
		}
		return &st.Generation, err
	}
	_, written, err := Write(ctx, c, id, policy, timeout, "egress")
	if written == 0 {
		return nil, err // nothing accepted
	}
	return &written, err
}

// WaitBorn waits until the data plane enforces the sandbox's born
// policy, fail-closed within timeout.
func WaitBorn(ctx context.Context, c *prime.Client, id string, timeout time.Duration) (*prime.EgressPolicyStatus, error) {
	st, err := c.GetEgressPolicy(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("reading the born egress policy of sandbox %s: %w", id, err)
	}
	final, err := waitEgress(ctx, c, id, st.Generation, st, timeout, "egress")
	if err != nil {
		return st, err
	}
	return final, nil
}

// PolicyOfBlockState is the policy an egress block in state stands for (open
// without a block) and its generation (0, the untouched policy, without
// one).
func PolicyOfBlockState(ctx context.Context, s BlockState, diags *diag.Diagnostics) (prime.EgressPolicy, int64) {
	own := prime.OpenEgressPolicy()
	if m, d := BlockModelOf(ctx, s.Egress); m != nil && !d.HasError() {
		var pd diag.Diagnostics
		own, pd = m.Policy(ctx)
		diags.Append(pd...)
	}
	ownGen := int64(0)
	if !s.EgressGeneration.IsNull() && !s.EgressGeneration.IsUnknown() {
		ownGen = s.EgressGeneration.ValueInt64()
	}
	return own, ownGen
}

// WriteBlock is an egress block's change on one sandbox (shared with
// the fleet's members): target (the new lists, or open when the block is
// removed) is written and waited for, fail-closed, unless a newer policy
// than the block's own (own, ownGen) holds the sandbox: the sandbox does not
// fight a layered policy, and writing over it would lift it.
func WriteBlock(ctx context.Context, c *prime.Client, id string, target, own prime.EgressPolicy, ownGen int64, timeout time.Duration) (*prime.EgressPolicyStatus, int64, error) {
	st, err := c.GetEgressPolicy(ctx, id)
	if err != nil {
		return nil, 0, fmt.Errorf("reading the egress policy of sandbox %s: %w", id, err)
	}
	if st.Generation > ownGen && !prime.SamePolicy(st.Policy, own) && !prime.SamePolicy(st.Policy, target) {
		return nil, 0, &LayeredPolicyError{SandboxID: id, Holds: st, OwnGen: ownGen}
	}
	return Write(ctx, c, id, target, timeout, "egress")
}

// RefreshBlock merges the platform's policy into a sandbox's egress state
// (see egress_override_generation). It returns a warning when another
// writer's policy with other destinations holds the sandbox.
func RefreshBlock(ctx context.Context, s *BlockState, id string, st *prime.EgressPolicyStatus, diags *diag.Diagnostics) string {
	s.Egress = BlockWithDigest(ctx, s.Egress, diags)
	m, d := BlockModelOf(ctx, s.Egress)
	diags.Append(d...)
	if m == nil {
		return ""
	}
	own, d := m.Policy(ctx)
	diags.Append(d...)
	ownGen := st.Generation
	if !s.EgressGeneration.IsNull() && !s.EgressGeneration.IsUnknown() {
		ownGen = s.EgressGeneration.ValueInt64()
	}
	switch {
	case st.Generation <= ownGen || prime.SamePolicy(st.Policy, own):
		// Our policy (or a restore of it by a layered policy's destroy).
		// A generation of ours can hold other lists: a write that failed
		// closed and was enforced later. Only the block's lists, enforced,
		// count as applied; anything else is written again.
		s.EgressGeneration = types.Int64Value(st.Generation)
		s.EgressOverride = types.Int64Null()
		s.EgressApplied = types.BoolValue(st.AppliedGeneration >= st.Generation && prime.SamePolicy(st.Policy, own))
	default:
		s.EgressOverride = types.Int64Value(st.Generation)
		s.EgressApplied = types.BoolValue(st.AppliedGeneration >= ownGen)
		return fmt.Sprintf("Sandbox %s holds egress policy generation %d (%s), written after its egress block's "+
			"generation %d by another writer (a prime_egress_policy layered on top, or the CLI). The sandbox does not "+
			"fight it; destroying that prime_egress_policy restores the egress block's lists.",
			id, st.Generation, Describe(st.Policy), ownGen)
	}
	return ""
}

// BlockFromImport is the egress block an imported sandbox's platform policy
// reads as: nil when it is open.
func BlockFromImport(ctx context.Context, st *prime.EgressPolicyStatus) (*BlockModel, diag.Diagnostics) {
	if st.Policy.IsOpen() {
		return nil, nil
	}
	var m BlockModel
	m.Allow, m.Block = listsFromPlatform(st.Policy, nil)
	m.Routes = types.ListNull(types.StringType)
	var diags diag.Diagnostics
	m.Effective, diags = effectiveOf(ctx, st.Policy)
	return &m, diags
}

// BlockModelOf reads the block; nil when absent.
func BlockModelOf(ctx context.Context, v types.Object) (*BlockModel, diag.Diagnostics) {
	if v.IsNull() || v.IsUnknown() {
		return nil, nil
	}
	var m BlockModel
	diags := v.As(ctx, &m, objectAsOptions)
	return &m, diags
}

func BlockValue(ctx context.Context, m *BlockModel) (types.Object, diag.Diagnostics) {
	if m == nil {
		return types.ObjectNull(BlockObjectType().AttrTypes), nil
	}
	return types.ObjectValueFrom(ctx, BlockObjectType().AttrTypes, m)
}

// BlockWithDigest is an egress block in state with lists_sha256 filled
// in when it was recorded before that attribute existed (a refresh records
// it, so the next plan stays empty).
func BlockWithDigest(ctx context.Context, v types.Object, diags *diag.Diagnostics) types.Object {
	m, d := BlockModelOf(ctx, v)
	diags.Append(d...)
	if m == nil || !m.ListsSHA256.IsNull() {
		return v
	}
	m.withDigest(ctx)
	out, d := BlockValue(ctx, m)
	diags.Append(d...)
	return out
}

// LayeredPolicyError: an egress block's write was not made because a newer
// policy of another writer holds the sandbox.
type LayeredPolicyError struct {
	SandboxID string
	Holds     *prime.EgressPolicyStatus
	OwnGen    int64
}

func (e *LayeredPolicyError) Error() string {
	return fmt.Sprintf("sandbox %s holds egress policy generation %d (%s), written after its egress block's generation %d "+
		"by another writer (a prime_egress_policy layered on top, or the CLI). Writing the block now would lift that "+
		"policy, so nothing was written. Remove or change that policy first — in the same apply is fine: its destroy "+
		"runs before the sandbox's update — then apply again.",
		e.SandboxID, e.Holds.Generation, Describe(e.Holds.Policy), e.OwnGen)
}

// BlockModel is the egress block.
type BlockModel struct {
	Lists
	Effective
}

// BlockState are the egress attributes of a sandbox's state or
// plan (one sandbox, or one fleet's template and a member's status).
type BlockState struct {
	Egress           types.Object
	EgressGeneration types.Int64
	EgressApplied    types.Bool
	EgressOverride   types.Int64
}
