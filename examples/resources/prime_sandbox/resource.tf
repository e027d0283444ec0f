# A sandbox (a microVM) for an evaluation rollout. Arguments left unset are
# sent with the platform's defaults (1 vCPU, 1 GB memory, 5 GB disk, no GPU,
# a 60-minute lifetime), so the plan shows every value. Create returns once
# the sandbox is RUNNING and its gateway runs commands.
resource "prime_sandbox" "example" {
  name         = "eval-rollout-1"
  docker_image = "python:3.12-slim"

  cpu_cores    = 2 # whole vCPUs
  memory_gb    = 4
  disk_size_gb = 10

  timeout_minutes      = -1 # no lifetime limit...
  idle_timeout_minutes = 60 # ...but stopped after an idle hour (1 to 1440)

  environment_vars = {
    EVAL_SPLIT = "test"
  }
  labels = ["eval-fleet", "run-2024-06"]

  timeouts {
    create      = "20m" # boot and gateway readiness
    image_build = "50m" # a first-use VM image build, counted apart from create
  }
}

# An arm64 sandbox whose start process serves the task. The start command
# runs without a shell and is one-shot: when it exits, the sandbox stops,
# so leave start_argv unset unless a process should live as long as the
# sandbox. Secrets are kept out of state with a write-only argument
# (Terraform 1.11+); they are in the environment of every command run in
# the sandbox, the agent's included, so a secret only setup needs belongs in
# that command's env_wo instead.
variable "hf_token" {
  type      = string
  sensitive = true
  ephemeral = true
}

resource "prime_sandbox" "server" {
  name         = "eval-server"
  docker_image = "python:3.12-slim"
  arch         = "arm64"
  start_argv   = ["python", "-m", "http.server", "8000"]

  secrets_wo = {
    HF_TOKEN = var.hf_token
  }
  # Bump whenever secrets_wo changes; that replaces the sandbox.
  secrets_wo_version = 1
}
