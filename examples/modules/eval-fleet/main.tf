# eval-fleet: a fleet of VM sandboxes, the task files in, trusted setup
# with egress open, then the agent-phase egress policy, enforced before
# anything runs on ready_sandbox_ids (the optional agent included), and the
# agent's results out:
#
#   prime_sandbox_fleet -> prime_fleet_file (task_dir, member_tasks)
#     -> prime_fleet_command.setup (require_open_egress)
#     -> prime_fleet_egress_policy (after = [setup id])
#     -> agent (background; triggers = the lock and what the run depends on,
#        member_triggers = task fingerprints; run.json per member)
#     -> prime_fleet_file data source (rewards), prime_fleet_artifact (results_path),
#        both checked against each member's run (run_ids)
#
# or, with born_restricted, the lists in the fleet's egress block from the
# first second and no policy after the setup.
#
# or, with setup_mode = "once", the setup once in a template and the fleet
# restored from its checkpoint, restricted right after the restore:
#
#   prime_sandbox.template -> prime_fleet_file.template_task
#     -> prime_fleet_command.template_setup (require_open_egress)
#     -> prime_sandbox_checkpoint.template (DURABLE, then the template deleted)
#     -> prime_sandbox_fleet (checkpoint_id, egress block) -> member tasks
#     -> agent (on members whose lists are enforced) -> rewards, results
#
# A changed setup builds the new template chain first (create_before_destroy)
# and restores the members from the new checkpoint in place, once it is
# DURABLE: a new setup that fails leaves the members as they were.

locals {
  restricted = var.allow != null || var.block != null
  once       = var.setup_mode == "once"
  born       = var.born_restricted && local.restricted
  # The lists in the fleet's egress block: born restricted, or (setup once)
  # restricted right after the restore, before anything runs on a member.
  fleet_egress = local.restricted && (var.born_restricted || local.once)
  # The policy after the setup: restricted, per-member setup, not born
  # restricted.
  lock      = local.restricted && !var.born_restricted && !local.once
  has_setup = length(var.setup_commands) > 0

  # What the template's disk holds: a change replaces the template (a
  # paused template runs nothing), so the setup runs in a new one, is
  # checkpointed again, and the members are restored from the new
  # checkpoint. The task directory's fingerprint is each file's name and
  # hash (prime_fleet_file fingerprints it again, with modes, for the
  # upload).
  template_inputs = local.once ? {
    commands = jsonencode(var.setup_commands)
    env      = jsonencode(var.setup_env)
    env_wo   = tostring(var.setup_env_wo_version)
    task = local.has_task_dir ? sha256(join("\n", [
      for f in sort(fileset(var.task_dir, "**")) : "${f} ${filesha256("${var.task_dir}/${f}")}"
    ])) : ""
  } : null

  # Members whose every setup step succeeded (all members without setup).
  # (With setup once, every member: each was restored from the template's
  # checkpoint, taken after its setup succeeded.)
  # (A member whose setup an update recorded as failed is left out: no
  # agent runs on it; the next apply runs its setup again, first.)
  set_up_ids = local.has_setup && !local.once ? {
    for k, r in prime_fleet_command.setup[0].results : k => r.sandbox_id if !r.failed
  } : prime_sandbox_fleet.this.sandbox_ids

  # Members an agent may run on: the policy (or the born lists) is enforced
  # there, after their setup.
  ready_ids = (
    local.lock ? { for k, m in prime_fleet_egress_policy.this[0].members : k => m.sandbox_id if m.applied && contains(keys(local.set_up_ids), k) } :
    local.fleet_egress ? { for k, id in local.set_up_ids : k => id if prime_sandbox_fleet.this.sandboxes[k].egress_applied } :
    local.set_up_ids
  )

  # Each member's task fingerprint: the sha256 of its uploads (the shared
  # task directory, its own task), for member_triggers. Null without task
  # files, so that a fleet without them plans as before.
  has_task_dir     = var.task_dir != null
  has_member_tasks = length(var.member_tasks) > 0
  task_fingerprints = local.has_task_dir || local.has_member_tasks ? {
    for k in keys(prime_sandbox_fleet.this.sandbox_ids) : k => join(" ", compact([
      # try: a member being added has no upload yet (its sandbox is unknown).
      local.has_task_dir ? try(local.once ? prime_fleet_file.template_task[0].files.template.sha256 : prime_fleet_file.task[0].files[k].sha256, "") : "",
      contains(keys(var.member_tasks), k) ? try(prime_fleet_file.member_task[0].files[k].sha256, "") : "",
    ]))
  } : null

  # The setup's results: every member's, or the template's (key
  # "template"); empty without setup.
  setup_results = (
    !local.has_setup ? {} :
    local.once ? prime_fleet_command.template_setup[0].results :
    prime_fleet_command.setup[0].results
  )
  # Those of members of the fleet as it is, in their current sandbox (and
  # the template's): what the outputs report.
  current_setup = {
    for k, r in local.setup_results : k => r
    if local.once || lookup(prime_sandbox_fleet.this.sandbox_ids, k, null) == r.sandbox_id
  }

  has_agent   = var.agent != null
  has_results = local.has_agent && var.results_path != null
  has_rewards = local.has_agent && var.reward_file != null

  # What an agent names in triggers so that it runs again whenever the
  # members were locked anew: the policy's id changes with every enforced
  # write on the members it holds (a change of the lists or routes) and
  # with its replacement after every setup change (its after names the
  # setup's id).
  # With the lists in the fleet's egress block (setup once, born
  # restricted), a change of the lists updates the members in place, so
  # the lists' digest (known at plan time) joins what the members came
  # from: the checkpoint (a setup change takes a new one and restores every
  # member from it), or the setup, or the fleet.
  lock_base = (
    local.lock ? prime_fleet_egress_policy.this[0].id :
    local.once ? prime_sandbox_checkpoint.template[0].id :
    local.has_setup ? prime_fleet_command.setup[0].id :
    prime_sandbox_fleet.this.id
  )
  lock_id = local.fleet_egress ? "${local.lock_base}/${prime_sandbox_fleet.this.egress.lists_sha256}" : local.lock_base
}

