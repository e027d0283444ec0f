# An evaluation fleet whose members run different tasks: one member per
# task directory.
locals {
  tasks = toset(["a", "b"])
}

resource "prime_sandbox_fleet" "eval" {
  name_prefix  = "eval-run-42"
  members      = local.tasks
  docker_image = "python:3.12-slim"
}

# The same harness on every member: read and archived once, uploaded to
# the members concurrently.
resource "prime_fleet_file" "harness" {
  sandbox_ids = prime_sandbox_fleet.eval.sandbox_ids
  path        = "/opt/harness"
  source_dir  = "${path.module}/shared"
}

# Each member's own task. Changing one task uploads to that member only.
resource "prime_fleet_file" "task" {
  sandbox_ids = prime_sandbox_fleet.eval.sandbox_ids
  path        = "/task"
  members = {
    for k in local.tasks : k => { source_dir = "${path.module}/tasks/${k}" }
  }
}

# The agent runs again on every member when the harness changes (its id is
# the fingerprint of the bytes), and on one member alone when its own task
# does (that member's sha256).
resource "prime_fleet_command" "agent" {
  sandbox_ids     = prime_fleet_file.task.sandbox_ids
  commands        = ["python /opt/harness/run.py /task"]
  triggers        = { harness = prime_fleet_file.harness.id }
  member_triggers = { for k, f in prime_fleet_file.task.files : k => f.sha256 }
}
