resource "prime_sandbox" "box" {
  name         = "eval-rollout-1"
  docker_image = "python:3.12-slim"
}

resource "prime_sandbox_command" "agent" {
  sandbox_id = prime_sandbox.box.id
  command    = "python /task/run_agent.py && test -f /task/reward.json"
}

# The reward the agent wrote, read after it ran (depends_on orders it).
data "prime_sandbox_file" "reward" {
  sandbox_id = prime_sandbox_command.agent.sandbox_id
  path       = "/task/reward.json"
  max_size   = 4096

  depends_on = [prime_sandbox_command.agent]
}

output "reward" {
  value = jsondecode(data.prime_sandbox_file.reward.content).reward
}
