package sandbox

import (
	"context"
	"math"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/egress"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
	"github.com/primeintellect/terraform-provider-prime/internal/volume"
)

// sandboxSpec is what a sandbox is created from and the platform reports
// back: prime_sandbox, each of its data sources and a fleet's template
// declare it once, by embedding it.
type sandboxSpec struct {
	DockerImage        types.String  `tfsdk:"docker_image"`
	VM                 types.Bool    `tfsdk:"vm"`
	StartArgv          types.List    `tfsdk:"start_argv"`
	Arch               types.String  `tfsdk:"arch"`
	CPUCores           wholeNumber   `tfsdk:"cpu_cores"`
	MemoryGB           types.Float64 `tfsdk:"memory_gb"`
	DiskSizeGB         types.Float64 `tfsdk:"disk_size_gb"`
	GPUCount           types.Int64   `tfsdk:"gpu_count"`
	GPUType            types.String  `tfsdk:"gpu_type"`
	TimeoutMinutes     types.Int64   `tfsdk:"timeout_minutes"`
	IdleTimeoutMinutes types.Int64   `tfsdk:"idle_timeout_minutes"`
	EnvironmentVars    types.Map     `tfsdk:"environment_vars"`
	Labels             types.Set     `tfsdk:"labels"`
	TeamID             types.String  `tfsdk:"team_id"`
	Region             types.String  `tfsdk:"region"`
}

// sandboxInputs are the create arguments only the configuration knows (the
// platform does not report them): prime_sandbox and a fleet's template
// embed them. StartCommand, Guaranteed and RegistryCredentialsID are retired
// (retired.go): refused when set, never sent, always null in state.
type sandboxInputs struct {
	StartCommand          types.String `tfsdk:"start_command"`
	Guaranteed            types.Bool   `tfsdk:"guaranteed"`
	RegistryCredentialsID types.String `tfsdk:"registry_credentials_id"`
	Secrets               types.Map    `tfsdk:"secrets"`
	SecretsWO             types.Map    `tfsdk:"secrets_wo"`
	SecretsWOVersion      types.Int64  `tfsdk:"secrets_wo_version"`
	Egress                types.Object `tfsdk:"egress"`
	// CheckpointID, RestoreMemory and Volumes are create fields the
	// platform does not report back [I: today's sandbox object is not
	// published], so they live with the inputs (restore.go).
	CheckpointID  types.String `tfsdk:"checkpoint_id"`
	RestoreMemory types.Bool   `tfsdk:"restore_memory"`
	Volumes       types.List   `tfsdk:"volumes"`
}

// sandboxTemplate is what one sandbox is created from: prime_sandbox's
// arguments, or a fleet's template for each member. The create request and
// the plan-time rules take it, so the two resources share one
// implementation of each.
type sandboxTemplate struct {
	sandboxSpec
	sandboxInputs
}

// sandboxAttributes are the attributes prime_sandbox shares with the
// sandbox data sources, converted from the API by one function
// (applySandbox).
type sandboxAttributes struct {
	ID   types.String `tfsdk:"id"`
	Name types.String `tfsdk:"name"`
	sandboxSpec
	Status        types.String `tfsdk:"status"`
	CreatedAt     types.String `tfsdk:"created_at"`
	StartedAt     types.String `tfsdk:"started_at"`
	DiskMountPath types.String `tfsdk:"disk_mount_path"`
	UserID        types.String `tfsdk:"user_id"`
}

// sandboxModel is prime_sandbox's state.
type sandboxModel struct {
	sandboxAttributes
	sandboxInputs
	EgressGeneration types.Int64 `tfsdk:"egress_generation"`
	EgressApplied    types.Bool  `tfsdk:"egress_applied"`
	EgressOverride   types.Int64 `tfsdk:"egress_override_generation"`
	// Paused is managed only when set (pause.go).
	Paused types.Bool `tfsdk:"paused"`
	// RetireAfterCheckpoint keeps a template its checkpoint ended in state
	// (retire_after_checkpoint.go).
	RetireAfterCheckpoint types.Bool     `tfsdk:"retire_after_checkpoint"`
	Timeouts              timeouts.Value `tfsdk:"timeouts"`
}

