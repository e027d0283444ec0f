resource "prime_sandbox_fleet" "eval" {
  name_prefix  = "eval-run-42"
  size         = 4
  docker_image = "python:3.12-slim"
}

resource "prime_fleet_command" "agent" {
  sandbox_ids       = prime_sandbox_fleet.eval.sandbox_ids
  commands          = ["python /task/run_agent.py --task \"$PRIME_MEMBER_KEY\""]
  background        = true
  result_paths      = ["/task/reward.json"] # removed before every run: never an earlier run's reward
  on_member_failure = "record"              # a crash is recorded; the others' rewards are read anyway
}

# Every member's reward, one gateway call per member. Keyed by the agent's
# results, so only members whose agent succeeded are read, after it ran;
# checked against each member's run, so a reward is only ever its own.
data "prime_fleet_file" "rewards" {
  sandbox_ids   = { for k, r in prime_fleet_command.agent.results : k => r.sandbox_id if !r.failed }
  run_ids       = { for k, r in prime_fleet_command.agent.results : k => r.run_id if !r.failed }
  path          = "/task/reward.json"
  allow_missing = true # a crashed rollout scores nothing
}

output "rewards" {
  value = {
    for k, f in data.prime_fleet_file.rewards.files : k => f.exists ? jsondecode(f.content).reward : 0
  }
}
