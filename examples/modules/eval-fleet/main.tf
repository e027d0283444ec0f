# eval-fleet: a fleet of VM sandboxes, trusted setup with egress open, then
# the agent-phase egress policy, enforced before anything runs on
# ready_sandbox_ids (the optional agent included):
#
#   prime_sandbox_fleet -> prime_fleet_command.setup (require_open_egress)
#     -> prime_fleet_egress_policy (after = [setup id]) -> agent (triggers = policy id)
#
# or, with born_restricted, the lists in the fleet's egress block from the
# first second and no policy after the setup.

locals {
  restricted = var.allow != null || var.block != null
  born       = var.born_restricted && local.restricted
  # The policy after the setup: restricted, not born restricted.
  lock      = local.restricted && !var.born_restricted
  has_setup = length(var.setup_commands) > 0

  # Members whose every setup step succeeded (all members without setup).
  set_up_ids = local.has_setup ? {
    for k, r in prime_fleet_command.setup[0].results : k => r.sandbox_id
  } : prime_sandbox_fleet.this.sandbox_ids

  # Members an agent may run on: the policy (or the born lists) is enforced
  # there, after their setup.
  ready_ids = (
    local.lock ? { for k, m in prime_fleet_egress_policy.this[0].members : k => m.sandbox_id if m.applied } :
    local.born ? { for k, id in local.set_up_ids : k => id if prime_sandbox_fleet.this.sandboxes[k].egress_applied } :
    local.set_up_ids
  )

  # What an agent names in triggers so that it runs again whenever the
  # members were set up and locked anew: the policy is replaced after every
  # setup change (its after names the setup's id).
  lock_id = (
    local.lock ? prime_fleet_egress_policy.this[0].id :
    local.has_setup ? prime_fleet_command.setup[0].id :
    prime_sandbox_fleet.this.id
  )
}

resource "prime_sandbox_fleet" "this" {
  name_prefix = var.name_prefix
  members     = var.members
  size        = var.size

  docker_image         = var.image
  vm                   = true # egress policies are VM-only
  cpu_cores            = var.resources.cpu_cores
  memory_gb            = var.resources.memory_gb
  disk_size_gb         = var.resources.disk_size_gb
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
  # once every member enforces them, or fails closed.
  dynamic "egress" {
    for_each = local.born ? [1] : []
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

# Trusted setup, every step on every member. require_open_egress refuses
# to run a step on a member whose egress is restricted, so a changed setup
# can never run silently under the agent's lock.
resource "prime_fleet_command" "setup" {
  count = local.has_setup ? 1 : 0

  sandbox_ids         = prime_sandbox_fleet.this.sandbox_ids
  commands            = var.setup_commands
  timeout_seconds     = var.setup_timeout_seconds
  env                 = var.setup_env
  env_wo              = var.setup_env_wo
  env_wo_version      = var.setup_env_wo_version
  require_open_egress = !local.born
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

# The optional agent: only on ready members, and again after every re-lock.
resource "prime_fleet_command" "agent" {
  count = var.agent != null ? 1 : 0

  sandbox_ids        = local.ready_ids
  commands           = var.agent.commands
  timeout_seconds    = var.agent.timeout_seconds
  allowed_exit_codes = var.agent.allowed_exit_codes
  env                = var.agent.env
  max_concurrency    = var.agent.max_concurrency
  triggers           = { lock = local.lock_id }
}
