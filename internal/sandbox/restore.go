package sandbox

// Restoring a sandbox from a checkpoint: the checkpoint_id and
// restore_memory arguments, their plan rules, and the resource
// attributes a restore takes from the checkpoint instead of the
// configuration. prime_sandbox and a fleet's template share all of it.

import (
	"context"
	"fmt"
	"net/http"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

// restoreInputProblems are the rules of the restore arguments at plan
// time: exactly one of docker_image and checkpoint_id (the provider's own),
// and restore_memory only with a checkpoint (prime.RestoreMemoryProblem,
// the create rule, which validateSandbox leaves to this function so that
// the plan says it once). An unknown checkpoint_id counts as set (one that comes from a
// prime_sandbox_checkpoint is unknown until it exists); an unknown
// docker_image is judged at apply by the client's create rules, because
// terraform validate sees a module's variables as unknown and an image
// chosen by one may turn out null. It returns (attribute, message) pairs.
func restoreInputProblems(m sandboxTemplate) [][2]string {
	var out [][2]string
	image, checkpoint := !m.DockerImage.IsNull(), !m.CheckpointID.IsNull()
	imageKnown := !m.DockerImage.IsUnknown()
	switch {
	case !imageKnown:
	case image && checkpoint:
		out = append(out, [2]string{"checkpoint_id", "docker_image and checkpoint_id are both set: set exactly one " +
			"(docker_image boots an image; checkpoint_id restores a DURABLE checkpoint, which brings its own image)"})
	case !image && !checkpoint:
		out = append(out, [2]string{"docker_image", "neither docker_image nor checkpoint_id is set: set exactly one " +
			"(docker_image boots an image; checkpoint_id restores a DURABLE checkpoint, which brings its own image)"})
	}
	if why := prime.RestoreMemoryProblem(!m.RestoreMemory.IsNull(), checkpoint); why != "" {
		out = append(out, [2]string{"restore_memory", "restore_memory " + why})
	}
	return out
}

// restoreArgs are the restore arguments of a configuration or state.
type restoreArgs struct {
	CheckpointID  types.String
	RestoreMemory types.Bool
}

func restoreArgsOf(ctx context.Context, get func(context.Context, path.Path, any) diag.Diagnostics) (restoreArgs, diag.Diagnostics) {
	var a restoreArgs
	var diags diag.Diagnostics
	diags.Append(get(ctx, path.Root("checkpoint_id"), &a.CheckpointID)...)
	diags.Append(get(ctx, path.Root("restore_memory"), &a.RestoreMemory)...)
	return a, diags
}

// checkpoint: restores a checkpoint (checkpoint_id set, or unknown until
// the checkpoint exists); memory: with its memory too.
func (a restoreArgs) checkpoint() bool { return !a.CheckpointID.IsNull() }
func (a restoreArgs) memory() bool {
	return a.checkpoint() && (a.RestoreMemory.IsUnknown() || a.RestoreMemory.ValueBool())
}

// adoptsRestore reports the first plan after an import whose configuration
// restores a checkpoint (a known checkpoint_id) while the state has none:
// the platform did not report the checkpoint the sandbox was restored from,
// so nothing contradicts the configuration, and that plan records
// checkpoint_id and restore_memory (and the null docker_image of a
// restore) in place, as tfkit.ReplaceUnlessImported* do for secrets,
// instead of replacing what was just imported. When the platform does
// report the checkpoint (Read records it, applySandboxResource), the state
// has it, and a configuration naming another one replaces as usual.
func adoptsRestore(ctx context.Context, private tfkit.PrivateGetter, config tfsdk.Config, state tfsdk.State) bool {
	if state.Raw.IsNull() || !tfkit.WasImported(ctx, private) {
		return false
	}
	want, d := restoreArgsOf(ctx, config.GetAttribute)
	if d.HasError() || want.CheckpointID.IsNull() || want.CheckpointID.IsUnknown() {
		return false
	}
	had, d := restoreArgsOf(ctx, state.GetAttribute)
	return !d.HasError() && had.CheckpointID.IsNull()
}

const adoptedAfterImportDesc = "Changing it replaces the sandbox, except on the first apply after an import: the " +
	"platform does not report the checkpoint a sandbox was restored from, so that apply records a configured " +
	"checkpoint_id and restore_memory (and a null docker_image) without replacing (the plan warns)."

// replaceUnlessRestoreAdoptedString and replaceUnlessRestoreAdoptedBool
// are RequiresReplace for docker_image, checkpoint_id and restore_memory,
// except when adoptsRestore.
func replaceUnlessRestoreAdoptedString() planmodifier.String {
	return stringplanmodifier.RequiresReplaceIf(func(ctx context.Context, req planmodifier.StringRequest, resp *stringplanmodifier.RequiresReplaceIfFuncResponse) {
		resp.RequiresReplace = !adoptsRestore(ctx, req.Private, req.Config, req.State)
	}, adoptedAfterImportDesc, adoptedAfterImportDesc)
}

func replaceUnlessRestoreAdoptedBool() planmodifier.Bool {
	return boolplanmodifier.RequiresReplaceIf(func(ctx context.Context, req planmodifier.BoolRequest, resp *boolplanmodifier.RequiresReplaceIfFuncResponse) {
		resp.RequiresReplace = !adoptsRestore(ctx, req.Private, req.Config, req.State)
	}, adoptedAfterImportDesc, adoptedAfterImportDesc)
}

// takenFromCheckpoint plans an unset sizing argument that a restore takes
// from the checkpoint (disk_size_gb; cpu_cores and memory_gb too when
// restore_memory keeps the paused shape): the SDK default before it in the
// chain does not apply, since nothing is sent. On create the value is
// unknown until the platform reports it; afterwards it keeps the state's.
type takenFromCheckpoint struct {
	// memoryOnly: only a memory restore takes it (cpu_cores, memory_gb).
	memoryOnly bool
}

func (m takenFromCheckpoint) Description(context.Context) string {
	if m.memoryOnly {
		return "With restore_memory: the paused shape's value, read back."
	}
	return "With checkpoint_id: the checkpoint's value, read back."
}

func (m takenFromCheckpoint) MarkdownDescription(ctx context.Context) string {
	return m.Description(ctx)
}

// planned says whether the value is unknown (a new restore) or the
// state's (the same restore as before); neither keeps what the chain
// planned.
func (m takenFromCheckpoint) planned(ctx context.Context, private tfkit.PrivateGetter, config tfsdk.Config, configValue attr.Value, state tfsdk.State, diags *diag.Diagnostics) (unknown, keepState bool) {
	if !configValue.IsNull() {
		return false, false
	}
	want, d := restoreArgsOf(ctx, config.GetAttribute)
	diags.Append(d...)
	if !want.checkpoint() || (m.memoryOnly && !want.memory()) {
		return false, false
	}
	if state.Raw.IsNull() {
		return true, false
	}
	if adoptsRestore(ctx, private, config, state) {
		return false, true // the imported sandbox's value, as the platform reports it
	}
	had, d := restoreArgsOf(ctx, state.GetAttribute)
	diags.Append(d...)
	if want.CheckpointID.IsUnknown() || !want.CheckpointID.Equal(had.CheckpointID) || want.memory() != had.memory() {
		return true, false // a new restore replaces the sandbox
	}
	return false, true
}

func (m takenFromCheckpoint) PlanModifyFloat64(ctx context.Context, req planmodifier.Float64Request, resp *planmodifier.Float64Response) {
	unknown, keep := m.planned(ctx, req.Private, req.Config, req.ConfigValue, req.State, &resp.Diagnostics)
	switch {
	case unknown:
		resp.PlanValue = types.Float64Unknown()
	case keep:
		resp.PlanValue = req.StateValue
	}
}

func (m takenFromCheckpoint) PlanModifyInt64(ctx context.Context, req planmodifier.Int64Request, resp *planmodifier.Int64Response) {
	unknown, keep := m.planned(ctx, req.Private, req.Config, req.ConfigValue, req.State, &resp.Diagnostics)
	switch {
	case unknown:
		resp.PlanValue = types.Int64Unknown()
	case keep:
		resp.PlanValue = req.StateValue
	}
}

// restoreRefusal explains a create the platform refused because of the
// restore: a 409 to a memory restore means the checkpoint has no memory
// (only a pause takes one). Other errors are returned as they are.
func restoreRefusal(req prime.CreateSandboxRequest, err error) error {
	if err == nil || req.RestoreMemory == nil || !*req.RestoreMemory || prime.StatusCodeOf(err) != http.StatusConflict {
		return err
	}
	return fmt.Errorf("%w; restore_memory = true needs a checkpoint that holds memory, which only a pause takes "+
		"(an API checkpoint such as prime_sandbox_checkpoint holds files only): restore checkpoint %s without "+
		"restore_memory, or restore a pause checkpoint", err, *req.CheckpointID)
}