# --- Setup once: the template, its setup, its checkpoint ------------------
#
# The whole chain is create_before_destroy: a changed setup makes a new
# template, runs the new setup in it and takes a new checkpoint while the
# old checkpoint still stands; the fleet restores its members from the new
# checkpoint in place (an update, which Terraform orders after the new
# checkpoint is DURABLE); only then does the old checkpoint go. A new setup
# that fails stops the apply before any member is touched.

# Tracks what the template's disk holds, for its replace_triggered_by.
resource "terraform_data" "template_inputs" {
  count = local.once ? 1 : 0
  input = local.template_inputs

  lifecycle {
    create_before_destroy = true
  }
}

# The template: booted from the image with egress open, set up once,
# checkpointed, then deleted: the checkpoint outlives it, so it is billed
# only until its checkpoint is DURABLE. retire_after_checkpoint keeps it in
# state, retired, so the plan stays empty; a change of what its disk holds
# replaces it (a new setup in a new template), and a checkpoint deleted out
# of band un-retires it (the next apply makes a new template and a new
# checkpoint). No secrets_wo: nothing the agent alone should see goes near
# the checkpoint. Its lifetime is the members' (timeout_minutes), and it has
# no idle timeout.
resource "prime_sandbox" "template" {
  count = local.once ? 1 : 0

  name                    = "${var.name_prefix}-template"
  docker_image            = var.image
  arch                    = var.arch
  cpu_cores               = var.resources.cpu_cores
  memory_gb               = var.resources.memory_gb
  disk_size_gb            = var.resources.disk_size_gb
  gpu_type                = try(var.gpu.type, null)
  gpu_count               = try(var.gpu.count, null)
  timeout_minutes         = var.timeout_minutes
  environment_vars        = length(var.environment) > 0 ? var.environment : null
  region                  = var.region
  team_id                 = var.team_id
  labels                  = length(var.labels) > 0 ? var.labels : null
  retire_after_checkpoint = true

  lifecycle {
    create_before_destroy = true
    replace_triggered_by  = [terraform_data.template_inputs[0]]
  }
}

