resource "prime_sandbox" "box" {
  name         = "eval-rollout-1"
  docker_image = "python:3.12-slim"
}

resource "prime_sandbox_command" "agent" {
  sandbox_id   = prime_sandbox.box.id
  command      = "python /task/run_agent.py && test -f /task/reward.json"
  result_paths = ["/task/reward.json"] # removed before every run, which leaves the run's stamp
}

# The reward the agent wrote, read after it ran (run_id orders it), and
# only if this run wrote it.
data "prime_sandbox_file" "reward" {
  sandbox_id = prime_sandbox_command.agent.sandbox_id
  run_id     = prime_sandbox_command.agent.run_id
  path       = "/task/reward.json"
  max_size   = 4096
}

output "reward" {
  value = jsondecode(data.prime_sandbox_file.reward.content).reward
}
