resource "prime_sandbox" "box" {
  name         = "eval-rollout-1"
  docker_image = "python:3.12-slim"
}

# The task, a local directory: archived once (the same tree gives the same
# archive, so the plan's sha256 changes exactly when a file does), uploaded
# through the gateway and unpacked in the sandbox at /task.
resource "prime_sandbox_file" "task" {
  sandbox_id = prime_sandbox.box.id
  path       = "/task"
  source_dir = "${path.module}/task"
}

# The agent runs again whenever the task's bytes change: the file's id
# carries their fingerprint.
resource "prime_sandbox_command" "agent" {
  sandbox_id = prime_sandbox_file.task.sandbox_id
  command    = "python /task/run_agent.py"
  triggers   = { task = prime_sandbox_file.task.id }
}

# One file, with a mode. Parents are created; the file appears whole.
resource "prime_sandbox_file" "runner" {
  sandbox_id = prime_sandbox.box.id
  path       = "/task/bin/run.sh"
  content    = "#!/bin/sh\nexec python /task/run_agent.py \"$@\"\n"
  mode       = "0755"
}

# A credential the setup reads from disk: write-only, never in state or
# plan (Terraform 1.11+); bump the version to upload a new one.
variable "hf_token" {
  type      = string
  sensitive = true
  ephemeral = true
}

resource "prime_sandbox_file" "token" {
  sandbox_id         = prime_sandbox.box.id
  path               = "/root/.cache/huggingface/token"
  content_wo         = var.hf_token
  content_wo_version = 1
  mode               = "0600"
}
