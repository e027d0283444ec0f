# An evaluation fleet whose members run different tasks: one member per
# task directory.
locals {
  tasks = toset(["a", "b"])
}

resource "prime_sandbox_fleet" "eval" {
  name_prefix  = "eval-run-42"
  members      = local.tasks
  docker_image = "python:3.12-slim"
  vm           = true
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
