# eval-fleet: one VM sandbox per name, trusted setup with egress open, then
# the agent-phase egress policy, enforced before the module reports the
# sandboxes ready. The agent itself is left to the caller: run it on
# module.<name>.ready_sandbox_ids, which only resolve once every policy is
# enforced.

locals {
  restricted = var.allow != null || var.block != null

  # setup_commands as eight fixed steps: step i runs command i in every
  # sandbox, and is empty when there is no command i. Resources, not a
  # single script, so each step's output and exit code are visible.
  max_setup_steps = 8
  setup_steps = [
    for i in range(local.max_setup_steps) : (
      i < length(var.setup_commands) ? { for n in var.sandbox_names : n => var.setup_commands[i] } : {}
    )
  ]
}

# Changing the setup replaces the sandboxes: a setup step re-run on a
# sandbox whose agent-phase policy is already enforced would run restricted.
resource "terraform_data" "setup" {
  triggers_replace = var.setup_commands
}

resource "prime_sandbox" "this" {
  for_each = var.sandbox_names

  name         = each.key
  docker_image = var.image
  vm           = true # egress policies are VM-only
  cpu_cores    = var.resources.cpu_cores
  memory_gb    = var.resources.memory_gb
  disk_size_gb = var.resources.disk_size_gb
  labels       = var.labels

  lifecycle {
    replace_triggered_by = [terraform_data.setup]
  }
}

resource "prime_sandbox_command" "setup_0" {
  for_each        = local.setup_steps[0]
  sandbox_id      = prime_sandbox.this[each.key].id
  command         = each.value
  timeout_seconds = var.setup_timeout_seconds
}

resource "prime_sandbox_command" "setup_1" {
  for_each        = local.setup_steps[1]
  sandbox_id      = prime_sandbox.this[each.key].id
  command         = each.value
  timeout_seconds = var.setup_timeout_seconds
  depends_on      = [prime_sandbox_command.setup_0]
}

resource "prime_sandbox_command" "setup_2" {
  for_each        = local.setup_steps[2]
  sandbox_id      = prime_sandbox.this[each.key].id
  command         = each.value
  timeout_seconds = var.setup_timeout_seconds
  depends_on      = [prime_sandbox_command.setup_1]
}

resource "prime_sandbox_command" "setup_3" {
  for_each        = local.setup_steps[3]
  sandbox_id      = prime_sandbox.this[each.key].id
  command         = each.value
  timeout_seconds = var.setup_timeout_seconds
  depends_on      = [prime_sandbox_command.setup_2]
}

resource "prime_sandbox_command" "setup_4" {
  for_each        = local.setup_steps[4]
  sandbox_id      = prime_sandbox.this[each.key].id
  command         = each.value
  timeout_seconds = var.setup_timeout_seconds
  depends_on      = [prime_sandbox_command.setup_3]
}

resource "prime_sandbox_command" "setup_5" {
  for_each        = local.setup_steps[5]
  sandbox_id      = prime_sandbox.this[each.key].id
  command         = each.value
  timeout_seconds = var.setup_timeout_seconds
  depends_on      = [prime_sandbox_command.setup_4]
}

resource "prime_sandbox_command" "setup_6" {
  for_each        = local.setup_steps[6]
  sandbox_id      = prime_sandbox.this[each.key].id
  command         = each.value
  timeout_seconds = var.setup_timeout_seconds
  depends_on      = [prime_sandbox_command.setup_5]
}

resource "prime_sandbox_command" "setup_7" {
  for_each        = local.setup_steps[7]
  sandbox_id      = prime_sandbox.this[each.key].id
  command         = each.value
  timeout_seconds = var.setup_timeout_seconds
  depends_on      = [prime_sandbox_command.setup_6]
}

# The agent-phase policy, written only after every setup step succeeded.
# Create and update return once the data plane enforces it, or fail closed.
resource "prime_egress_policy" "this" {
  for_each = local.restricted ? var.sandbox_names : toset([])

  sandbox_id = prime_sandbox.this[each.key].id
  allow      = var.allow
  block      = var.block
  routes     = var.routes

  timeouts {
    create = var.policy_timeout
    update = var.policy_timeout
    delete = var.policy_timeout
  }

  depends_on = [
    prime_sandbox_command.setup_0,
    prime_sandbox_command.setup_1,
    prime_sandbox_command.setup_2,
    prime_sandbox_command.setup_3,
    prime_sandbox_command.setup_4,
    prime_sandbox_command.setup_5,
    prime_sandbox_command.setup_6,
    prime_sandbox_command.setup_7,
  ]
}
