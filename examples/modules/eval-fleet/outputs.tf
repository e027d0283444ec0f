output "sandbox_ids" {
  description = "Sandbox ID by member key."
  value       = prime_sandbox_fleet.this.sandbox_ids
}

output "ready_sandbox_ids" {
  description = "Sandbox ID by member key, for the members whose setup succeeded and whose lists are enforced (with `allow`/`block`). Known only after that, so whatever runs on it can never start early."
  value       = local.ready_ids
}

output "lock_id" {
  description = "Changes whenever the members were locked anew — after a setup change, and after a change of `allow`, `block` or `routes`, in every mode: the policy's ID (with the lists in the fleet's `egress` block — `setup_mode = \"once\"`, `born_restricted` — the checkpoint's, the setup's or the fleet's ID, and the lists' digest). Name it in your own agent's `triggers` (or name `agent_triggers`) so the agent runs again after every re-lock."
  value       = local.lock_id
}

output "agent_triggers" {
  description = "What a run of the agent depends on besides its member's task, the module's agent's `triggers`: the lock (`lock_id`), the lists' digest (`lists_sha256`, with `allow`/`block`), the `image`, the `checkpoint_id` (setup once) and the setup's digest (`setup_sha256`: its commands, environment, `setup_env_wo_version` and task directory). A change of any runs every member's agent again. Name it in your own agent's `triggers` (with `member_triggers = task_fingerprints`), so its runs re-run and are recorded the same way."
  value       = local.agent_triggers
}

output "setup_exit_codes" {
  description = "Exit code of every setup step, by member key, in order (with `setup_mode = \"once\"`, one entry: `template`). A member whose setup failed is absent (see `failures`), as is one that left the fleet or has a new sandbox its setup has not run in yet."
  value       = { for k, r in local.current_setup : k => [for s in r.steps : s.exit_code] if !r.failed }
}

output "setup_stdout" {
  description = "Standard output of every setup step (its last line), by member key, in order."
  value       = { for k, r in local.current_setup : k => [for s in r.steps : s.stdout] if !r.failed }
}

output "setup_stderr" {
  description = "Standard error of every setup step (its last line), by member key, in order."
  value       = { for k, r in local.current_setup : k => [for s in r.steps : s.stderr] if !r.failed }
}

output "policy_generations" {
  description = "Generation of the fleet's egress policy on each member, by member key: the policy written after the setup, or with `born_restricted` the born lists (the generation the platform gives create-time lists; 0 on prime-mock). Empty without `allow`/`block`."
  value = (
    local.lock ? { for k, m in prime_fleet_egress_policy.this[0].members : k => m.generation } :
    local.fleet_egress ? { for k, s in prime_sandbox_fleet.this.sandboxes : k => s.egress_generation } :
    {}
  )
}

output "policy_applied" {
  description = "Whether the data plane enforces the lists on each member, by member key (always true after a successful apply). Empty without `allow`/`block`."
  value = (
    local.lock ? { for k, m in prime_fleet_egress_policy.this[0].members : k => m.applied } :
    local.fleet_egress ? { for k, s in prime_sandbox_fleet.this.sandboxes : k => s.egress_applied } :
    {}
  )
}

output "effective_allow" {
  description = "The allowlist every member gets, canonical, route hosts first. Null in block mode and without lists."
  value = (
    local.lock ? prime_fleet_egress_policy.this[0].effective_allow :
    local.fleet_egress ? prime_sandbox_fleet.this.egress.effective_allow :
    null
  )
}

output "lists_sha256" {
  description = "The digest of the lists every member gets (`lists_sha256` of the policy or of the fleet's `egress` block): each run's `egress_sha256` in `runs` equals it when the run started under these lists. Null without `allow`/`block`."
  value = (
    local.lock ? prime_fleet_egress_policy.this[0].lists_sha256 :
    local.fleet_egress ? prime_sandbox_fleet.this.egress.lists_sha256 :
    null
  )
}

output "effective_block" {
  description = "The blocklist every member gets, canonical. Null in allow mode and without lists."
  value = (
    local.lock ? prime_fleet_egress_policy.this[0].effective_block :
    local.fleet_egress ? prime_sandbox_fleet.this.egress.effective_block :
    null
  )
}

output "agent_exit_codes" {
  description = "Exit code of every agent step, by member key, in order, for the members whose current run succeeded (a failed one is in `failures`). Empty without `agent`."
  value       = { for k, r in local.current_runs : k => [for s in r.steps : s.exit_code] if !r.failed }
}

output "agent_stdout" {
  description = "Standard output of every agent step (its last line), by member key, in order. Empty without `agent`."
  value       = { for k, r in local.current_runs : k => [for s in r.steps : s.stdout] if !r.failed }
}

output "agent_stderr" {
  description = "Standard error of every agent step (its last line), by member key, in order. Empty without `agent`."
  value       = { for k, r in local.current_runs : k => [for s in r.steps : s.stderr] if !r.failed }
}

output "agent_run_ids" {
  description = "The ID of every member's current agent run that succeeded, by member key: a new one whenever that member's agent ran again. Empty without `agent`."
  value       = local.agent_run_ids
}

