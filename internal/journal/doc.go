// Package journal keeps the provider's crash-safety journals: small files
// that let the next apply find what a killed or interrupted one left
// behind, so a sandbox or a checkpoint is never left untracked and a command
// never runs twice.
//
// It owns:
//
//   - the create journal (Creates, creates.go): each sandbox create's
//     idempotency key, recorded and locked before the create, so the next
//     create of the same configuration replays the key and adopts the
//     sandbox instead of making a second one;
//   - the checkpoint journal (Checkpoints, checkpoints.go): each
//     checkpoint create's configuration, recorded and locked before the
//     request, and the checkpoint's ID once the platform answers, so the
//     next create of the same configuration adopts (or deletes) the
//     checkpoint a killed apply left instead of leaving it untracked;
//   - the job journal (Jobs, jobs.go): each background job's ID and, for a
//     fleet member's finished step, its judged outcome, so the next apply
//     attaches to the job (or takes the outcome) instead of starting it
//     again; RunHash names a run across processes;
//   - the entry files they share (files.go): one entry per file, held
//     under an exclusive flock(2) that dies with its process (lock_unix.go;
//     no such lock elsewhere, so the journals are off there), a line of
//     JSON per version, each new version appended in one write (the last
//     whole line is the entry, so a kill inside a write loses only that
//     version, and a one-line file of an older release reads as before),
//     hand-over (a result returned to Terraform keeps its entry, unlocked,
//     until a plan shows it in state), and the grace after a clean end
//     (ReleaseAll);
//   - notes (Notes, notes.go): small keyed hints beside the create
//     journal, without locks, that their user checks against the platform
//     before acting (the egress domain's baselines of failed-closed
//     creates); every local file of the provider goes through this package;
//   - the lookup ledger (Lookups, lookups.go): one small file per token
//     (named by a digest of it) that counts the sandbox lookups of every
//     provider process of the user on this machine in one-second
//     buckets, so that they keep under the token's per-minute ceiling
//     together;
//   - where the journals live: under the user's cache directory, one
//     directory per Terraform working directory and workspace
//     (DefaultCreates); CreatesFrom, CheckpointsFrom and JobsFrom (from.go) read them from
//     the provider's configured data by capability. These names and the entries' JSON are an on-disk
//     format: users' existing journals must stay readable and adoptable, so
//     change neither without a migration.
//
// Everything is best effort: a file-system problem disables a journal, it
// never fails an apply.
//
// It may import: the standard library, internal/prime.
//
// It imports internal/prime for the create request it hashes and the keys it
// makes, and no Terraform package: the domain packages, internal/provider
// and main.go import it, never the reverse.
package journal
