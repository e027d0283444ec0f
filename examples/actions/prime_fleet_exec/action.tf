resource "prime_sandbox_fleet" "eval" {
  name_prefix  = "eval"
  docker_image = "python:3.12-slim"
  size         = 8
  labels       = ["eval-run-42"]
}

# terraform apply -invoke=action.prime_fleet_exec.probe
# runs on every member and shows each member's output, prefixed with its key.
action "prime_fleet_exec" "probe" {
  config {
    sandbox_ids     = prime_sandbox_fleet.eval.sandbox_ids
    commands        = ["python --version", "df -h /sandbox-workspace"]
    max_concurrency = 4
  }
}
