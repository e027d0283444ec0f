# One evaluation rollout per task, as a fleet: tasks in, setup open, lock,
# the agent as a background job, rewards and transcripts out.
locals {
  tasks = {
    "t1" = { id = "demo-1" }
    "t2" = { id = "demo-2" }
  }
}

resource "prime_sandbox_fleet" "eval" {
  name_prefix     = "eval-guide"
  members         = keys(local.tasks)
  docker_image    = "python:3.12-slim"
  timeout_minutes = 180 # longer than the agent may run
}

# The shared harness, and each member's own task.
resource "prime_fleet_file" "task" {
  sandbox_ids = prime_sandbox_fleet.eval.sandbox_ids
  path        = "/task"
  source_dir  = "${path.module}/task"
}

# Setup, again whenever the shared task's bytes change (the file's id is
# their fingerprint); the lock's after then re-opens and re-locks around it.
resource "prime_fleet_command" "setup" {
  sandbox_ids         = prime_fleet_file.task.sandbox_ids
  commands            = ["pip install -r /task/requirements.txt || true"]
  require_open_egress = true
  triggers            = { task = prime_fleet_file.task.id }
}

resource "prime_fleet_egress_policy" "lock" {
  sandbox_ids = prime_sandbox_fleet.eval.sandbox_ids
  allow       = ["api.openai.com"]
  after       = [prime_fleet_command.setup.id]
}

# The agent: a background job per member, each with its own task in the
# environment (PRIME_MEMBER_KEY and member_env). It runs again on every
# member after every re-lock (a setup change, a change of allow, block or
# routes) and after a change of the task; a changed member_env entry runs
# that member alone.
resource "prime_fleet_command" "agent" {
  sandbox_ids     = prime_fleet_egress_policy.lock.sandbox_ids
  commands        = ["python /task/agent.py --task \"$TASK_ID\" --out /results"]
  member_env      = { for k, t in local.tasks : k => { TASK_ID = t.id } }
  background      = true
  timeout_seconds = 2 * 3600
  output_dir      = "${path.root}/logs" # the whole stdout and stderr per member, and progress.json

  # Removed right before every run: what is read back below was written by this run.
  result_paths = ["/results"]
  # A crashed rollout is recorded as its result; the others' rewards are read anyway.
  on_member_failure = "record"

  triggers = { lock = prime_fleet_egress_policy.lock.id, task = prime_fleet_file.task.id }
}

# Small results into HCL: the reward of each member whose agent succeeded.
data "prime_fleet_file" "reward" {
  sandbox_ids   = { for k, r in prime_fleet_command.agent.results : k => r.sandbox_id if !r.failed }
  path          = "/results/reward.json"
  allow_missing = true
}

# Large results to disk, downloaded again for a member whenever its agent runs again.
resource "prime_fleet_artifact" "transcripts" {
  sandbox_ids     = { for k, r in prime_fleet_command.agent.results : k => r.sandbox_id if !r.failed }
  remote_path     = "/results"
  kind            = "directory"
  local_path      = "${path.root}/results/{key}"
  allow_missing   = true
  member_triggers = { for k, r in prime_fleet_command.agent.results : k => r.run_id if !r.failed }
}

output "rewards" {
  value = { for k, f in data.prime_fleet_file.reward.files : k => f.exists ? jsondecode(f.content).reward : 0 }
}