// template is what m's sandbox is created from.
func (m sandboxModel) template() sandboxTemplate {
	return sandboxTemplate{sandboxSpec: m.sandboxSpec, sandboxInputs: m.sandboxInputs}
}

// nullInputs are inputs a configuration did not set (an import's).
func nullInputs() sandboxInputs {
	return sandboxInputs{
		StartCommand: types.StringNull(), Guaranteed: types.BoolNull(), RegistryCredentialsID: types.StringNull(),
		Secrets: types.MapNull(types.StringType), SecretsWO: types.MapNull(types.StringType),
		SecretsWOVersion: types.Int64Null(), Egress: types.ObjectNull(egress.BlockObjectType().AttrTypes),
		CheckpointID: types.StringNull(), RestoreMemory: types.BoolNull(), Volumes: types.ListNull(volume.AttachmentType()),
	}
}

// egressState views the egress attributes of a model.
func (m *sandboxModel) egressState() *egress.BlockState {
	return &egress.BlockState{Egress: m.Egress, EgressGeneration: m.EgressGeneration, EgressApplied: m.EgressApplied, EgressOverride: m.EgressOverride}
}

// setEgressState stores them back.
func (m *sandboxModel) setEgressState(s *egress.BlockState) {
	m.Egress, m.EgressGeneration, m.EgressApplied, m.EgressOverride = s.Egress, s.EgressGeneration, s.EgressApplied, s.EgressOverride
}

// createRequest builds the create body of the sandbox named name from a
// template in a plan (or, at validation time, a config). Null and unknown
// values are left out so the platform's defaults apply; unknown is reported
// through the returned set so plan-time validation can skip rules it
// cannot decide yet.
func createRequest(ctx context.Context, name types.String, m sandboxTemplate, secretsWO map[string]string) (prime.CreateSandboxRequest, map[string]bool, diag.Diagnostics) {
	var diags diag.Diagnostics
	unknown := map[string]bool{}
	known := func(field string, v attr.Value) bool {
		if v.IsUnknown() {
			unknown[field] = true
			return false
		}
		return !v.IsNull()
	}
	r := prime.CreateSandboxRequest{Labels: []string{}}
	if known("name", name) {
		r.Name = name.ValueString()
	} else if name.IsUnknown() {
		r.Name = "(known after apply)"
	}
	if known("docker_image", m.DockerImage) {
		r.DockerImage = m.DockerImage.ValueString()
	} else if m.DockerImage.IsUnknown() {
		r.DockerImage = "(known after apply)"
	}
	if known("checkpoint_id", m.CheckpointID) {
		r.CheckpointID = m.CheckpointID.ValueStringPointer()
	} else if m.CheckpointID.IsUnknown() {
		placeholder := "(known after apply)"
		r.CheckpointID = &placeholder
	}
	// restore_memory is sent only when true: false is the platform's cold
	// boot, and a false without checkpoint_id is refused at plan instead
	// (restoreInputProblems).
	if known("restore_memory", m.RestoreMemory) && m.RestoreMemory.ValueBool() {
		r.RestoreMemory = m.RestoreMemory.ValueBoolPointer()
	}
	if mounts, ok := volume.MountsOf(m.Volumes); !ok {
		unknown["volumes"] = true
	} else {
		r.Volumes = mounts
	}
	// vm, guaranteed, registry_credentials_id and start_command are
	// retired and never sent (retired.go refuses them at plan).
	if known("start_command", m.StartArgv) {
		argv, d := tfkit.StringList(ctx, m.StartArgv)
		diags.Append(d...)
		switch {
		case argv == nil:
			unknown["start_command"] = true
		case len(argv) == 0:
			r.StartCommand = &prime.StartCommand{Argv: &prime.StartArgv{Args: []string{}}}
		default:
			r.StartCommand = prime.ArgvCommand(argv[0], argv[1:]...)
		}
	}
	if known("arch", m.Arch) {
		r.Arch = m.Arch.ValueStringPointer()
	}
	if known("cpu_cores", m.CPUCores) {
		n := int(m.CPUCores.ValueInt64())
		r.CPUCores = &n
	}
	if known("memory_gb", m.MemoryGB) {
		r.MemoryGB = m.MemoryGB.ValueFloat64Pointer()
	}
	if known("disk_size_gb", m.DiskSizeGB) {
		r.DiskSizeGB = m.DiskSizeGB.ValueFloat64Pointer()
	}
	if known("gpu_count", m.GPUCount) {
		n := int(m.GPUCount.ValueInt64())
		r.GPUCount = &n
	}
	if known("gpu_type", m.GPUType) {
		r.GPUType = m.GPUType.ValueStringPointer()
	}
	if known("timeout_minutes", m.TimeoutMinutes) {
		n := int(m.TimeoutMinutes.ValueInt64())
		r.TimeoutMinutes = &n
	}
	if known("idle_timeout_minutes", m.IdleTimeoutMinutes) {
		n := int(m.IdleTimeoutMinutes.ValueInt64())
		r.IdleTimeoutMinutes = &n
	}
	if known("environment_vars", m.EnvironmentVars) {
		env, d := tfkit.StringMap(ctx, m.EnvironmentVars)
		diags.Append(d...)
		if env == nil {
			unknown["environment_vars"] = true
		} else if len(env) > 0 {
			r.EnvironmentVars = env
		}
	}
	if known("labels", m.Labels) {
		labels, d := tfkit.StringSet(ctx, m.Labels)
		diags.Append(d...)
		if labels == nil {
			unknown["labels"] = true
		} else {
			r.Labels = labels
		}
	}
	if known("team_id", m.TeamID) {
		r.TeamID = m.TeamID.ValueStringPointer()
	}
	if known("region", m.Region) {
		r.Region = m.Region.ValueStringPointer()
	}
	if known("secrets", m.Secrets) {
		sec, d := tfkit.StringMap(ctx, m.Secrets)
		diags.Append(d...)
		if sec == nil {
			unknown["secrets"] = true
		} else if len(sec) > 0 {
			r.Secrets = sec
		}
	}
	if len(secretsWO) > 0 {
		if r.Secrets == nil {
			r.Secrets = map[string]string{}
		}
		for k, v := range secretsWO {
			r.Secrets[k] = v
		}
	}
	return r, unknown, diags
}

