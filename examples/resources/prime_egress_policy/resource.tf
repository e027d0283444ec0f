# The setup-then-restrict protocol: sandbox -> trusted setup with the
# network open -> egress policy -> agent. Each step depends on the previous
# one; the agent only starts once the data plane enforces the policy.
resource "prime_sandbox" "box" {
  name         = "eval-rollout-1"
  docker_image = "python:3.12-slim"
  vm           = true # egress policies need a VM sandbox
}

resource "prime_sandbox_command" "setup" {
  sandbox_id = prime_sandbox.box.id
  command    = "pip install -r /workspace/requirements.txt"
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

  timeouts {
    create = "2m"
  }

  depends_on = [prime_sandbox_command.setup]
}

resource "prime_sandbox_command" "agent" {
  sandbox_id = prime_sandbox.box.id
  command    = "python -m agent --task /workspace/task.json"

  depends_on = [prime_egress_policy.lock]
}

# A blocklist instead: everything but these destinations is reachable.
resource "prime_sandbox" "open_box" {
  name         = "eval-rollout-2"
  docker_image = "python:3.12-slim"
  vm           = true
}

resource "prime_egress_policy" "deny_some" {
  sandbox_id = prime_sandbox.open_box.id
  block      = ["example.com", "203.0.113.7"]
}
