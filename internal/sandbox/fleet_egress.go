package sandbox

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/egress"
	"github.com/primeintellect/terraform-provider-prime/internal/memberkit"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

// fleetEgressApplied: every member enforces the fleet's egress block.
func fleetEgressApplied(ctx context.Context, f sandboxFleetModel) bool {
	var diags diag.Diagnostics
	for _, m := range sandboxFleetMembers(f, &diags) {
		if !m.EgressApplied.ValueBool() {
			return false
		}
	}
	return !diags.HasError()
}

// refreshMemberEgress reads every member's policy, as prime_sandbox reads
// its own (egress.RefreshBlock), in parallel.
func (r *sandboxFleetResource) refreshMemberEgress(ctx context.Context, members map[string]fleetMember, eg *egress.BlockModel, diags *diag.Diagnostics) {
	egressObj, d := egress.BlockValue(ctx, eg)
	diags.Append(d...)
	var mu sync.Mutex
	var warnings []string
	var failures memberkit.Problems
	memberkit.ForEachMember(ctx, tfkit.SortedKeys(members), 0, func(ctx context.Context, k string) {
		mu.Lock()
		m := members[k]
		mu.Unlock()
		st, gone, err := egress.ReadStatus(ctx, r.client, m.ID.ValueString())
		if err != nil {
			failures.Add(k, "%v", err)
			return
		}
		if gone {
			return
		}
		es := &egress.BlockState{Egress: egressObj, EgressGeneration: m.EgressGeneration, EgressApplied: m.EgressApplied}
		var local diag.Diagnostics
		w := egress.RefreshBlock(ctx, es, m.ID.ValueString(), st, &local)
		mu.Lock()
		defer mu.Unlock()
		diags.Append(local...)
		if w != "" {
			warnings = append(warnings, w)
		}
		m.EgressGeneration, m.EgressApplied = es.EgressGeneration, es.EgressApplied
		members[k] = m
	})
	if failures.Len() > 0 {
		diags.AddError("Cannot read the members' egress policies", failures.String())
	}
	if len(warnings) > 0 {
		sort.Strings(warnings)
		diags.AddWarning("Egress block overridden on members", strings.Join(warnings, "\n\n"))
	}
}

// egressChanged: the apply writes the members' egress policy (new lists,
// removal, or members not enforcing the current ones).
func egressChanged(ctx context.Context, plan, state sandboxFleetModel) bool {
	if plan.Egress.IsNull() != state.Egress.IsNull() {
		return true
	}
	if plan.Egress.IsNull() {
		return false
	}
	var diags diag.Diagnostics
	pm, _ := egress.BlockModelOf(ctx, plan.Egress)
	sm, _ := egress.BlockModelOf(ctx, state.Egress)
	want, _ := pm.Lists.Planned(ctx)
	was, _ := egress.PolicyOfEffective(ctx, sm.EffectiveAllow, sm.EffectiveBlock)
	return want == nil || !prime.SamePolicy(was, *want) || !fleetEgressApplied(ctx, state) || diags.HasError()
}

// rewriteMemberEgress writes the fleet's egress policy (or an open one when
// the block is gone) to every member, fail-closed, in parallel, as
// prime_sandbox writes its own (egress.WriteBlock: own is the block's
// previous policy). It reports whether a layered policy refused a member.
func (r *sandboxFleetResource) rewriteMemberEgress(ctx context.Context, members map[string]fleetMember, a fleetApply, own prime.EgressPolicy, problems *memberkit.Problems) (refused bool) {
	target := prime.OpenEgressPolicy()
	if a.born != nil {
		target = *a.born
	}
	var mu sync.Mutex
	memberkit.ForEachMember(ctx, tfkit.SortedKeys(members), 0, func(ctx context.Context, k string) {
		mu.Lock()
		m := members[k]
		mu.Unlock()
		id := m.ID.ValueString()
		_, ownGen := egress.PolicyOfBlockState(ctx, egress.BlockState{EgressGeneration: m.EgressGeneration}, &diag.Diagnostics{})
		st, gen, err := egress.WriteBlock(ctx, r.client, id, target, own, ownGen, a.egressTimeout)
		mu.Lock()
		defer mu.Unlock()
		var layered *egress.LayeredPolicyError
		switch {
		case errors.As(err, &layered):
			problems.Add(k, "%s", err.Error())
			members[k] = m
			refused = true
			return
		case err != nil:
			problems.Add(k, "%s", egress.FailClosedMessage(id, a.egressTimeout, "egress", err))
			if a.born != nil && gen > 0 {
				m.EgressGeneration, m.EgressApplied = types.Int64Value(gen), types.BoolValue(false)
			}
			members[k] = m
			return
		}
		if a.born != nil {
			m.EgressGeneration, m.EgressApplied = types.Int64Value(gen), types.BoolValue(st.Enforces(gen))
		} else {
			m.EgressGeneration, m.EgressApplied = types.Int64Null(), types.BoolNull()
		}
		members[k] = m
	})
	return refused
}
