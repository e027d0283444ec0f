package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// resourceFlags registers the knobs of checkpoints, pause and resume,
// networks and images; the returned check validates them after parsing.
func resourceFlags(fs *flag.FlagSet, o *primemock.ResourceOptions) func() error {
	fs.DurationVar(&o.CheckpointFreezeDelay, "checkpoint-freeze-delay", primemock.DefaultCheckpointFreezeDelay, "PENDING time of a checkpoint before FROZEN")
	fs.DurationVar(&o.CheckpointDurableDelay, "checkpoint-durable-delay", primemock.DefaultCheckpointDurableDelay,
		"FROZEN time of a checkpoint before DURABLE (a volume publish's merge takes as long again)")
	fs.Float64Var(&o.CheckpointFailRate, "checkpoint-fail-rate", 0,
		"probability that a checkpoint goes FAILED instead of DURABLE (a sandbox named with \""+primemock.MagicCheckpointFailName+"\" always fails)")
	fs.DurationVar(&o.RestoreDelay, "restore-delay", primemock.DefaultRestoreDelay, "PENDING + PROVISIONING time of a sandbox created from a checkpoint")
	fs.DurationVar(&o.PauseDelay, "pause-delay", primemock.DefaultPauseDelay, "time from an accepted pause to PAUSED")
	fs.DurationVar(&o.ResumeDelay, "resume-delay", primemock.DefaultResumeDelay, "time from an accepted resume to RUNNING")
	fs.IntVar(&o.ResumeLimit, "resume-limit", 0, "refuse a resume (409) while the caller has this many active sandboxes (0: no limit)")
	fs.Func("image-without-vm", "an image (docker_image value) with no VM artifact: VM creates fail with \"VM image not found\" until a vm-build of it completes (repeatable, or comma-separated)",
		func(v string) error {
			for _, ref := range strings.Split(v, ",") {
				if ref = strings.TrimSpace(ref); ref != "" {
					o.ImagesWithoutVM = append(o.ImagesWithoutVM, ref)
				}
			}
			return nil
		})
	fs.DurationVar(&o.VMBuildDelay, "vm-build-delay", primemock.DefaultVMBuildDelay, "how long a vm-build takes")
	fs.BoolVar(&o.NetworkDefaultAllow, "network-default-allow", false,
		"a network created without rules lets every member reach every other (the guide's example) instead of none (the API's text)")
	return func() error {
		if err := o.Validate(); err != nil {
			return fmt.Errorf("-%s", strings.ReplaceAll(err.Error(), "_", "-"))
		}
		return nil
	}
}
