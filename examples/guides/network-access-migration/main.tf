terraform {
  required_providers {
    prime = {
      source = "primeintellect/prime"
    }
  }
}

# The verifiers framework's network_access = false becomes a VM sandbox
# plus allow = []: all agent-phase egress denied except the framework
# routes, applied after the trusted setup, as the framework does it.
resource "prime_sandbox" "restricted" {
  name         = "eval-restricted"
  docker_image = "python:3.12-slim"
}

resource "prime_sandbox_command" "setup" {
  sandbox_id          = prime_sandbox.restricted.id
  command             = "pip install -r /workspace/requirements.txt"
  require_open_egress = true
}

resource "prime_egress_policy" "restricted" {
  sandbox_id = prime_sandbox.restricted.id
  allow      = []
  routes     = ["https://intercept.example.net/v1"]
  after      = [prime_sandbox_command.setup.id]
}

resource "prime_sandbox_command" "agent" {
  sandbox_id = prime_egress_policy.restricted.sandbox_id
  command    = "python -m agent --task /workspace/task.json"
  triggers   = { lock = prime_egress_policy.restricted.id }
}

# When no setup step needs the network, the same restriction can start at
# creation instead: born restricted, never open.
resource "prime_sandbox" "born_restricted" {
  name         = "eval-born-restricted"
  docker_image = "python:3.12-slim"

  egress {
    allow  = []
    routes = ["https://intercept.example.net/v1"]
  }
}

# network_access = true (the framework's default) is no policy at all.
resource "prime_sandbox" "open" {
  name         = "eval-open"
  docker_image = "python:3.12-slim"
}
