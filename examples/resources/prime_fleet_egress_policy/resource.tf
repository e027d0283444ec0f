# One egress policy on every member of a fleet. Create returns only once
# every member's data plane enforces it; a member that is not enforced in
# time fails the apply closed (naming each such member), and nothing that
# depends on the policy starts.
resource "prime_sandbox_fleet" "eval" {
  name_prefix  = "eval-run-7"
  members      = ["swe_101", "swe_102", "swe_103"]
  docker_image = "python:3.12-slim"
}

resource "prime_fleet_command" "setup" {
  sandbox_ids         = prime_sandbox_fleet.eval.sandbox_ids
  commands            = ["git clone https://github.com/example/task.git /workspace/task"]
  require_open_egress = true
}

resource "prime_fleet_egress_policy" "lock" {
  sandbox_ids = prime_sandbox_fleet.eval.sandbox_ids

  # Every member reaches only the interception route and these hosts.
  allow  = ["api.github.com", "example.com"]
  routes = ["https://intercept.example.net/v1"]

  # Replaced (reopen -> new setup -> lock) whenever the setup changes.
  after = [prime_fleet_command.setup.id]

  timeouts {
    create = "2m" # per member, from the platform's acceptance
    update = "2m"
    delete = "2m" # restoring open egress on removed members (a destroy waits 10s at most)
  }
}

# The agent on every member, again after every re-lock: the lock's id
# changes whenever the members it holds are written again.
resource "prime_fleet_command" "agent" {
  sandbox_ids = prime_fleet_egress_policy.lock.sandbox_ids
  commands    = ["python /workspace/task/agent.py"]
  triggers    = { lock = prime_fleet_egress_policy.lock.id }
}

# Per member: the generation written and whether the data plane enforces it.
output "lock_enforced" {
  value = { for k, m in prime_fleet_egress_policy.lock.members : k => m.applied }
}