# The task directory and the trusted setup, on the template alone, with
# egress open (require_open_egress), the same steps and outputs as the
# per-member setup (a fleet of one, keyed "template").
resource "prime_fleet_file" "template_task" {
  count = local.once && local.has_task_dir ? 1 : 0

  sandbox_ids = { template = prime_sandbox.template[0].id }
  path        = var.task_path
  source_dir  = var.task_dir

  lifecycle {
    create_before_destroy = true
  }
}

# A setup that fails is recorded (results["template"].failed), not an
# error here: the checkpoint's precondition then fails the apply in words
# that say what became of the members.
resource "prime_fleet_command" "template_setup" {
  count = local.once && local.has_setup ? 1 : 0

  sandbox_ids         = { template = prime_sandbox.template[0].id }
  commands            = var.setup_commands
  timeout_seconds     = var.setup_timeout_seconds
  env                 = var.setup_env
  env_wo              = var.setup_env_wo
  env_wo_version      = var.setup_env_wo_version
  require_open_egress = true
  on_member_failure   = "record"

  triggers   = local.has_task_dir ? { task = prime_fleet_file.template_task[0].id } : null
  depends_on = [prime_fleet_file.template_task]

  lifecycle {
    create_before_destroy = true
  }
}

# DURABLE before anything is restored from it; then the template is
# deleted (source_after = "delete"). Destroy deletes this checkpoint.
resource "prime_sandbox_checkpoint" "template" {
  count = local.once ? 1 : 0

  sandbox_id   = prime_sandbox.template[0].id
  source_after = "delete"
  triggers     = local.has_setup ? { setup = prime_fleet_command.template_setup[0].id } : null
  depends_on   = [prime_fleet_file.template_task, prime_fleet_command.template_setup]

  timeouts {
    create = var.checkpoint_timeout
  }

  lifecycle {
    create_before_destroy = true

    precondition {
      condition     = !local.has_setup || !try(prime_fleet_command.template_setup[0].results["template"].failed, false)
      error_message = "The setup failed in the new template (${try(prime_sandbox.template[0].id, "")}): see the warning \"Fleet command failed\" above for its steps' exit codes and output. No checkpoint was taken from it, so no member was touched: every member, its results and its rewards are still those of the previous setup's checkpoint. Fix setup_commands (or the task) and apply again; the template that failed is deleted by that apply."
    }
  }
}

resource "prime_sandbox_fleet" "this" {
  name_prefix = var.name_prefix
  members     = var.members
  size        = var.size

  # Setup once: every member restored from the template's checkpoint (its
  # image and disk come with it).
  checkpoint_id        = local.once ? prime_sandbox_checkpoint.template[0].id : null
  docker_image         = local.once ? null : var.image
  arch                 = var.arch
  cpu_cores            = var.resources.cpu_cores
  memory_gb            = var.resources.memory_gb
  disk_size_gb         = local.once ? null : var.resources.disk_size_gb
  gpu_type             = try(var.gpu.type, null)
  gpu_count            = try(var.gpu.count, null)
  timeout_minutes      = var.timeout_minutes
  idle_timeout_minutes = var.idle_timeout_minutes
  environment_vars     = length(var.environment) > 0 ? var.environment : null
  secrets_wo           = var.secrets_wo
  secrets_wo_version   = var.secrets_wo_version
  region               = var.region
  team_id              = var.team_id
  start_argv           = var.start_argv
  labels               = length(var.labels) > 0 ? var.labels : null

  # born_restricted: the lists are in the create request; create returns
  # once every member enforces them, or fails closed. Setup once: the same
  # block, written right after each restore with the same fail-closed wait,
  # so no member runs anything before its lists are enforced.
  dynamic "egress" {
    for_each = local.fleet_egress ? [1] : []
    content {
      allow  = var.allow
      block  = var.block
      routes = length(var.routes) > 0 ? var.routes : null
    }
  }

  timeouts {
    egress = var.policy_timeout
  }
}

