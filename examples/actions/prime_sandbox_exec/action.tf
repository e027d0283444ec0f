# terraform apply -invoke=action.prime_sandbox_exec.disk_usage
action "prime_sandbox_exec" "disk_usage" {
  config {
    sandbox_id      = prime_sandbox.example.id
    command         = "df -h /sandbox-workspace"
    timeout_seconds = 30
  }
}

# Or run it whenever the sandbox is created or replaced.
resource "prime_sandbox" "example" {
  name         = "eval-0"
  docker_image = "python:3.12-slim"

  lifecycle {
    action_trigger {
      events  = [after_create]
      actions = [action.prime_sandbox_exec.disk_usage]
    }
  }
}
