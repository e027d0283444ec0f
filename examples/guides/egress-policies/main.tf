terraform {
  required_providers {
    prime = {
      source = "primeintellect/prime"
    }
  }
}

provider "prime" {}

variable "interception_url" {
  description = "LLM interception endpoint the agent must always reach."
  type        = string
  default     = "https://intercept.example.net/v1"
}

# 1. Provision. Egress policies need a VM sandbox; create returns once it
#    is RUNNING.
resource "prime_sandbox" "rollout" {
  name         = "eval-rollout-1"
  docker_image = "python:3.12-slim"
  vm           = true
  labels       = ["eval-fleet"]
}

# 2. Trusted setup, with the network still open: install dependencies,
#    fetch the task.
resource "prime_sandbox_command" "setup" {
  sandbox_id      = prime_sandbox.rollout.id
  command         = "pip install -r /workspace/requirements.txt && python -m fetch_task"
  timeout_seconds = 900
}

# 3. Restrict. The policy is written only after setup succeeded, and the
#    apply returns only once the data plane enforces it (or fails closed
#    after the timeout).
resource "prime_egress_policy" "lock" {
  sandbox_id = prime_sandbox.rollout.id
  allow      = ["github.com", "*.github.com"]
  routes     = [var.interception_url]

  timeouts {
    create = "60s"
    update = "60s"
    delete = "60s"
  }

  depends_on = [prime_sandbox_command.setup]
}

# 4. The agent, which never starts unless the policy is enforced.
resource "prime_sandbox_command" "agent" {
  sandbox_id      = prime_sandbox.rollout.id
  command         = "python -m agent --task /workspace/task.json"
  timeout_seconds = 3600

  depends_on = [prime_egress_policy.lock]
}

output "effective_allow" {
  # ["intercept.example.net", "*.github.com", "github.com"]
  value = prime_egress_policy.lock.effective_allow
}

output "agent_exit_code" {
  value = prime_sandbox_command.agent.exit_code
}