// applySandbox copies an API sandbox into m. m holds the prior state (or the
// plan, or nulls for a data source) on entry, so read-back rules can keep
// the user's form: a collection the platform reports empty keeps its prior
// null-or-empty form, which keeps the second plan empty.
func applySandbox(ctx context.Context, m *sandboxAttributes, sb *prime.Sandbox) diag.Diagnostics {
	var diags diag.Diagnostics
	m.ID = types.StringValue(sb.ID)
	m.Name = types.StringValue(sb.Name)
	m.DockerImage = types.StringValue(sb.DockerImage)
	// Every sandbox is a VM (containers were retired), whatever an older
	// sandbox object says.
	m.VM = types.BoolValue(true)

	// Start command: only the argv form is managed. A string (what older
	// clients sent, "tail -f /dev/null" by default) reads as none.
	m.StartArgv = types.ListNull(types.StringType)
	if sc := sb.StartCommand; sc != nil && sc.Argv != nil {
		argv := append([]string{sc.Argv.Executable}, sc.Argv.Args...)
		v, d := types.ListValueFrom(ctx, types.StringType, argv)
		diags.Append(d...)
		m.StartArgv = v
	}

	// arch is read back when the platform reports it; otherwise what the
	// state (or configuration) holds stays [I: whether today's sandbox
	// object carries arch is not published].
	if sb.Arch != nil && *sb.Arch != "" {
		m.Arch = types.StringValue(*sb.Arch)
	} else if m.Arch.IsUnknown() {
		m.Arch = types.StringNull()
	}
	m.CPUCores = wholeNumberValue(wholeCPUs(sb.CPUCores))
	m.MemoryGB = types.Float64Value(sb.MemoryGB)
	m.DiskSizeGB = types.Float64Value(sb.DiskSizeGB)
	m.GPUCount = types.Int64Value(int64(sb.GPUCount))
	m.GPUType = types.StringPointerValue(emptyToNil(sb.GPUType))
	m.TimeoutMinutes = types.Int64Value(int64(sb.TimeoutMinutes))
	m.IdleTimeoutMinutes = int64PointerValue(sb.IdleTimeoutMinutes)

	env, d := readStringMap(ctx, m.EnvironmentVars, sb.EnvironmentVars)
	diags.Append(d...)
	m.EnvironmentVars = env
	// The provider's own labels (recovery.go) are not the configuration's.
	labels, d := readStringSet(ctx, m.Labels, userLabels(sb.Labels))
	diags.Append(d...)
	m.Labels = labels

	m.TeamID = types.StringPointerValue(emptyToNil(sb.TeamID))
	m.Region = types.StringPointerValue(emptyToNil(sb.Region))
	m.Status = types.StringValue(sb.Status)
	m.CreatedAt = timeValue(&sb.CreatedAt)
	m.StartedAt = timeValue(sb.StartedAt)
	m.DiskMountPath = types.StringValue(sb.DiskMountPath)
	m.UserID = types.StringPointerValue(emptyToNil(sb.UserID))
	return diags
}

