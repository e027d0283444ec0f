package egress

// A fleet policy's members: their entries in state, what concurrent member
// work produced (policyOutcomes), and their baselines in private state.
//
// The `members` map is converted by hand, not with the framework's
// reflection, which compiles a regular expression for every struct field
// it visits (about 10 000 for a 1000-member fleet's refresh).

import (
	"encoding/json"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/memberkit"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

// fleetPolicyMember is one entry of members.
type fleetPolicyMember struct {
	SandboxID  types.String `tfsdk:"sandbox_id"`
	Generation types.Int64  `tfsdk:"generation"`
	Applied    types.Bool   `tfsdk:"applied"`
}

// policyMemberOf is the entry of an enforced write.
func policyMemberOf(id string, gen int64) fleetPolicyMember {
	return fleetPolicyMember{SandboxID: types.StringValue(id), Generation: types.Int64Value(gen), Applied: types.BoolValue(true)}
}

// fleetMembersOf reads members; nil when null or unknown.
func fleetMembersOf(v types.Map, diags *diag.Diagnostics) map[string]fleetPolicyMember {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	return fleetPolicyMembersOfMap(v, diags)
}

var fleetPolicyMemberAttrTypes = map[string]attr.Type{
	"sandbox_id": types.StringType, "generation": types.Int64Type, "applied": types.BoolType,
}

func fleetPolicyMemberType() types.ObjectType {
	return types.ObjectType{AttrTypes: fleetPolicyMemberAttrTypes}
}

// object is p as an entry of `members`.
func (p fleetPolicyMember) object() types.Object {
	return types.ObjectValueMust(fleetPolicyMemberAttrTypes, map[string]attr.Value{
		"sandbox_id": p.SandboxID, "generation": p.Generation, "applied": p.Applied,
	})
}

// fleetPolicyMembersValue is the `members` map of a fleet policy.
func fleetPolicyMembersValue(members map[string]fleetPolicyMember) types.Map {
	elems := make(map[string]attr.Value, len(members))
	for k, p := range members {
		elems[k] = p.object()
	}
	return types.MapValueMust(fleetPolicyMemberType(), elems)
}

// fleetPolicyMembersOfMap reads a `members` map.
func fleetPolicyMembersOfMap(v types.Map, diags *diag.Diagnostics) map[string]fleetPolicyMember {
	return memberkit.MembersOfMap(v, diags, func(_ string, a map[string]attr.Value) fleetPolicyMember {
		return fleetPolicyMember{
			SandboxID: tfkit.StringAttr(a, "sandbox_id"), Generation: tfkit.Int64Attr(a, "generation"),
			Applied: tfkit.BoolAttr(a, "applied"),
		}
	})
}

// Baselines, per member, travel in private state under baselineKey as one
// JSON object: member key → what encodeBaseline writes. An open baseline,
// what nearly every member holds, is left out (a member without one
// restores open): at 68 bytes a member it was a tenth of a fleet's state.
func encodeMemberBaselines(m map[string]prime.EgressPolicy) []byte {
	raw := make(map[string]json.RawMessage, len(m))
	for k, p := range m {
		if p.IsOpen() {
			continue
		}
		raw[k] = encodeBaseline(p)
	}
	b, _ := json.Marshal(raw)
	return b
}

// memberBaselines are the baselines of a fleet policy's members.
type memberBaselines map[string]prime.EgressPolicy

// of is the baseline of member key: open when none is recorded.
func (b memberBaselines) of(key string) prime.EgressPolicy {
	if p, ok := b[key]; ok {
		return p
	}
	return prime.OpenEgressPolicy()
}

// decodeMemberBaselines reads them back (decodeBaseline).
func decodeMemberBaselines(b []byte) memberBaselines {
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(b, &raw)
	out := make(memberBaselines, len(raw))
	for k, v := range raw {
		out[k] = decodeBaseline(v)
	}
	return out
}

// policyOutcomes gathers what concurrent member work produced.
type policyOutcomes struct {
	mu        sync.Mutex
	members   map[string]fleetPolicyMember
	baselines map[string]prime.EgressPolicy
	restores  []restoreNote
	// rewrites: a member already held was written again (a new ID).
	rewrites bool
}

// set records a member.
func (o *policyOutcomes) set(key string, m fleetPolicyMember) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.members[key] = m
}

// keep records a member and the baseline its destroy restores.
func (o *policyOutcomes) keep(key string, m fleetPolicyMember, baseline prime.EgressPolicy) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.members[key] = m
	o.baselines[key] = baseline
}

// noteRestore records what a member's restore left, for the warnings.
func (o *policyOutcomes) noteRestore(key, sandboxID string, res restoreResult) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.restores = append(o.restores, restoreNote{Key: key, SandboxID: sandboxID, restoreResult: res})
}

// rewrote records that a member already held is written again.
func (o *policyOutcomes) rewrote() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.rewrites = true
}

// addWarnings reports what the restores left, one warning for the fleet
// per kind (addRestoreWarnings).
func (o *policyOutcomes) addWarnings(diags *diag.Diagnostics) {
	addRestoreWarnings(diags, o.restores)
}
