// Package command holds the command domain: running commands in sandboxes
// and keeping their results.
//
// It owns:
//
//   - one command run (run.go): the spec, the gateway call, the result and
//     how it is judged, the error texts every form shares, and the
//     require_open_egress check; its streamed output (output.go), secrets
//     learned to scrub from it (secrets.go) and the result paths it may
//     bring back (result_paths.go);
//   - background runs under the job journal (job.go): start, attach,
//     collect, never run twice;
//   - the progress a long run reports, in logs and in an output_dir's
//     progress.json (progress.go);
//   - what every form of a command shares (shared.go): the arguments
//     (runArguments, read by specOf) and where output is kept
//     (recordedOutput), so a fleet or an action never builds a partial
//     prime_sandbox_command to reuse a rule;
//   - prime_sandbox_command: schema (resource.go), model (model.go), plan
//     (resource_plan.go), CRUD (resource_crud.go), background jobs
//     (resource_job.go);
//   - prime_fleet_command: schema (fleet_resource.go), model
//     (fleet_model.go, codecs in fleet_values.go), plan (fleet_plan.go),
//     the members' run (fleet_run.go) and jobs (fleet_jobs.go), recorded
//     results (fleet_records.go), CRUD (fleet_crud.go);
//   - the prime_sandbox_exec and prime_fleet_exec actions (exec_action.go,
//     fleet_exec_action.go), which run the same rules and keep nothing.
//
// It may import: the standard library, github.com/hashicorp/terraform-plugin-*/..., internal/files, internal/egress, internal/memberkit, internal/tfkit, internal/journal, internal/prime.
//
// internal/provider imports it, never the reverse, and it never imports
// internal/sandbox (what both need lives below them, in memberkit, tfkit or
// prime).
package command
