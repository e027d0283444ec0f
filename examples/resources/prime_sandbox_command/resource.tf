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

# Trusted setup, run once at create. Changing any argument, or triggers
# (here: the hash of the script), runs it again.
resource "prime_sandbox_command" "setup" {
  sandbox_id      = prime_sandbox.box.id
  command         = local.setup_script
  working_dir     = "/workspace"
  timeout_seconds = 900
  env = {
    PIP_DISABLE_PIP_VERSION_CHECK = "1"
  }
  triggers = {
    script = sha256(local.setup_script)
  }
}

# A probe that may legitimately fail: curl's exit code 7 (could not
# connect) counts as success, and the code is read from exit_code.
resource "prime_sandbox_command" "probe" {
  sandbox_id         = prime_sandbox.box.id
  command            = "curl -sS --max-time 5 https://example.com/"
  allowed_exit_codes = [0, 7]
  depends_on         = [prime_sandbox_command.setup]
}

output "example_com_reachable" {
  value = prime_sandbox_command.probe.exit_code == 0
}