// applySandboxResource is applySandbox plus the resource-only attributes the
// API cannot report: secrets come back masked ("***"), secrets_wo is
// write-only and never stored, and the retired attributes are always null.
func applySandboxResource(ctx context.Context, m *sandboxModel, sb *prime.Sandbox) diag.Diagnostics {
	diags := applySandbox(ctx, &m.sandboxAttributes, sb)
	if ck := emptyToNil(sb.CheckpointID); ck != nil {
		// The platform reports the checkpoint: it is the truth (an import
		// then records it, and a configuration naming another replaces).
		m.CheckpointID = types.StringValue(*ck)
	}
	if !m.CheckpointID.IsNull() {
		// A restored sandbox runs the checkpoint's image: docker_image
		// stays as configured (null), so the second plan is empty.
		m.DockerImage = types.StringNull()
	}
	m.StartCommand, m.RegistryCredentialsID = types.StringNull(), types.StringNull()
	m.Guaranteed = types.BoolNull()
	if m.Secrets.IsUnknown() {
		m.Secrets = types.MapNull(types.StringType)
	}
	m.SecretsWO = types.MapNull(types.StringType)
	return diags
}

// wholeCPUs is a sandbox object's cpuCores as whole vCPUs. The platform
// creates whole vCPUs only; the object still carries a number (the SDK
// parses one), and a sandbox from before the change may report a fraction,
// which rounds up to the vCPUs it occupies.
func wholeCPUs(cores float64) int64 {
	return int64(math.Ceil(cores))
}

func emptyToNil(s *string) *string {
	if s == nil || *s == "" {
		return nil
	}
	return s
}

func int64PointerValue(n *int) types.Int64 {
	if n == nil {
		return types.Int64Null()
	}
	return types.Int64Value(int64(*n))
}

func timeValue(t *time.Time) types.String {
	if t == nil || t.IsZero() {
		return types.StringNull()
	}
	return types.StringValue(t.UTC().Format(time.RFC3339))
}

// readStringMap turns an API map into state. An empty API map keeps the
// prior's form ({} stays {}, null stays null) so "unset" and "empty" never
// flip-flop between plans.
func readStringMap(ctx context.Context, prior types.Map, api map[string]string) (types.Map, diag.Diagnostics) {
	if len(api) == 0 {
		if !prior.IsNull() && !prior.IsUnknown() && len(prior.Elements()) == 0 {
			return prior, nil
		}
		return types.MapNull(types.StringType), nil
	}
	return types.MapValueFrom(ctx, types.StringType, api)
}

// readStringSet is readStringMap for sets.
func readStringSet(ctx context.Context, prior types.Set, api []string) (types.Set, diag.Diagnostics) {
	if len(api) == 0 {
		if !prior.IsNull() && !prior.IsUnknown() && len(prior.Elements()) == 0 {
			return prior, nil
		}
		return types.SetNull(types.StringType), nil
	}
	return types.SetValueFrom(ctx, types.StringType, api)
}
