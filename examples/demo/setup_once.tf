# Setup once, fan out: next to the rows above, which each run the trusted
# setup in their own sandbox, the same evaluation with the setup run once.
#
#   template (network open) -> task in -> setup -> checkpoint (DURABLE,
#     then the template paused) -> members restored from it, each
#     restricted right after its restore -> its scenario in -> agent
#
# `make demo` checks in the platform's event log that the setup ran once,
# on the template, and that every member's lists were enforced before its
# agent started; every member's result shows the setup's files (they came
# with the checkpoint) and the allowlist's reach.

locals {
  once_members = toset(["r1", "r2", "r3"])
}

resource "prime_sandbox" "once_template" {
  name         = "demo-once-template"
  docker_image = "python:3.12-slim"
  labels       = ["demo"]
}

resource "prime_sandbox_file" "once_task" {
  sandbox_id = prime_sandbox.once_template.id
  path       = "/task"
  source_dir = "${path.module}/task"
}

# The same setup as the rows', once, with the network open.
resource "prime_sandbox_command" "once_setup" {
  sandbox_id          = prime_sandbox.once_template.id
  command             = "sh /task/setup.sh"
  require_open_egress = true
  triggers            = { task = prime_sandbox_file.once_task.id }
}

# Returns once the checkpoint is DURABLE, then pauses the template (disk
# billing only). Destroy deletes it and the checkpoint the pause took.
resource "prime_sandbox_checkpoint" "once" {
  sandbox_id   = prime_sandbox.once_template.id
  source_after = "pause"
  triggers     = { setup = prime_sandbox_command.once_setup.id }
}

# Every member restored from the checkpoint (its image and disk come with
# it), and restricted right after its restore, with the same fail-closed
# wait as a policy: create returns once every member enforces the lists.
resource "prime_sandbox_fleet" "once" {
  name_prefix   = "demo-once"
  members       = local.once_members
  checkpoint_id = prime_sandbox_checkpoint.once.id
  labels        = ["demo"]

  egress {
    allow  = ["example.com"]
    routes = local.routes
  }
}

resource "prime_fleet_file" "once_scenario" {
  sandbox_ids = prime_sandbox_fleet.once.sandbox_ids
  path        = "/task/scenario.json"
  content     = jsonencode({ name = "setup-once", born_restricted = false })
}

# Only on members whose lists are enforced.
resource "prime_fleet_command" "once_agent" {
  sandbox_ids     = { for k, s in prime_sandbox_fleet.once.sandboxes : k => s.id if s.egress_applied }
  commands        = ["sh /task/agent.sh"]
  background      = true
  timeout_seconds = 600
  triggers        = { checkpoint = prime_sandbox_checkpoint.once.id, scenario = prime_fleet_file.once_scenario.id }
}

data "prime_fleet_file" "once_result" {
  sandbox_ids   = { for k, r in prime_fleet_command.once_agent.results : k => r.sandbox_id }
  path          = "/results/reward.json"
  allow_missing = true
}

output "setup_once" {
  value = {
    template_id   = prime_sandbox.once_template.id
    checkpoint_id = prime_sandbox_checkpoint.once.id
    member_ids    = prime_sandbox_fleet.once.sandbox_ids
    results       = { for k, f in data.prime_fleet_file.once_result.files : k => f.exists ? jsondecode(f.content) : null }
  }
}
