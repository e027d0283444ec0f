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
#    is RUNNING and its gateway runs commands.
resource "prime_sandbox" "rollout" {
  name         = "eval-rollout-1"
  docker_image = "python:3.12-slim"
  labels       = ["eval-fleet"]
}

# 2. Trusted setup, with the network still open: install dependencies,
#    fetch the task. require_open_egress refuses to run it under a lock.
resource "prime_sandbox_command" "setup" {
  sandbox_id          = prime_sandbox.rollout.id
  command             = "pip install -r /workspace/requirements.txt && python -m fetch_task"
  timeout_seconds     = 900
  require_open_egress = true
}

# 3. Restrict. after orders the policy behind the setup and replaces it
#    whenever the setup changes (a changed command gets a new id): one apply
#    then reopens egress, runs the new setup and locks again. The apply
#    returns only once the data plane enforces the policy, or fails closed
#    after the timeout.
resource "prime_egress_policy" "lock" {
  sandbox_id = prime_sandbox.rollout.id
  allow      = ["github.com", "*.github.com"]
  routes     = [var.interception_url]
  after      = [prime_sandbox_command.setup.id]

  timeouts {
    create = "60s"
    update = "60s"
    delete = "60s"
  }
}

# 4. The agent, which never starts unless the policy is enforced, and runs
#    again after every re-lock (the policy's id changes with it).
resource "prime_sandbox_command" "agent" {
  sandbox_id      = prime_egress_policy.lock.sandbox_id
  command         = "python -m agent --task /workspace/task.json"
  timeout_seconds = 3600
  triggers        = { lock = prime_egress_policy.lock.id }
}

output "effective_allow" {
  # ["intercept.example.net", "*.github.com", "github.com"]
  value = prime_egress_policy.lock.effective_allow
}

output "agent_exit_code" {
  value = prime_sandbox_command.agent.exit_code
}
