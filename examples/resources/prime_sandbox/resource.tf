# A VM sandbox (the platform default) for an evaluation rollout. Arguments
# left unset are sent with the Prime SDK's defaults (1 CPU core, 1 GB memory,
# 5 GB disk, no GPU, a 60-minute lifetime), so the plan shows every value.
# Create returns once the sandbox is RUNNING and its gateway runs commands.
resource "prime_sandbox" "example" {
  name         = "eval-rollout-1"
  docker_image = "python:3.12-slim"
  vm           = true # egress policies need a VM; say so explicitly

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
    create      = "20m" # boot and gateway readiness
    image_build = "50m" # a first-use VM image build, counted apart from create
  }
}

# A container sandbox: shell-string start command, secrets kept out of state
# with a write-only argument (Terraform 1.11+). The sandbox's secrets are in
# the environment of every command run in it, the agent's included; a secret
# only setup needs belongs in that command's env_wo instead.
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
