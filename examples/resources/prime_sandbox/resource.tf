# A VM sandbox (the platform default) for an evaluation rollout. Unset
# resources (cpu_cores, memory_gb, disk_size_gb) defer to the platform's
# defaults and are read back.
resource "prime_sandbox" "example" {
  name         = "eval-rollout-1"
  docker_image = "python:3.12-slim"
  vm           = true

  cpu_cores    = 2
  memory_gb    = 4
  disk_size_gb = 10

  timeout_minutes      = 120
  idle_timeout_minutes = 30

  environment_vars = {
    EVAL_SPLIT = "test"
  }
  labels = ["eval-fleet", "run-2024-06"]

  # A VM takes its start command in argv form.
  start_argv = ["/bin/sh", "-c", "sleep infinity"]

  timeouts {
    # A first-use VM image build can take about ten minutes.
    create = "30m"
  }
}

# A container sandbox: shell-string start command, secrets kept out of state
# with a write-only argument (Terraform 1.11+).
variable "hf_token" {
  type      = string
  sensitive = true
  ephemeral = true
}

resource "prime_sandbox" "container" {
  name          = "eval-container"
  docker_image  = "python:3.12-slim"
  vm            = false
  start_command = "tail -f /dev/null"

  secrets_wo = {
    HF_TOKEN = var.hf_token
  }
  # Bump whenever secrets_wo changes; that replaces the sandbox.
  secrets_wo_version = 1
}
