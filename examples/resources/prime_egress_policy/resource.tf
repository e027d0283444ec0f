# The setup-then-restrict protocol, safe on day two:
#   sandbox -> setup (network open) -> egress policy -> agent.
# Change the setup command later and one apply reopens egress, runs the new
# setup with the network open, locks again and only then runs the agent.
resource "prime_sandbox" "box" {
  name         = "eval-rollout-1"
  docker_image = "python:3.12-slim"
}

resource "prime_sandbox_command" "setup" {
  sandbox_id          = prime_sandbox.box.id
  command             = "pip install -r /workspace/requirements.txt"
  require_open_egress = true # never run under a lock
}

resource "prime_egress_policy" "lock" {
  sandbox_id = prime_sandbox.box.id

  # Only these destinations, plus the hosts of routes, are reachable.
  # allow = [] would leave only the routes.
  allow = [
    "pypi.org",
    "files.pythonhosted.org",
    "github.com",
    "*.github.com", # names under github.com, not github.com itself
    "10.20.0.0/16",
  ]

  # Framework endpoints the agent must always reach; their hosts are put in
  # front of the allowlist.
  routes = ["https://intercept.example.net/v1"]

  # Written after the setup, and replaced whenever a setup step changes (its
  # id changes): destroy reopens egress, the new setup runs, the lock comes
  # back.
  after = [prime_sandbox_command.setup.id]

  timeouts {
    create = "2m"
  }
}

resource "prime_sandbox_command" "agent" {
  sandbox_id = prime_egress_policy.lock.sandbox_id # once the lock is enforced
  command    = "python -m agent --task /workspace/task.json"

  # The policy's id changes with every enforced write (a re-lock after a
  # setup change, a change of allow, block or routes), so the agent runs
  # again under the new lock rather than keeping a result from the old one.
  triggers = {
    lock = prime_egress_policy.lock.id
  }
}

# A blocklist instead: everything but these destinations is reachable.
resource "prime_sandbox" "open_box" {
  name         = "eval-rollout-2"
  docker_image = "python:3.12-slim"
}

resource "prime_egress_policy" "deny_some" {
  sandbox_id = prime_sandbox.open_box.id
  block      = ["example.com", "203.0.113.7"]
}