# The task files, before the setup: the shared task directory on every
# member, and each member's own task. A change of one member's task
# uploads to that member only.
resource "prime_fleet_file" "task" {
  count = local.has_task_dir && !local.once ? 1 : 0

  sandbox_ids = prime_sandbox_fleet.this.sandbox_ids
  path        = var.task_path
  source_dir  = var.task_dir
}

resource "prime_fleet_file" "member_task" {
  count = local.has_member_tasks ? 1 : 0

  sandbox_ids = { for k, id in prime_sandbox_fleet.this.sandbox_ids : k => id if contains(keys(var.member_tasks), k) }
  path        = var.member_task_path
  members     = { for k, t in var.member_tasks : k => { source_dir = t.dir, content = t.content } }
}

# Trusted setup, every step on every member. require_open_egress refuses
# to run a step on a member whose egress is restricted, so a changed setup
# can never run silently under the agent's lock.
resource "prime_fleet_command" "setup" {
  count = local.has_setup && !local.once ? 1 : 0

  sandbox_ids         = prime_sandbox_fleet.this.sandbox_ids
  commands            = var.setup_commands
  timeout_seconds     = var.setup_timeout_seconds
  env                 = var.setup_env
  env_wo              = var.setup_env_wo
  env_wo_version      = var.setup_env_wo_version
  require_open_egress = !local.born

  # A changed task directory runs the setup again, which re-opens and
  # re-locks egress: the upload's id is the fingerprint of its bytes, known
  # at plan time, and members joining with the same task keep it. Member
  # tasks are for the agent: their changes re-run only its members.
  triggers   = local.has_task_dir ? { task = prime_fleet_file.task[0].id } : null
  depends_on = [prime_fleet_file.task, prime_fleet_file.member_task]
}

# The agent-phase policy, written once every member's setup succeeded;
# create returns once every member enforces it, or fails closed. after
# names the setup's id: a changed setup replaces this policy, so one apply
# restores open egress, runs the new setup and locks again.
resource "prime_fleet_egress_policy" "this" {
  count = local.lock ? 1 : 0

  sandbox_ids = prime_sandbox_fleet.this.sandbox_ids
  allow       = var.allow
  block       = var.block
  routes      = length(var.routes) > 0 ? var.routes : null
  after       = prime_fleet_command.setup[*].id

  timeouts {
    create = var.policy_timeout
    update = var.policy_timeout
    delete = var.policy_timeout
  }
}

# --- The agent, its run records and its results ---------------------------

locals {
  # Where the agent's records and results land on local disk:
  # <results_dir>/progress.json while it runs, and per member
  # <results_dir>/<key>/run.json (its run's provenance), its logs, and
  # <results_dir>/<key>/results (results_path, downloaded).
  results_dir = coalesce(var.results_local_dir, "${path.root}/results")

  # The task directory's fingerprint (each file's name and hash), and the
  # setup's: what the members' disks were prepared from.
  task_dir_sha256 = local.has_task_dir ? sha256(join("\n", [
    for f in sort(fileset(var.task_dir, "**")) : "${f} ${filesha256("${var.task_dir}/${f}")}"
  ])) : null
  setup_sha256 = local.has_setup ? sha256(jsonencode({
    commands = var.setup_commands, env = var.setup_env, env_wo_version = var.setup_env_wo_version, task = local.task_dir_sha256
  })) : null

  # What the agent's run depends on besides its member's task: a change of
  # any of them runs every member's agent again, and each run's record
  # (run.json, the runs output) names them. The lock: relocked members run
  # again under the new lists (lock_id changes with every enforced write;
  # the lists' digest is the lists themselves). What the members' disks
  # came from: the image, the checkpoint (setup once), the setup.
  agent_triggers = merge(
    { lock = local.lock_id, image = var.image },
    local.restricted ? { lists_sha256 = local.lock ? prime_fleet_egress_policy.this[0].lists_sha256 : prime_sandbox_fleet.this.egress.lists_sha256 } : {},
    local.once ? { checkpoint_id = prime_sandbox_checkpoint.template[0].id } : {},
    local.has_setup ? { setup_sha256 = local.setup_sha256 } : {},
  )
}

