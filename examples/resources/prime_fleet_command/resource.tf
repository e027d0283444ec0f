# The whole protocol on every member of a fleet, as four resources:
#   fleet -> setup (network open) -> lock -> agent.
# Terraform orders resource blocks, not instances, so a fleet written with
# count or for_each moves phase by phase anyway; these resources run each
# phase on every member concurrently and report every failed member at once.
resource "prime_sandbox_fleet" "eval" {
  name_prefix  = "eval-run-42"
  size         = 20
  docker_image = "python:3.12-slim"
}

# Setup steps run in order on each member; a member stops at its first step
# with a disallowed exit code, the others go on. require_open_egress makes
# each member refuse, before its first step, if its egress is restricted.
resource "prime_fleet_command" "setup" {
  sandbox_ids = prime_sandbox_fleet.eval.sandbox_ids
  commands = [
    "pip install -r /workspace/requirements.txt",
    "python /workspace/prepare.py",
  ]
  require_open_egress = true
  timeout_seconds     = 900 # per step, per member
  max_concurrency     = 10
}

# The lock on every member, after the setup. A change of the setup steps
# gives the setup a new id, which replaces the lock: one apply reopens every
# member, runs the new setup, and locks again.
resource "prime_fleet_egress_policy" "lock" {
  sandbox_ids = prime_sandbox_fleet.eval.sandbox_ids
  allow       = ["pypi.org"]
  routes      = ["https://intercept.example.net/v1"]
  after       = [prime_fleet_command.setup.id]
}

# The agent, once every member enforces the lock, and again after every
# re-lock: the lock's id changes with every write on the members it holds
# (a setup change, a change of allow, block or routes). When the fleet
# grows, only the new members run (setup, lock and agent alike); results of
# the others are kept. A member that crashes is recorded as failed (and
# runs again on the next apply); the apply goes on.
resource "prime_fleet_command" "agent" {
  sandbox_ids        = prime_fleet_egress_policy.lock.sandbox_ids
  commands           = ["python /workspace/agent.py --out /results"]
  allowed_exit_codes = [0, 1] # 1: the agent ran and failed the task
  timeout_seconds    = 3600
  result_paths       = ["/results"]        # removed before every run
  output_dir         = "${path.root}/runs" # each member's run.json: the run's provenance
  on_member_failure  = "record"

  triggers = {
    lock = prime_fleet_egress_policy.lock.id
  }
}

output "agent_exit_codes" {
  value = { for k, r in prime_fleet_command.agent.results : k => r.exit_code if !r.failed }
}

output "agent_failures" {
  value = { for k, r in prime_fleet_command.agent.results : k => r.error if r.failed }
}
