package sandbox

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/egress"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
	"github.com/primeintellect/terraform-provider-prime/internal/volume"
)

// sandboxRuleAttribute maps a create-rule field to the attribute that sets
// it.
func sandboxRuleAttribute(field string, m sandboxTemplate) string {
	switch field {
	case "start_command":
		return "start_argv"
	case "secrets":
		if m.Secrets.IsNull() && !m.SecretsWO.IsNull() {
			return "secrets_wo"
		}
	case "network_allowlist", "network_denylist":
		return "egress"
	}
	return field
}

// validateSandbox checks one sandbox's arguments at plan time: the
// platform's create rules (prime.CreateRules, the same code the client runs
// before sending), the egress block's lists, and what the provider adds.
// prime_sandbox and prime_sandbox_fleet's template share it. (The name is
// checked by its own validator.)
func validateSandbox(ctx context.Context, m sandboxTemplate, diags *diag.Diagnostics) {
	secretsWO, d := tfkit.StringMap(ctx, m.SecretsWO)
	diags.Append(d...)
	createReq, unknown, d := createRequest(ctx, types.StringUnknown(), m, secretsWO)
	diags.Append(d...)
	if m.SecretsWO.IsUnknown() {
		unknown["secrets"] = true
	}
	if m.StartArgv.IsUnknown() {
		unknown["start_command"] = true
	}
	// Name, image and restore_memory are checked by their own validators
	// and restoreInputProblems; volumes by internal/volume's attachment
	// check (the same rules, at the attribute).
	unknown["name"], unknown["docker_image"], unknown["restore_memory"], unknown["volumes"] = true, true, true, true
	// A checkpoint_id not known yet is still set: the rules that only need
	// it set (no disk_size_gb with it) apply now.
	delete(unknown, "checkpoint_id")
	for _, p := range restoreInputProblems(m) {
		diags.AddAttributeError(path.Root(p[0]), "Invalid sandbox configuration", p[1])
	}
	volume.ValidateAttachments(path.Root("volumes"), m.Volumes, diags)

	// The egress block's entries are checked by the composition below; the
	// create rules only need to know that lists are sent.
	if eg, d := egress.BlockModelOf(ctx, m.Egress); eg != nil && !d.HasError() {
		eg.Lists.Validate(ctx, egress.BlockPath, diags)
		switch {
		case !eg.Allow.IsNull():
			createReq.NetworkAllowlist = &[]string{}
		case !eg.Block.IsNull():
			createReq.NetworkDenylist = &[]string{}
		}
	}

	if !unknown["labels"] {
		for _, l := range createReq.Labels {
			if strings.HasPrefix(l, ReservedLabelPrefix) {
				diags.AddAttributeError(path.Root("labels"), "Invalid sandbox configuration", fmt.Sprintf("labels: %q starts "+
					"with %q, which the provider reserves for the labels it adds itself (to find what a lost apply created).",
					l, ReservedLabelPrefix))
			}
		}
	}
	retiredSandboxAttributes(m, diags)
	for _, v := range prime.CreateRules(createReq) {
		if anyUnknown(unknown, v.Inputs) {
			continue
		}
		attrName := sandboxRuleAttribute(v.Field, m)
		diags.AddAttributeError(path.Root(attrName), "Invalid sandbox configuration",
			fmt.Sprintf("%s: %s", attrName, v.Message))
	}

	if !m.SecretsWOVersion.IsNull() && m.SecretsWO.IsNull() {
		diags.AddAttributeWarning(path.Root("secrets_wo_version"), "secrets_wo_version without secrets_wo",
			"secrets_wo_version only matters together with secrets_wo.")
	}
}