# The optional agent: only on ready members, after the task files are in,
# as background jobs unless the caller says otherwise; again on every
# member after every re-lock or change of what it depends on
# (agent_triggers), and on one member alone when its task changes.
resource "prime_fleet_command" "agent" {
  count = local.has_agent ? 1 : 0

  sandbox_ids        = local.ready_ids
  commands           = var.agent.commands
  background         = var.agent.background
  timeout_seconds    = var.agent.timeout_seconds
  allowed_exit_codes = var.agent.allowed_exit_codes
  env                = var.agent.env
  member_env         = var.agent.member_env
  max_concurrency    = var.agent.max_concurrency
  on_member_failure  = var.on_member_failure
  triggers           = local.agent_triggers
  member_triggers    = local.task_fingerprints == null ? null : { for k, _ in local.ready_ids : k => local.task_fingerprints[k] }
  # progress.json while it runs, and each member's run.json and logs.
  output_dir = local.results_dir
  # The reward and the results are removed right before every run, so a
  # run that ends before writing them reads as missing, never as the
  # previous run's; the run leaves its stamp beside them, which the reads
  # below check each result against.
  result_paths = length(compact([var.reward_file, var.results_path])) > 0 ? compact([var.reward_file, var.results_path]) : null
}

locals {
  # The agent's current runs: members of the fleet as it is now whose run
  # was in their current sandbox. After an apply that failed part-way
  # (the fleet changed, the agent did not run again), a member whose
  # sandbox changed, or that left the fleet, has no current run: the
  # outputs leave it out, and failures says why.
  agent_results = local.has_agent ? prime_fleet_command.agent[0].results : {}
  current_runs = {
    for k, r in local.agent_results : k => r
    if lookup(prime_sandbox_fleet.this.sandbox_ids, k, null) == r.sandbox_id
  }
  # Members whose current run succeeded: the reward reads wait for them
  # through these keys, and check their run (run_ids).
  agent_ids     = { for k, r in local.current_runs : k => r.sandbox_id if !r.failed }
  agent_run_ids = { for k, r in local.current_runs : k => r.run_id if !r.failed }
}

# Each member's reward, read once its agent succeeded, and only if its
# run wrote it (run_ids); a member that wrote no file reads as missing,
# and `rewards` reports null for it.
data "prime_fleet_file" "reward" {
  count = local.has_rewards ? 1 : 0

  sandbox_ids   = local.agent_ids
  path          = var.reward_file
  allow_missing = true
  run_ids       = local.agent_run_ids
}

# Each member's results directory to <results_dir>/<key>/results once its
# current run ended — failed runs too, whose transcripts explain them —
# again for a member whenever its agent ran again (its run ID changed),
# and only what that run wrote: a run that wrote none (or failed before it
# started) removes the earlier run's download.
resource "prime_fleet_artifact" "results" {
  count = local.has_results ? 1 : 0

  sandbox_ids   = { for k, r in local.current_runs : k => r.sandbox_id }
  remote_path   = var.results_path
  kind          = "directory"
  local_path    = "${local.results_dir}/{key}/results"
  allow_missing = true
  run_ids       = { for k, r in local.current_runs : k => r.run_id }
}
