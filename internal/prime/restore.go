package prime

// Creating a sandbox from a checkpoint, and with volumes: the create
// request's checkpoint_id, restore_memory and volumes.

import (
	"fmt"
	"strings"
)

// restoreRules are the create rules of checkpoint_id, restore_memory and
// volumes, in CreateRules' form. A restore takes the checkpoint's image and
// disk size, so docker_image and disk_size_gb must be omitted (the SDK's
// "omit docker_image" check); restore_memory needs checkpoint_id
// (RestoreMemoryProblem).
func restoreRules(r CreateSandboxRequest) []RuleViolation {
	var out []RuleViolation
	add := func(inputs []string, format string, args ...any) {
		out = append(out, RuleViolation{Field: inputs[0], Inputs: inputs, Message: fmt.Sprintf(format, args...)})
	}
	if r.CheckpointID != nil {
		if n := len(*r.CheckpointID); n == 0 || n > MaxCheckpointIDLength {
			add([]string{"checkpoint_id"}, "must have 1 to %d characters, got %d", MaxCheckpointIDLength, n)
		}
		if strings.TrimSpace(r.DockerImage) != "" {
			add([]string{"docker_image", "checkpoint_id"}, "must be omitted when checkpoint_id is set: a restored sandbox takes the checkpoint's image")
		}
		if r.DiskSizeGB != nil {
			add([]string{"disk_size_gb", "checkpoint_id"}, "must be omitted when checkpoint_id is set: a restored sandbox takes the checkpoint's disk size")
		}
	}
	if why := RestoreMemoryProblem(r.RestoreMemory != nil, r.CheckpointID != nil); why != "" {
		add([]string{"restore_memory", "checkpoint_id"}, "%s", why)
	}
	for _, msg := range VolumeMountRules(r.Volumes) {
		add([]string{"volumes"}, "%s", msg)
	}
	return out
}

// RestoreMemoryProblem is the restore_memory rule, for a request and for a
// configuration alike: the argument exists only with checkpoint_id (true
// restores a pause checkpoint's memory; false is the cold boot every
// create without checkpoint_id gets), so either value without a checkpoint
// is refused. It says why (to follow "restore_memory"), or "" when the
// arguments are fine.
func RestoreMemoryProblem(restoreMemorySet, checkpointSet bool) string {
	if restoreMemorySet && !checkpointSet {
		return "needs checkpoint_id: only a pause checkpoint's memory can be restored"
	}
	return ""
}

// IsRestore reports whether the request boots from a checkpoint.
func (r CreateSandboxRequest) IsRestore() bool { return r.CheckpointID != nil }
