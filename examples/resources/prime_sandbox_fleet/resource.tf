# An evaluation fleet as one resource: every member's create goes out at
# once and the apply returns when all of them are RUNNING and reachable
# through the gateway. Members are named <name_prefix>-<key>, here
# eval-run-42-task_001 and so on; keys without "-" keep those names
# splittable, which an import relies on.
resource "prime_sandbox_fleet" "eval" {
  name_prefix  = "eval-run-42"
  members      = ["task_001", "task_002", "task_003"]
  docker_image = "python:3.12-slim"

  cpu_cores       = 2
  memory_gb       = 4
  timeout_minutes = 120
  labels          = ["eval-run-42"] # find, clean up or import the fleet by label

  timeouts {
    create = "20m"
    delete = "10m"
  }
}

# Numbered members "0" … "19": changing size adds or removes members in
# place (the highest keys go first), and a member deleted out of band is
# created again in place by the next apply. This fleet is born restricted:
# every member's create carries the lists, enforced before the apply returns.
resource "prime_sandbox_fleet" "pool" {
  name_prefix  = "eval-pool"
  size         = 20
  docker_image = "python:3.12-slim"

  egress {
    allow  = ["pypi.org", "files.pythonhosted.org"]
    routes = ["https://intercept.example.net/v1"]
  }
}

# Member key -> sandbox ID, what prime_fleet_command and
# prime_fleet_egress_policy take.
output "eval_sandbox_ids" {
  value = prime_sandbox_fleet.eval.sandbox_ids
}
