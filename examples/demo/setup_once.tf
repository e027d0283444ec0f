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
# with the checkpoint) and the allowlist's reach. Its second apply widens
# the allowlist (-var 'once_allow=["example.com","google.com"]'): the
# members are relocked in place, and because the agent names the lists'
# digest in its triggers, every member's agent runs again under the new
# lists, and nothing else runs; each reward is printed with its run's
# provenance.

# The setup-once members' allowlist: `make demo`'s second apply widens it.
variable "once_allow" {
  description = "Allowlist of the setup-once members."
  type        = list(string)
  default     = ["example.com"]
}

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
    allow  = var.once_allow
    routes = local.routes
  }
}

resource "prime_fleet_file" "once_scenario" {
  sandbox_ids = prime_sandbox_fleet.once.sandbox_ids
  path        = "/task/scenario.json"
  content     = jsonencode({ name = "setup-once", born_restricted = false })
}

# Only on members whose lists are enforced; again on every member when the
# checkpoint, the scenario or the lists change (the lists change in place,
# so their digest, known at plan time, is what says so). /results is
# cleared before every run, which leaves the run's stamp.
resource "prime_fleet_command" "once_agent" {
  sandbox_ids     = { for k, s in prime_sandbox_fleet.once.sandboxes : k => s.id if s.egress_applied }
  commands        = ["sh /task/agent.sh"]
  background      = true
  timeout_seconds = 600
  result_paths    = ["/results"]
  triggers = {
    checkpoint = prime_sandbox_checkpoint.once.id
    scenario   = prime_fleet_file.once_scenario.id
    lists      = prime_sandbox_fleet.once.egress.lists_sha256
  }
}

# Each reward, only if its member's current run wrote it.
data "prime_fleet_file" "once_result" {
  sandbox_ids   = { for k, r in prime_fleet_command.once_agent.results : k => r.sandbox_id }
  path          = "/results/reward.json"
  allow_missing = true
  run_ids       = { for k, r in prime_fleet_command.once_agent.results : k => r.run_id }
}

output "setup_once" {
  value = {
    template_id   = prime_sandbox.once_template.id
    checkpoint_id = prime_sandbox_checkpoint.once.id
    member_ids    = prime_sandbox_fleet.once.sandbox_ids
    lists_sha256  = prime_sandbox_fleet.once.egress.lists_sha256
    results       = { for k, f in data.prime_fleet_file.once_result.files : k => f.exists ? jsondecode(f.content) : null }
    # Where each reward came from: its run, what the member was restored
    # from, the lists its sandbox enforced when the run started.
    runs = {
      for k, r in prime_fleet_command.once_agent.results : k => {
        run_id            = r.run_id
        sandbox_id        = r.sandbox_id
        from              = "checkpoint ${prime_sandbox_checkpoint.once.id}"
        started_at        = r.started_at
        ended_at          = r.executed_at
        exit_code         = r.exit_code
        egress_generation = r.egress_generation
        egress_sha256     = r.egress_sha256
        lists_sha256      = prime_sandbox_fleet.once.egress.lists_sha256
        commands_sha256   = prime_fleet_command.once_agent.commands_sha256
        reward_run_id     = data.prime_fleet_file.once_result.files[k].run_id
      }
    }
  }
}
