resource "prime_sandbox" "box" {
  name         = "eval-rollout-1"
  docker_image = "python:3.12-slim"
}

locals {
  setup_script = <<-EOT
    set -e
    pip install -r requirements.txt
    python -m prepare_dataset --split test
  EOT
}

# A token only the setup needs: passed to that one command, never stored in
# state or plan (Terraform 1.11+). The sandbox's own secrets, by contrast,
# are in the environment of every command, the agent's included.
variable "dataset_token" {
  type      = string
  sensitive = true
  ephemeral = true
}

# Trusted setup, run once at create with the network open. Changing the
# command, working_dir, env or triggers (here: the hash of the script) runs it
# again.
resource "prime_sandbox_command" "setup" {
  sandbox_id      = prime_sandbox.box.id
  command         = local.setup_script
  working_dir     = "/workspace"
  timeout_seconds = 900

  # Refuse to run (without reaching the sandbox) if egress is restricted,
  # so a changed setup step never runs silently under the agent's lock.
  require_open_egress = true

  env = {
    PIP_DISABLE_PIP_VERSION_CHECK = "1"
  }
  env_wo = {
    DATASET_TOKEN = var.dataset_token
  }
  env_wo_version = 1 # bump when the token changes, to run the setup again

  triggers = {
    script = sha256(local.setup_script)
  }
}

# The lock, after the setup: a changed setup step replaces it, so one apply
# reopens egress, runs the new setup, and locks again.
resource "prime_egress_policy" "lock" {
  sandbox_id = prime_sandbox.box.id
  allow      = []
  routes     = ["https://intercept.example.net/v1"]
  after      = [prime_sandbox_command.setup.id]
}

# The agent, once the lock is enforced, and again after every re-lock. Its
# transcript is kept out of plans and logs.
resource "prime_sandbox_command" "agent" {
  sandbox_id       = prime_egress_policy.lock.sandbox_id
  command          = "python -m agent --task /workspace/task.json"
  working_dir      = "/workspace"
  timeout_seconds  = 3600
  sensitive_output = true # output in sensitive_streams, not stdout/stderr

  triggers = {
    lock = prime_egress_policy.lock.id
  }
}

# A probe that may legitimately fail: curl's exit code 7 (could not
# connect) counts as success, and the code is read from exit_code.
resource "prime_sandbox_command" "probe" {
  sandbox_id         = prime_egress_policy.lock.sandbox_id
  command            = "curl -sS --max-time 5 https://example.com/"
  allowed_exit_codes = [0, 7]

  triggers = {
    lock = prime_egress_policy.lock.id
  }
}

output "example_com_reachable" {
  value = prime_sandbox_command.probe.exit_code == 0
}
