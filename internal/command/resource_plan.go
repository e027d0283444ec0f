package command

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/files"
	"github.com/primeintellect/terraform-provider-prime/internal/memberkit"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

// validateCommandEnv checks env and env_wo names, that they do not name
// the same variable twice, and warns about env_wo_version without env_wo.
func validateCommandEnv(ctx context.Context, env, envWO types.Map, envWOVersion types.Int64, diags *diag.Diagnostics) {
	if !envWOVersion.IsNull() && envWO.IsNull() {
		diags.AddAttributeWarning(path.Root("env_wo_version"), "env_wo_version without env_wo",
			"env_wo_version only matters together with env_wo.")
	}
	vars, d := tfkit.StringMap(ctx, env)
	diags.Append(d...)
	secret, d := tfkit.StringMap(ctx, envWO)
	diags.Append(d...)
	for _, m := range []struct {
		attr string
		vars map[string]string
	}{{"env", vars}, {"env_wo", secret}} {
		for name := range m.vars {
			if !prime.ValidEnvName(name) {
				diags.AddAttributeError(path.Root(m.attr), "Invalid command configuration",
					fmt.Sprintf("%s: %q is not a valid variable name (letters, digits and _, not starting with a digit)", m.attr, name))
			}
		}
	}
	for name := range secret {
		if _, dup := vars[name]; dup {
			diags.AddAttributeError(path.Root("env_wo"), "Invalid command configuration",
				fmt.Sprintf("env_wo: %q is also set in env; set each variable in one of them", name))
		}
	}
}

func (r *sandboxCommandResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m sandboxCommandModel
	resp.Diagnostics.Append(tfkit.GetConfig(ctx, req.Config, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	validateCommandEnv(ctx, m.Env, m.EnvWO, m.EnvWOVersion, &resp.Diagnostics)
}

// ModifyPlan plans the output attributes of an in-place update (a change of
// sensitive_output moves the recorded output) and warns when a command may
// outlive its sandbox.
func (r *sandboxCommandResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	var prior sandboxCommandModel
	if !req.State.Raw.IsNull() && !tfkit.GetState(ctx, req.State, &prior).HasError() && prior.JobStatus.ValueString() == jobCompleted {
		// Terraform holds this job's result: its journal entry goes.
		r.jobs.Forget(runHashOf(prior))
	}
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan sandboxCommandModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !req.State.Raw.IsNull() && !plan.ID.IsUnknown() {
		var state sandboxCommandModel
		resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
		plan.recordedOutput = state.moved(state.SensitiveOutput.ValueBool(), plan.SensitiveOutput.ValueBool())
		plan.JobID, plan.JobStatus, plan.OutputFiles = state.JobID, state.JobStatus, state.OutputFiles
		switch state.JobStatus.ValueString() {
		case jobRunning:
			// An interrupted apply left the job running: this update
			// attaches to it and records its result.
			planPendingResult(&plan)
		case jobFailed:
			plan.JobStatus = types.StringUnknown()
			resp.RequiresReplace = append(resp.RequiresReplace, path.Root("job_status"))
		}
		resp.Diagnostics.Append(tfkit.SetPlan(ctx, &resp.Plan, &plan)...)
	} else if !plan.Background.IsUnknown() && !plan.Background.ValueBool() {
		plan.JobID, plan.JobStatus = types.StringNull(), types.StringNull()
		plan.OutputFiles = types.ListNull(files.ArtifactFileType())
		resp.Diagnostics.Append(tfkit.SetPlan(ctx, &resp.Plan, &plan)...)
	}
	r.warnCommandOutlivesSandbox(ctx, plan, &resp.Diagnostics)
}

// planPendingResult plans the result of a job that is still running: known
// only once the update collects it.
func planPendingResult(m *sandboxCommandModel) {
	m.ExitCode, m.ExecutedAt, m.JobStatus = types.Int64Unknown(), types.StringUnknown(), types.StringUnknown()
	m.Stdout, m.Stderr, m.OutputTruncated = types.StringUnknown(), types.StringUnknown(), types.BoolUnknown()
	m.SensitiveStreams = types.ObjectUnknown(streamsType().AttrTypes)
	m.OutputFiles, m.JobID = types.ListUnknown(files.ArtifactFileType()), types.StringUnknown()
	if !m.SensitiveOutput.IsUnknown() {
		if m.SensitiveOutput.ValueBool() {
			m.Stdout, m.Stderr = types.StringNull(), types.StringNull()
		} else {
			m.SensitiveStreams = types.ObjectNull(streamsType().AttrTypes)
		}
	}
}

// warnCommandOutlivesSandbox warns at plan time when a command may run
// longer than its sandbox lives. The sandbox is only known once it exists.
func (r *sandboxCommandResource) warnCommandOutlivesSandbox(ctx context.Context, plan sandboxCommandModel, diags *diag.Diagnostics) {
	if plan.SandboxID.IsUnknown() || plan.TimeoutSeconds.IsUnknown() {
		return
	}
	warnCommandsOutliveSandboxes(ctx, r.client, map[string]string{"": plan.SandboxID.ValueString()},
		time.Duration(plan.TimeoutSeconds.ValueInt64())*time.Second, diags)
}

// warnCommandsOutliveSandboxes gives the plan-time warning about a command's
// timeout for the commands that will run: runs maps a member key ("" for
// prime_sandbox_command) to a sandbox ID. A command (a background job too)
// cannot outlive its sandbox. A sandbox's lifetime comes from what the
// client already knows, or one GET; a sandbox that cannot be read is left
// to the apply to report.
func warnCommandsOutliveSandboxes(ctx context.Context, c *prime.Client, runs map[string]string, timeout time.Duration, diags *diag.Diagnostics) {
	if c == nil || len(runs) == 0 {
		return
	}
	var mu sync.Mutex
	var lifetime []string
	memberkit.ForEachMember(ctx, tfkit.SortedKeys(runs), 0, func(ctx context.Context, key string) {
		id := runs[key]
		known, ok := c.Known(id)
		if !ok {
			if timeout <= time.Minute {
				return // shorter than any lifetime: no read needed
			}
			sb, err := c.GetSandbox(ctx, id)
			if err != nil {
				return
			}
			known = prime.KnownSandbox{TimeoutMinutes: sb.TimeoutMinutes}
		}
		prefix := ""
		if key != "" {
			prefix = fmt.Sprintf("Member %q: ", key)
		}
		mu.Lock()
		defer mu.Unlock()
		if life := time.Duration(known.TimeoutMinutes) * time.Minute; known.TimeoutMinutes > 0 && timeout > life {
			lifetime = append(lifetime, fmt.Sprintf("%sSandbox %s declares a lifetime of %s (timeout_minutes = %d), while "+
				"timeout_seconds allows %s: the platform ends the sandbox, and the command with it, first. Raise the "+
				"sandbox's timeout_minutes (-1: no limit), or lower timeout_seconds.", prefix, id, life, known.TimeoutMinutes, timeout))
		}
	})
	if len(lifetime) > 0 {
		sort.Strings(lifetime)
		diags.AddAttributeWarning(path.Root("timeout_seconds"), "Command may outlive its sandbox", strings.Join(lifetime, "\n\n"))
	}
}
