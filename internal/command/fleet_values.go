package command

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/memberkit"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

// Per-member values of the fleet resources are converted by hand, not with
// the framework's reflection (ObjectValueFrom, MapValueFrom, ElementsAs):
// reflection compiles a regular expression for every struct field it
// visits, so a 1000-member fleet paid for about 10 000 compilations on
// every refresh, plan and apply.

var (
	fleetCommandStepAttrTypes = map[string]attr.Type{
		"exit_code": types.Int64Type, "stdout": types.StringType, "stderr": types.StringType, "output_truncated": types.BoolType,
	}
	fleetCommandResultAttrTypes = map[string]attr.Type{
		"sandbox_id": types.StringType, "exit_code": types.Int64Type,
		"steps": types.ListType{ElemType: fleetCommandStepType()}, "executed_at": types.StringType,
		"run_id": types.StringType, "failed": types.BoolType, "error": types.StringType,
	}
	fleetCommandJobAttrTypes = map[string]attr.Type{
		"sandbox_id": types.StringType, "step": types.Int64Type, "job_id": types.StringType,
	}
)

func fleetCommandStepType() types.ObjectType {
	return types.ObjectType{AttrTypes: fleetCommandStepAttrTypes}
}

func fleetCommandResultType() types.ObjectType {
	return types.ObjectType{AttrTypes: fleetCommandResultAttrTypes}
}

// object is r as an entry of a fleet command's `results`.
func (r fleetCommandResult) object() types.Object {
	steps := make([]attr.Value, len(r.Steps))
	for i, st := range r.Steps {
		steps[i] = types.ObjectValueMust(fleetCommandStepAttrTypes, map[string]attr.Value{
			"exit_code": st.ExitCode, "stdout": st.Stdout, "stderr": st.Stderr, "output_truncated": st.OutputTruncated,
		})
	}
	return types.ObjectValueMust(fleetCommandResultAttrTypes, map[string]attr.Value{
		"sandbox_id": r.SandboxID, "exit_code": r.ExitCode,
		"steps": types.ListValueMust(fleetCommandStepType(), steps), "executed_at": r.ExecutedAt,
		"run_id": r.RunID, "failed": r.Failed, "error": r.Error,
	})
}

func fleetCommandJobType() types.ObjectType {
	return types.ObjectType{AttrTypes: fleetCommandJobAttrTypes}
}

// fleetCommandJobsValue is a fleet command's `running_jobs`: null when no
// member's job was left running.
func fleetCommandJobsValue(pending map[string]memberProgress) types.Map {
	if len(pending) == 0 {
		return types.MapNull(fleetCommandJobType())
	}
	elems := make(map[string]attr.Value, len(pending))
	for k, p := range pending {
		elems[k] = types.ObjectValueMust(fleetCommandJobAttrTypes, map[string]attr.Value{
			"sandbox_id": types.StringValue(p.SandboxID), "step": types.Int64Value(int64(p.Step + 1)),
			"job_id": types.StringValue(p.Job.JobID),
		})
	}
	return types.MapValueMust(fleetCommandJobType(), elems)
}

// fleetCommandResultsOfMap reads a fleet command's `results`.
func fleetCommandResultsOfMap(v types.Map, diags *diag.Diagnostics) map[string]fleetCommandResult {
	return memberkit.MembersOfMap(v, diags, func(k string, a map[string]attr.Value) fleetCommandResult {
		r := fleetCommandResult{SandboxID: tfkit.StringAttr(a, "sandbox_id"), ExitCode: tfkit.Int64Attr(a, "exit_code"),
			ExecutedAt: tfkit.StringAttr(a, "executed_at"), RunID: tfkit.StringAttr(a, "run_id"), Failed: tfkit.BoolAttr(a, "failed"),
			Error: tfkit.StringAttr(a, "error")}
		for i, s := range tfkit.ObjectsOf(a["steps"]) {
			if sa, ok := memberkit.MemberAttrs(fmt.Sprintf("%s, step %d", k, i+1), s, diags); ok {
				r.Steps = append(r.Steps, fleetCommandStep{ExitCode: tfkit.Int64Attr(sa, "exit_code"), Stdout: tfkit.StringAttr(sa, "stdout"),
					Stderr: tfkit.StringAttr(sa, "stderr"), OutputTruncated: tfkit.BoolAttr(sa, "output_truncated")})
			}
		}
		return r
	})
}
