// Package checkpoint holds the checkpoint domain: a VM sandbox's root file
// system checkpointed once, so that any number of sandboxes can later be
// restored from it.
//
// It owns:
//
//   - the attributes a checkpoint reports and their conversion from the
//     platform's record, shared by the resource and the data source
//     (model.go);
//   - prime_sandbox_checkpoint (resource.go): take a checkpoint, wait
//     fail-closed until it is DURABLE, read it back, delete it; its
//     identity (identity.go);
//   - its use of the checkpoint journal (journal.go): the next create of a
//     configuration adopts (or deletes) the checkpoint a killed apply
//     requested, instead of leaving it untracked;
//   - the prime_sandbox_checkpoint data source (data_source.go).
//
// The checkpoint calls themselves (create, the shared batched wait, get,
// delete) live in internal/prime; restoring a sandbox from a checkpoint is
// the sandbox domain's.
//
// It may import: the standard library, github.com/hashicorp/terraform-plugin-*/..., internal/tfkit, internal/journal, internal/prime.
//
// internal/provider imports it, never the reverse. It reads the configured
// client only through tfkit.ClientFrom, and the checkpoint journal through
// journal.CheckpointsFrom.
package checkpoint
