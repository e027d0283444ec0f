# An evaluation run by CI on ephemeral runners. The state lives in a remote
# backend with locking (see the guide: the backend block goes here, left
# out so that this example plans against prime-mock), and nothing else of a
# runner survives it. If a runner is lost mid-apply, the next apply of this
# state, on any runner, adopts the sandboxes, jobs and checkpoints the lost
# one started, and never runs an agent twice.

variable "eval_label" {
  description = "Names this evaluation's sandboxes, for the sweep after a failure. Keep it the same across re-runs of one evaluation: it is part of each create that recovery matches."
  type        = string
  default     = "eval-nightly"
}

variable "tasks" {
  description = "Member key → task ID."
  type        = map(string)
  default     = { t1 = "demo-1", t2 = "demo-2" }
}

# The state's own name for recovery. Unset, the provider derives it from the
# backend (bucket and key) and the workspace, which every runner of this
# state shares; set it only if two states could look alike.
provider "prime" {}

resource "prime_sandbox_fleet" "eval" {
  name_prefix     = var.eval_label
  members         = keys(var.tasks)
  docker_image    = "python:3.12-slim"
  labels          = [var.eval_label]
  timeout_minutes = 240 # a lost runner's sandboxes end by themselves at the latest then
}

resource "prime_fleet_egress_policy" "lock" {
  sandbox_ids = prime_sandbox_fleet.eval.sandbox_ids
  allow       = ["api.openai.com"]
}

# The agent as a background job: a lost runner's jobs keep running, and the
# next apply collects them from their claims in the sandboxes.
resource "prime_fleet_command" "agent" {
  sandbox_ids       = prime_fleet_egress_policy.lock.sandbox_ids
  commands          = ["mkdir -p /results && echo '{\"reward\": 1}' > /results/reward.json"]
  member_env        = { for k, id in var.tasks : k => { TASK_ID = id } }
  background        = true
  timeout_seconds   = 3 * 3600
  result_paths      = ["/results"]
  on_member_failure = "record"
}

data "prime_fleet_file" "reward" {
  sandbox_ids   = { for k, r in prime_fleet_command.agent.results : k => r.sandbox_id if !r.failed }
  path          = "/results/reward.json"
  allow_missing = true
}

output "rewards" {
  value = { for k, f in data.prime_fleet_file.reward.files : k => f.exists ? jsondecode(f.content).reward : 0 }
}