output "runs" {
  description = <<-EOT
    The record of every member's current agent run, by member key — the provenance of its reward and results, as in its `<results_local_dir>/<member key>/run.json`: `run_id`, `member`, `sandbox_id`, `started_at` and `ended_at` (RFC 3339), `exit_code`, `failed` and `error`; `commands_sha256` (the agent's steps, `sha256(jsonencode(commands))`); `egress_generation` and `egress_sha256` (the egress policy the member's sandbox enforced when the run started, read from the platform: compare `egress_sha256` with `lists_sha256`); `triggers` (what the run depended on, `agent_triggers`: `image`, `checkpoint_id`, `setup_sha256`, `lists_sha256`, `lock`) and `member_trigger` (the member's task fingerprint, `task_fingerprints`). Only members of the fleet as it is whose run was in their current sandbox; a member without one is in `failures` (after an apply that failed, see `on_member_failure`). Empty without `agent`.
  EOT
  value = {
    for k, r in local.current_runs : k => {
      run_id            = r.run_id
      member            = k
      sandbox_id        = r.sandbox_id
      started_at        = r.started_at
      ended_at          = r.executed_at
      exit_code         = r.exit_code
      failed            = r.failed
      error             = r.error
      commands_sha256   = prime_fleet_command.agent[0].commands_sha256
      egress_generation = r.egress_generation
      egress_sha256     = r.egress_sha256
      triggers          = prime_fleet_command.agent[0].triggers
      member_trigger    = try(prime_fleet_command.agent[0].member_triggers[k], null)
    }
  }
}

output "failures" {
  description = "Every member of the fleet whose outputs are missing, by member key, and why: `phase` (`setup`, `lock`, `agent`), `sandbox_id` and `error` — its setup failed, its lists are not enforced, its agent failed (recorded with `on_member_failure = \"record\"`, or by an update that failed), or its agent has no run in its current sandbox yet. Empty when every member's outputs are current."
  value = merge(
    {
      for k, id in prime_sandbox_fleet.this.sandbox_ids : k => {
        phase = "lock", sandbox_id = id, error = "its lists are not enforced yet: nothing runs on it until they are"
      } if local.restricted && contains(keys(local.set_up_ids), k) && !contains(keys(local.ready_ids), k)
    },
    local.has_agent ? {
      for k, id in local.ready_ids : k => {
        phase = "agent", sandbox_id = id, error = "its agent has no run in this sandbox yet: the next apply runs it"
      } if !contains(keys(local.current_runs), k)
    } : {},
    { for k, r in local.current_runs : k => { phase = "agent", sandbox_id = r.sandbox_id, error = coalesce(r.error, "failed") } if r.failed },
    { for k, r in local.current_setup : k => { phase = "setup", sandbox_id = r.sandbox_id, error = coalesce(r.error, "failed") } if r.failed },
  )
}

output "progress_file" {
  description = "The agent's progress file, `<results_local_dir>/progress.json`: rewritten while the agent runs, with each member's state (`waiting`, `running`, `succeeded`, `failed`, `left` running by an interrupt), step, sandbox and job, and the counts. Null without `agent`."
  value       = local.has_agent ? "${local.results_dir}/progress.json" : null
}

output "task_fingerprints" {
  description = "Each member's task fingerprint, by member key: the sha256 of its uploads (`task_dir`, its `member_tasks` entry). Name it in your own agent's `member_triggers` so a member runs again when its task changes. Null without task files."
  value       = local.task_fingerprints
}

output "rewards" {
  description = "Each member's reward, by member key: the `reward_field` of the JSON object in its `reward_file`, for the members whose current agent run succeeded (its provenance is in `runs`); null for a member whose run wrote no such file (an earlier run's file is never read as its), or a file that is not a JSON object with that field. Empty without `reward_file`."
  value = local.has_rewards ? {
    for k, run in local.agent_run_ids : k => (
      try(data.prime_fleet_file.reward[0].files[k].run_id, null) == run ?
      try(jsondecode(data.prime_fleet_file.reward[0].files[k].content)[var.reward_field], null) : null
    )
  } : {}
}

output "results_local_paths" {
  description = "Where each member's results directory was downloaded (`<results_local_dir>/<member key>/results`), by member key, for every member's current agent run (a failed one's too: its transcript may say why); null for a member whose run wrote none. Empty without `results_path`."
  value = local.has_results ? {
    for k, r in local.current_runs : k => (
      try(prime_fleet_artifact.results[0].members[k].run_id, null) == r.run_id ? prime_fleet_artifact.results[0].members[k].local_path : null
    )
  } : {}
}

output "checkpoint_id" {
  description = "With `setup_mode = \"once\"`: the ID of the template's checkpoint every member was restored from (destroy deletes it). Null otherwise."
  value       = local.once ? prime_sandbox_checkpoint.template[0].id : null
}

output "template_sandbox_id" {
  description = "With `setup_mode = \"once\"`: the ID of the template sandbox that ran the setup (deleted once its checkpoint is `DURABLE`). Null otherwise."
  value       = local.once ? prime_sandbox.template[0].id : null
}
