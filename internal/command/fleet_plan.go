package command

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/memberkit"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

func (r *fleetCommandResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m fleetCommandModel
	resp.Diagnostics.Append(tfkit.GetConfig(ctx, req.Config, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	validateCommandEnv(ctx, m.Env, m.EnvWO, m.EnvWOVersion, &resp.Diagnostics)
	validateMemberEnv(ctx, m, &resp.Diagnostics)
}

// memberKeyEnv is the variable that carries a member's key into its
// steps.
const memberKeyEnv = "PRIME_MEMBER_KEY"

// validateMemberEnv checks member_env's names, that no variable names the
// member key's variable, that env_wo does not name a member variable, and
// that every entry is a member.
func validateMemberEnv(ctx context.Context, m fleetCommandModel, diags *diag.Diagnostics) {
	env, _ := tfkit.StringMap(ctx, m.Env)
	if _, set := env[memberKeyEnv]; set {
		diags.AddAttributeError(path.Root("env"), "Invalid command configuration",
			fmt.Sprintf("env: %s is set by the provider to each member's key", memberKeyEnv))
	}
	secret, _ := tfkit.StringMap(ctx, m.EnvWO)
	if _, set := secret[memberKeyEnv]; set {
		diags.AddAttributeError(path.Root("env_wo"), "Invalid command configuration",
			fmt.Sprintf("env_wo: %s is set by the provider to each member's key", memberKeyEnv))
	}
	if m.MemberEnv.IsNull() || m.MemberEnv.IsUnknown() {
		return
	}
	for _, key := range tfkit.SortedKeys(m.MemberEnv.Elements()) {
		vars, ok := m.MemberEnv.Elements()[key].(types.Map)
		if !ok || vars.IsUnknown() {
			continue
		}
		at := path.Root("member_env").AtMapKey(key)
		for _, name := range tfkit.SortedKeys(vars.Elements()) {
			switch {
			case !prime.ValidEnvName(name):
				diags.AddAttributeError(at, "Invalid command configuration",
					fmt.Sprintf("member_env[%q]: %q is not a valid variable name (letters, digits and _, not starting with a digit)", key, name))
			case name == memberKeyEnv:
				diags.AddAttributeError(at, "Invalid command configuration",
					fmt.Sprintf("member_env[%q]: %s is set by the provider to the member's key", key, memberKeyEnv))
			default:
				if _, dup := secret[name]; dup {
					diags.AddAttributeError(at, "Invalid command configuration",
						fmt.Sprintf("member_env[%q]: %q is also set in env_wo; set each variable in one of them", key, name))
				}
			}
		}
	}
	if strays := memberkit.StrayKeys(m.MemberEnv, m.SandboxIDs); len(strays) > 0 {
		diags.AddAttributeError(path.Root("member_env"), "Invalid command configuration",
			fmt.Sprintf("member_env: %s %s not a key of sandbox_ids", tfkit.QuoteKeys(strays), tfkit.PluralVerb(len(strays), "is", "are")))
	}
}

// memberEnvOf is member key's entry of member_env: null when it has none,
// unknown when it is not known yet.
func memberEnvOf(m fleetCommandModel, key string) types.Map {
	if m.MemberEnv.IsUnknown() {
		return types.MapUnknown(types.StringType)
	}
	if m.MemberEnv.IsNull() {
		return types.MapNull(types.StringType)
	}
	if v, ok := m.MemberEnv.Elements()[key].(types.Map); ok {
		return v
	}
	return types.MapNull(types.StringType)
}

// sameMemberInputs: a member's per-member inputs (member_env and
// member_triggers entries) are unchanged, so its recorded result stands.
func sameMemberInputs(plan, state fleetCommandModel, key string) bool {
	pt := memberkit.TriggerOf(plan.MemberTriggers, key)
	return sameMemberEnv(memberEnvOf(plan, key), memberEnvOf(state, key)) && !pt.IsUnknown() && pt.Equal(memberkit.TriggerOf(state.MemberTriggers, key))
}

// sameMemberEnv: a member's variables are unchanged (an empty entry and
// none are the same).
func sameMemberEnv(a, b types.Map) bool {
	if a.IsUnknown() || b.IsUnknown() {
		return false
	}
	return len(a.Elements()) == 0 && len(b.Elements()) == 0 || a.Equal(b)
}

// ModifyPlan plans results: every member's entry is unknown when it will
// run, else its recorded result with the output where sensitive_output
// wants it.
func (r *fleetCommandResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	var held fleetCommandModel
	if !req.State.Raw.IsNull() && !tfkit.GetState(ctx, req.State, &held).HasError() && held.Background.ValueBool() {
		// Terraform holds these members' results: their journal entries go.
		r.jobs.Forget(recordedStepHashes(ctx, held)...)
	}
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan fleetCommandModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var prior map[string]commandMemberRecord
	priorSensitive := false
	var state fleetCommandModel
	if !req.State.Raw.IsNull() {
		resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
		prior = commandMemberRecordsOf(state, &resp.Diagnostics)
		priorSensitive = state.SensitiveOutput.ValueBool()
	}
	if resp.Diagnostics.HasError() {
		return
	}
	plan.Results = types.MapUnknown(fleetCommandResultType())
	plan.SensitiveStreams = types.MapUnknown(fleetStreamsType())
	if !plan.SensitiveOutput.IsUnknown() && !plan.SensitiveOutput.ValueBool() {
		plan.SensitiveStreams = types.MapNull(fleetStreamsType())
	}
	// Jobs may be left running by a run in the background (or by members an
	// interrupted apply left mid-way, which run in the background again).
	mayLeaveJobs := plan.Background.IsUnknown() || plan.Background.ValueBool() || len(state.RunningJobs.Elements()) > 0
	plan.RunningJobs = types.MapNull(fleetCommandJobType())
	if mayLeaveJobs {
		plan.RunningJobs = types.MapUnknown(fleetCommandJobType())
	}
	// A background create may be interrupted with some members still
	// running: they are then absent from results, so its keys are not
	// promised (an update says why it is interrupted instead).
	backgroundCreate := req.State.Raw.IsNull() && (plan.Background.IsUnknown() || plan.Background.ValueBool())
	if !plan.SandboxIDs.IsUnknown() && !backgroundCreate {
		// Unknown judging arguments: every entry may change at apply.
		undecided := plan.AllowedExitCodes.IsUnknown() || plan.SensitiveOutput.IsUnknown()
		var allowed []int64
		if !undecided {
			resp.Diagnostics.Append(plan.AllowedExitCodes.ElementsAs(ctx, &allowed, false)...)
		}
		planned := map[string]*commandMemberRecord{}
		runs := map[string]string{} // members that will run, with known sandbox IDs
		for key, v := range plan.SandboxIDs.Elements() {
			id, _ := v.(types.String)
			p, had := prior[key]
			if undecided || id.IsUnknown() || !had || !keepFleetResult(p.Result, id.ValueString(), allowed) ||
				!sameMemberInputs(plan, state, key) {
				planned[key] = nil
				if !id.IsUnknown() && !id.IsNull() {
					runs[key] = id.ValueString()
				}
				continue
			}
			moved := movedRecord(p, priorSensitive, plan.SensitiveOutput.ValueBool(), stepOutputOf(plan))
			planned[key] = &moved
		}
		r.setRecords(ctx, &plan, planned, &resp.Diagnostics)
		if len(runs) == 0 && !slices.Contains(slices.Collect(maps.Values(planned)), nil) {
			plan.RunningJobs = types.MapNull(fleetCommandJobType()) // nothing runs
		}
		if !plan.TimeoutSeconds.IsUnknown() {
			warnCommandsOutliveSandboxes(ctx, r.client, runs, time.Duration(plan.TimeoutSeconds.ValueInt64())*time.Second,
				&resp.Diagnostics)
		}
	}
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(tfkit.SetPlan(ctx, &resp.Plan, &plan)...)
}
