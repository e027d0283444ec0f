package sandbox

// retire_after_checkpoint: a template sandbox that a checkpoint ends by
// design (prime_sandbox_checkpoint's source_after = "delete") once the
// checkpoint is DURABLE, which outlives it. Without this, the refresh after
// that apply would find the template gone and plan a new one: a new setup,
// a new checkpoint, every member restored again, on every apply. With it,
// a sandbox found ended while a DURABLE checkpoint of it exists is retired:
// it stays in state (its terminal status recorded), nothing is planned for
// it, and what lived in it (uploaded files) is history, not drift. A change
// of an argument that replaces it (a new setup, through the module's
// replace_triggered_by) makes a new template as usual. Found ended with no
// DURABLE checkpoint of it (the checkpoint was deleted out of band, or never
// became DURABLE), it is gone like any other sandbox: the next apply makes
// a new one, and what depends on it runs again.

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

// retiredKey is the private-state key of a retired sandbox: the ID of the
// DURABLE checkpoint its refresh found (a JSON string).
const retiredKey = "retired_by_checkpoint"

func retireAfterCheckpointAttribute() schema.BoolAttribute {
	return schema.BoolAttribute{
		Optional: true,
		MarkdownDescription: "For a template that `prime_sandbox_checkpoint` ends once its checkpoint is `DURABLE` " +
			"(`source_after = \"delete\"`: a checkpoint outlives its sandbox, so the template need not stay billed). " +
			"`true`: a refresh that finds this sandbox ended (deleted, or its lifetime over) while a `DURABLE` " +
			"checkpoint of it exists keeps it in state as retired, with its terminal `status`, and plans nothing for " +
			"it (nor for the files uploaded to it): the plan stays empty, and only a change that replaces it (a new " +
			"setup) makes a new one. Found ended with no `DURABLE` checkpoint of it (the checkpoint was deleted out " +
			"of band), it is removed from state as any ended sandbox is, so the next apply makes a new template, " +
			"runs what depends on it again and takes a new checkpoint. Unset or `false` (the default): a sandbox found " +
			"ended is always removed from state and created again. Changing it never replaces the sandbox.",
	}
}

// retiredByCheckpoint is the DURABLE checkpoint that retires an ended
// sandbox: "" when retire_after_checkpoint is not set, or no checkpoint of
// it is DURABLE (one still uploading was lost with it).
func retiredByCheckpoint(ctx context.Context, c *prime.Client, state sandboxModel) (string, error) {
	if !state.RetireAfterCheckpoint.ValueBool() {
		return "", nil
	}
	cks, err := c.ListCheckpoints(ctx, prime.ListCheckpointsOptions{SandboxID: state.ID.ValueString()})
	if err != nil {
		return "", fmt.Errorf("listing the checkpoints of sandbox %s (retire_after_checkpoint): %w", state.ID.ValueString(), err)
	}
	for _, ck := range cks {
		if ck.State == prime.CheckpointDurable {
			return ck.ID, nil
		}
	}
	return "", nil
}

// markRetired records a retired sandbox: its terminal status in state, the
// checkpoint in private state (ModifyPlan then plans no replacement), and
// in the client, for the refresh of what lived in it.
func markRetired(ctx context.Context, c *prime.Client, state *sandboxModel, status, checkpointID string, private tfkit.PrivateSetter) diag.Diagnostics {
	tflog.Info(ctx, "sandbox retired after its checkpoint; kept in state", map[string]any{
		"sandbox_id": state.ID.ValueString(), "status": status, "checkpoint_id": checkpointID,
	})
	c.MarkRetired(state.ID.ValueString())
	state.Status = types.StringValue(status)
	raw, _ := json.Marshal(checkpointID)
	return private.SetKey(ctx, retiredKey, raw)
}

// keepsRetired reports whether a plan keeps a retired sandbox as it is: its
// refresh found it retired, and the configuration still asks for that.
func keepsRetired(ctx context.Context, private tfkit.PrivateGetter, plan sandboxModel) bool {
	if private == nil || !plan.RetireAfterCheckpoint.ValueBool() {
		return false
	}
	raw, diags := private.GetKey(ctx, retiredKey)
	return !diags.HasError() && len(raw) > 0
}