func (r *sandboxResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m sandboxModel
	resp.Diagnostics.Append(tfkit.GetConfig(ctx, req.Config, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	validateSandbox(ctx, m.template(), &resp.Diagnostics)
}

// ModifyPlan plans the egress attributes (composed lists, a write and its
// generation), says when removing the egress block reopens egress, and
// explains the first plan after an import.
func (r *sandboxResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if id := tfkit.HeldID(ctx, req.State); id != "" {
		// Terraform holds this sandbox: its create-journal entry goes.
		r.journal.Forget(id)
	}
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan sandboxModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var prior *egress.BlockState
	var state sandboxModel
	if !req.State.Raw.IsNull() {
		resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
		prior = state.egressState()
	}
	es := plan.egressState()
	writes := egress.PlanBlock(ctx, es, prior, &resp.Diagnostics)
	plan.setEgressState(es)
	ended := prior != nil && prime.IsTerminalStatus(state.Status.ValueString())
	retired := ended && keepsRetired(ctx, req.Private, plan)
	if ended && !retired {
		// Kept in state only for the pause checkpoints left to delete (see
		// Read): the replacement's destroy deletes them.
		replaceEnded(&plan, resp)
	}
	if act, paused := pauseChange(plan.Paused, state.Paused, prior == nil); act && prior != nil && len(resp.RequiresReplace) == 0 {
		plan.Status = types.StringValue(pausedStatus(paused))
	}
	resp.Diagnostics.Append(tfkit.SetPlan(ctx, &resp.Plan, &plan)...)
	if retired && !resp.Plan.Raw.Equal(req.State.Raw) {
		// A retired template has no sandbox left to change in place (an
		// egress write, a pause): any change makes a new one.
		replaceEnded(&plan, resp)
		resp.Diagnostics.Append(tfkit.SetPlan(ctx, &resp.Plan, &plan)...)
	}
	if resp.Diagnostics.HasError() || prior == nil {
		return
	}
	if writes && plan.Egress.IsNull() {
		resp.Diagnostics.AddAttributeWarning(egress.BlockPath, "Removing egress reopens the sandbox",
			fmt.Sprintf("The egress block of sandbox %s is removed: this apply writes an unrestricted egress policy "+
				"to it (in place) and waits until it is enforced.", state.ID.ValueString()))
	}
	if tfkit.WasImported(ctx, req.Private) {
		warnRecordedAfterImport(plan.sandboxInputs, state.sandboxInputs, &resp.Diagnostics)
	}
}

// replaceEnded plans the replacement of a sandbox that has ended. Terraform
// replaces only for a path whose value changes, so the status is planned
// unknown (a new sandbox's).
func replaceEnded(plan *sandboxModel, resp *resource.ModifyPlanResponse) {
	plan.Status = types.StringUnknown()
	resp.RequiresReplace = append(resp.RequiresReplace, path.Root("status"))
}

// warnRecordedAfterImport explains the first plan after an import: settings
// the platform cannot report are recorded from the configuration, not
// applied. prime_sandbox and prime_sandbox_fleet's template share it.
func warnRecordedAfterImport(plan, state sandboxInputs, diags *diag.Diagnostics) {
	var recorded []string
	for _, a := range []struct {
		name        string
		plan, state attr.Value
	}{
		{"secrets", plan.Secrets, state.Secrets},
		{"secrets_wo_version", plan.SecretsWOVersion, state.SecretsWOVersion},
	} {
		if !a.plan.Equal(a.state) {
			recorded = append(recorded, a.name)
		}
	}
	// The restore arguments, when the platform did not report the
	// checkpoint (adoptsRestore); one it reported is compared, and replaces.
	if state.CheckpointID.IsNull() && !plan.CheckpointID.IsNull() && !plan.CheckpointID.IsUnknown() {
		recorded = append(recorded, "checkpoint_id")
		if !plan.RestoreMemory.Equal(state.RestoreMemory) {
			recorded = append(recorded, "restore_memory")
		}
	}
	if len(recorded) > 0 {
		diags.AddWarning("Imported sandbox: recording settings the platform cannot report",
			fmt.Sprintf("The platform does not report %s of an existing sandbox, and no apply has recorded them "+
				"since the import, so the state has none. This apply records the configured values in state without "+
				"replacing anything and without sending them; the sandbox keeps whatever it was created with. To "+
				"apply them for real, replace it (terraform apply -replace=...). From this apply on, changing them "+
				"replaces it.", strings.Join(recorded, ", ")))
	}
}

func anyUnknown(unknown map[string]bool, fields []string) bool {
	for _, f := range fields {
		if unknown[f] {
			return true
		}
	}
	return false
}
