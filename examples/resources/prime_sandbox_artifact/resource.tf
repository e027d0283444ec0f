resource "prime_sandbox" "box" {
  name         = "eval-rollout-1"
  docker_image = "python:3.12-slim"
}

resource "prime_sandbox_command" "agent" {
  sandbox_id      = prime_sandbox.box.id
  command         = "python /task/run_agent.py --out /results"
  background      = true # a job in the sandbox: survives cuts, restarts and hours
  timeout_seconds = 7200
  result_paths    = ["/results"] # removed before every run, which leaves the run's stamp
}

# The agent's whole results directory, to local disk. The bytes never pass
# through state (it records each file's size and sha256); entries that would
# land outside results/ (.., absolute names, links, devices) are refused.
# The agent's run_id is new every time it runs, so the results are
# downloaded again exactly then, and only what that run wrote.
resource "prime_sandbox_artifact" "results" {
  sandbox_id  = prime_sandbox_command.agent.sandbox_id
  run_id      = prime_sandbox_command.agent.run_id
  remote_path = "/results"
  kind        = "directory"
  local_path  = "${path.root}/results/rollout-1"
  max_size    = 512 * 1024 * 1024 # refuse more than 512 MiB
}

# A transcript the agent may not write when it crashes early: then it is
# missing, never an earlier run's.
resource "prime_sandbox_artifact" "transcript" {
  sandbox_id    = prime_sandbox_command.agent.sandbox_id
  run_id        = prime_sandbox_command.agent.run_id
  remote_path   = "/results/transcript.jsonl"
  local_path    = "${path.root}/results/rollout-1.transcript.jsonl"
  allow_missing = true
}
