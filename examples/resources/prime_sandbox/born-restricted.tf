# Born restricted: the egress lists travel in the create request, so the
# sandbox never has an open second. Create returns only once the data plane
# enforces them, or fails closed after timeouts.egress with the sandbox in
# state, tainted, and nothing that depends on it started. Use it when setup
# is baked into the image or needs only allowlisted hosts.
resource "prime_sandbox" "born_restricted" {
  name         = "eval-born-restricted"
  docker_image = "python:3.12-slim"

  egress {
    allow  = ["pypi.org", "files.pythonhosted.org"]
    routes = ["https://intercept.example.net/v1"] # always reachable
  }

  timeouts {
    egress = "2m"
  }
}

# Setup runs under the born allowlist. It must not set require_open_egress:
# this sandbox is never open, so such a step would refuse to run.
resource "prime_sandbox_command" "born_setup" {
  sandbox_id = prime_sandbox.born_restricted.id
  command    = "pip install --no-cache-dir requests==2.32.3"
}

# Layered on top for the agent: only the routes. Destroying (or replacing)
# this policy restores the born lists, never an open policy.
resource "prime_egress_policy" "born_agent_lock" {
  sandbox_id = prime_sandbox.born_restricted.id
  allow      = []
  routes     = ["https://intercept.example.net/v1"]
  after      = [prime_sandbox_command.born_setup.id]
}

resource "prime_sandbox_command" "born_agent" {
  sandbox_id = prime_egress_policy.born_agent_lock.sandbox_id
  command    = "python -m agent --task /workspace/task.json"
  triggers   = { lock = prime_egress_policy.born_agent_lock.id }
}
