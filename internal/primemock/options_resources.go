package primemock

import (
	"fmt"
	"slices"
	"time"
)

// Defaults of the resource knobs: small, so tests and demos are fast, but
// never zero, so every state is observable.
const (
	DefaultCheckpointFreezeDelay  = 50 * time.Millisecond
	DefaultCheckpointDurableDelay = 100 * time.Millisecond
	DefaultRestoreDelay           = DefaultBootDelay
	DefaultPauseDelay             = 50 * time.Millisecond
	DefaultResumeDelay            = 50 * time.Millisecond
	DefaultVMBuildDelay           = 200 * time.Millisecond
)

// ResourceOptions are the knobs of checkpoints, pause and resume, networks
// and images (embedded in Options). Zero durations select the defaults.
type ResourceOptions struct {
	// CheckpointFreezeDelay is a checkpoint's PENDING time before FROZEN.
	CheckpointFreezeDelay time.Duration
	// CheckpointDurableDelay is its FROZEN time before DURABLE (its upload);
	// a volume publish's merge then stays pending as long again.
	CheckpointDurableDelay time.Duration
	// CheckpointFailRate is the probability that a checkpoint goes FAILED
	// at the end of its upload instead of DURABLE. A sandbox whose name
	// contains MagicCheckpointFailName fails every checkpoint.
	CheckpointFailRate float64
	// RestoreDelay is PENDING + PROVISIONING of a sandbox created from a
	// checkpoint.
	RestoreDelay time.Duration
	// PauseDelay is how long an accepted pause takes to reach PAUSED, and
	// ResumeDelay an accepted resume to reach RUNNING.
	PauseDelay  time.Duration
	ResumeDelay time.Duration
	// ResumeLimit refuses a resume (409) while the caller already has this
	// many active sandboxes (booting or running; paused ones do not count).
	// 0: no limit.
	ResumeLimit int
	// ImagesWithoutVM are docker_image values with no VM artifact: a VM
	// create from one fails with "VM image not found" until a vm-build of
	// its name:tag completes.
	ImagesWithoutVM []string
	// VMBuildDelay is how long a vm-build takes.
	VMBuildDelay time.Duration
	// NetworkDefaultAllow: a network created without a rules key lets every
	// member reach every other on every port (the guide's example), instead
	// of no member reaching another (the API text; the default).
	NetworkDefaultAllow bool
}

func (o ResourceOptions) checkpointFreezeDelay() time.Duration {
	return orDuration(o.CheckpointFreezeDelay, DefaultCheckpointFreezeDelay)
}

func (o ResourceOptions) checkpointDurableDelay() time.Duration {
	return orDuration(o.CheckpointDurableDelay, DefaultCheckpointDurableDelay)
}

func (o ResourceOptions) restoreDelay() time.Duration {
	return orDuration(o.RestoreDelay, DefaultRestoreDelay)
}
func (o ResourceOptions) pauseDelay() time.Duration {
	return orDuration(o.PauseDelay, DefaultPauseDelay)
}
func (o ResourceOptions) resumeDelay() time.Duration {
	return orDuration(o.ResumeDelay, DefaultResumeDelay)
}
func (o ResourceOptions) vmBuildDelay() time.Duration {
	return orDuration(o.VMBuildDelay, DefaultVMBuildDelay)
}

// ResourcePatch is the resource part of ConfigPatch (POST /_mock/config).
type ResourcePatch struct {
	CheckpointFreezeDelay  *Duration `json:"checkpoint_freeze_delay,omitempty"`
	CheckpointDurableDelay *Duration `json:"checkpoint_durable_delay,omitempty"`
	CheckpointFailRate     *float64  `json:"checkpoint_fail_rate,omitempty"`
	RestoreDelay           *Duration `json:"restore_delay,omitempty"`
	PauseDelay             *Duration `json:"pause_delay,omitempty"`
	ResumeDelay            *Duration `json:"resume_delay,omitempty"`
	ResumeLimit            *int      `json:"resume_limit,omitempty"`
	// ImagesWithoutVM replaces the whole list.
	ImagesWithoutVM     *[]string `json:"images_without_vm,omitempty"`
	VMBuildDelay        *Duration `json:"vm_build_delay,omitempty"`
	NetworkDefaultAllow *bool     `json:"network_default_allow,omitempty"`
}

// resourcePatchOf reports the effective values (defaults resolved).
func resourcePatchOf(o ResourceOptions) ResourcePatch {
	dur := func(d time.Duration) *Duration { v := Duration(d); return &v }
	images := slices.Clone(o.ImagesWithoutVM)
	if images == nil {
		images = []string{}
	}
	return ResourcePatch{
		CheckpointFreezeDelay:  dur(o.checkpointFreezeDelay()),
		CheckpointDurableDelay: dur(o.checkpointDurableDelay()),
		CheckpointFailRate:     &o.CheckpointFailRate,
		RestoreDelay:           dur(o.restoreDelay()),
		PauseDelay:             dur(o.pauseDelay()),
		ResumeDelay:            dur(o.resumeDelay()),
		ResumeLimit:            &o.ResumeLimit,
		ImagesWithoutVM:        &images,
		VMBuildDelay:           dur(o.vmBuildDelay()),
		NetworkDefaultAllow:    &o.NetworkDefaultAllow,
	}
}

// apply checks p and copies its set fields into o.
func (p ResourcePatch) apply(o *ResourceOptions) error {
	next := *o
	set := func(dst *time.Duration, src *Duration) {
		if src != nil {
			*dst = time.Duration(*src)
		}
	}
	set(&next.CheckpointFreezeDelay, p.CheckpointFreezeDelay)
	set(&next.CheckpointDurableDelay, p.CheckpointDurableDelay)
	set(&next.RestoreDelay, p.RestoreDelay)
	set(&next.PauseDelay, p.PauseDelay)
	set(&next.ResumeDelay, p.ResumeDelay)
	set(&next.VMBuildDelay, p.VMBuildDelay)
	if p.CheckpointFailRate != nil {
		next.CheckpointFailRate = *p.CheckpointFailRate
	}
	if p.ResumeLimit != nil {
		next.ResumeLimit = *p.ResumeLimit
	}
	if p.ImagesWithoutVM != nil {
		next.ImagesWithoutVM = slices.Clone(*p.ImagesWithoutVM)
	}
	if p.NetworkDefaultAllow != nil {
		next.NetworkDefaultAllow = *p.NetworkDefaultAllow
	}
	if err := next.Validate(); err != nil {
		return err
	}
	*o = next
	return nil
}

// Validate checks the knobs' ranges: no negative delay, a probability for
// the fail rate, a limit of 0 or more.
func (o ResourceOptions) Validate() error {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"checkpoint_freeze_delay", o.CheckpointFreezeDelay}, {"checkpoint_durable_delay", o.CheckpointDurableDelay},
		{"restore_delay", o.RestoreDelay}, {"pause_delay", o.PauseDelay}, {"resume_delay", o.ResumeDelay},
		{"vm_build_delay", o.VMBuildDelay},
	} {
		if d.v < 0 {
			return fmt.Errorf("%s must not be negative, got %s", d.name, d.v)
		}
	}
	switch {
	case !(o.CheckpointFailRate >= 0 && o.CheckpointFailRate <= 1):
		return fmt.Errorf("checkpoint_fail_rate must be between 0 and 1, got %g", o.CheckpointFailRate)
	case o.ResumeLimit < 0:
		return fmt.Errorf("resume_limit must not be negative (0: no limit), got %d", o.ResumeLimit)
	}
	return nil
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
