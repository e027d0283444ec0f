output "sandbox_ids" {
  description = "Sandbox ID by member key."
  value       = prime_sandbox_fleet.this.sandbox_ids
}

output "ready_sandbox_ids" {
  description = "Sandbox ID by member key, for the members whose setup succeeded and whose lists are enforced (with `allow`/`block`). Known only after that, so whatever runs on it can never start early."
  value       = local.ready_ids
}

output "lock_id" {
  description = "Changes whenever the members were locked anew — after a setup change, and after a change of `allow`, `block` or `routes` — and is unknown in the plan until then: the policy's ID (the setup's, or the fleet's, without one). Name it in your own agent's `triggers` so the agent runs again after every re-lock."
  value       = local.lock_id
}

output "setup_exit_codes" {
  description = "Exit code of every setup step, by member key, in order (with `setup_mode = \"once\"`, one entry: `template`). A member whose setup failed is absent (the apply failed and names it)."
  value       = { for k, r in local.setup_results : k => [for s in r.steps : s.exit_code] if !r.failed }
}

output "setup_stdout" {
  description = "Standard output of every setup step (its last line), by member key, in order."
  value       = { for k, r in local.setup_results : k => [for s in r.steps : s.stdout] if !r.failed }
}

output "setup_stderr" {
  description = "Standard error of every setup step (its last line), by member key, in order."
  value       = { for k, r in local.setup_results : k => [for s in r.steps : s.stderr] if !r.failed }
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

output "effective_block" {
  description = "The blocklist every member gets, canonical. Null in allow mode and without lists."
  value = (
    local.lock ? prime_fleet_egress_policy.this[0].effective_block :
    local.fleet_egress ? prime_sandbox_fleet.this.egress.effective_block :
    null
  )
}

output "agent_exit_codes" {
  description = "Exit code of every agent step, by member key, in order. Empty without `agent`."
  value       = local.has_agent ? { for k, r in prime_fleet_command.agent[0].results : k => [for s in r.steps : s.exit_code] if !r.failed } : {}
}

output "agent_stdout" {
  description = "Standard output of every agent step (its last line), by member key, in order. Empty without `agent`."
  value       = local.has_agent ? { for k, r in prime_fleet_command.agent[0].results : k => [for s in r.steps : s.stdout] if !r.failed } : {}
}

output "agent_stderr" {
  description = "Standard error of every agent step (its last line), by member key, in order. Empty without `agent`."
  value       = local.has_agent ? { for k, r in prime_fleet_command.agent[0].results : k => [for s in r.steps : s.stderr] if !r.failed } : {}
}

output "agent_run_ids" {
  description = "The ID of every member's latest agent run, by member key: a new one whenever that member's agent ran again. Empty without `agent`."
  value       = local.has_agent ? { for k, r in prime_fleet_command.agent[0].results : k => r.run_id if !r.failed } : {}
}

output "task_fingerprints" {
  description = "Each member's task fingerprint, by member key: the sha256 of its uploads (`task_dir`, its `member_tasks` entry). Name it in your own agent's `member_triggers` so a member runs again when its task changes. Null without task files."
  value       = local.task_fingerprints
}

output "rewards" {
  description = "Each member's reward, by member key: the `reward_field` of the JSON object in its `reward_file`, for the members whose agent succeeded; null for a member that wrote no such file, or a file that is not a JSON object with that field. Empty without `reward_file`."
  value = local.has_rewards ? {
    for k, f in data.prime_fleet_file.reward[0].files : k => f.exists ? try(jsondecode(f.content)[var.reward_field], null) : null
  } : {}
}

output "results_local_paths" {
  description = "Where each member's results directory was downloaded, by member key; null for a member whose agent wrote none. Empty without `results_path`."
  value       = local.has_results ? { for k, m in prime_fleet_artifact.results[0].members : k => m.exists ? m.local_path : null } : {}
}

output "checkpoint_id" {
  description = "With `setup_mode = \"once\"`: the ID of the template's checkpoint every member was restored from (destroy deletes it). Null otherwise."
  value       = local.once ? prime_sandbox_checkpoint.template[0].id : null
}

output "template_sandbox_id" {
  description = "With `setup_mode = \"once\"`: the ID of the template sandbox that ran the setup (deleted once its checkpoint is `DURABLE`). Null otherwise."
  value       = local.once ? prime_sandbox.template[0].id : null
}
