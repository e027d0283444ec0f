resource "prime_sandbox_fleet" "eval" {
  name_prefix  = "eval-run-42"
  size         = 4
  docker_image = "python:3.12-slim"
}

resource "prime_fleet_command" "agent" {
  sandbox_ids     = prime_sandbox_fleet.eval.sandbox_ids
  commands        = ["python /task/run_agent.py --task \"$PRIME_MEMBER_KEY\" --out /results"]
  background      = true
  timeout_seconds = 7200
  result_paths    = ["/results"] # removed before every run: never an earlier run's transcript
}

# Every member's results to results/<key>/, only from members whose agent
# succeeded; a member whose agent runs again (its run_id changes) is
# downloaded again, alone, and only what that run wrote.
resource "prime_fleet_artifact" "results" {
  sandbox_ids = { for k, r in prime_fleet_command.agent.results : k => r.sandbox_id if !r.failed }
  run_ids     = { for k, r in prime_fleet_command.agent.results : k => r.run_id if !r.failed }
  remote_path = "/results"
  kind        = "directory"
  local_path  = "${path.root}/results/{key}"
}
