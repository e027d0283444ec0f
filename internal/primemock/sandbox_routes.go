package primemock

// The mock's REST routes: which handler serves which method and path.

import (
	"maps"
	"slices"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// wire renders the sandbox as the camelCase object. Everything is copied:
// the answer is encoded after the lock is released.
func (s *Server) wire(sb *sandbox) prime.Sandbox {
	r := sb.req
	out := prime.Sandbox{
		ID:                  sb.id,
		Name:                r.Name,
		DockerImage:         r.DockerImage,
		CPUCores:            float64(*r.CPUCores),
		MemoryGB:            *r.MemoryGB,
		DiskSizeGB:          *r.DiskSizeGB,
		DiskMountPath:       defaultDiskMountPath,
		GPUCount:            *r.GPUCount,
		GPUType:             cloneStrPtr(r.GPUType),
		VM:                  true,
		Arch:                cloneStrPtr(r.Arch),
		Status:              sb.status,
		TimeoutMinutes:      *r.TimeoutMinutes,
		TerminationReason:   cloneStrPtr(sb.terminationReason),
		EnvironmentVars:     maps.Clone(r.EnvironmentVars),
		Labels:              slices.Clone(r.Labels),
		CreatedAt:           ts(sb.createdAt),
		UpdatedAt:           ts(sb.updatedAt),
		StartedAt:           tsPtr(sb.startedAt),
		TerminatedAt:        tsPtr(sb.terminated),
		ErrorType:           cloneStrPtr(sb.errorType),
		ErrorMessage:        cloneStrPtr(sb.errorMsg),
		UserID:              strPtr(sb.userID),
		TeamID:              cloneStrPtr(r.TeamID),
		Region:              cloneStrPtr(r.Region),
		PendingImageBuildID: cloneStrPtr(sb.pendingBuild),
	}
	if out.Labels == nil {
		out.Labels = []string{}
	}
	if sb.exitCode != nil {
		v := *sb.exitCode
		out.ExitCode = &v
	}
	if r.IdleTimeoutMinutes != nil {
		v := *r.IdleTimeoutMinutes
		out.IdleTimeoutMinutes = &v
	}
	if sc := r.StartCommand; sc != nil {
		c := *sc
		if c.Argv != nil {
			c.Argv = &prime.StartArgv{Executable: c.Argv.Executable, Args: slices.Clone(c.Argv.Args)}
		}
		out.StartCommand = &c
	}
	if r.Secrets != nil {
		// Secrets are write-only: the platform masks them.
		out.Secrets = make(map[string]string, len(r.Secrets))
		for k := range r.Secrets {
			out.Secrets[k] = "***"
		}
	}
	if r.AdvancedConfigs != nil {
		out.AdvancedConfigs = maps.Clone(r.AdvancedConfigs)
	}
	// The object mirrors the desired policy once there is one (create-time
	// lists or a PUT); a sandbox created without lists shows null for both,
	// as its create request did.
	if sb.createLists || sb.generation > 0 {
		out.NetworkAllowlist = slices.Clone(sb.desired.Allowlist)
		out.NetworkDenylist = slices.Clone(sb.desired.Denylist)
		if out.AdvancedConfigs == nil {
			out.AdvancedConfigs = map[string]any{}
		}
		out.AdvancedConfigs["vmEgressPolicy"] = map[string]any{
			"accepted":   true,
			"allowlist":  slices.Clone(sb.desired.Allowlist),
			"denylist":   slices.Clone(sb.desired.Denylist),
			"generation": sb.generation,
		}
	}
	return out
}
