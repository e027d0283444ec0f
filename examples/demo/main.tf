# A small evaluation, the whole protocol as code, one sandbox per scenario
# of the upstream verification table:
#
#   sandbox -> task files in -> trusted setup (network open) -> egress lock
#     -> agent (a background job) -> reward read back, results to disk
#
# written the day-two way: the setup requires open egress and runs again
# when the task changes (it names the task upload's id, the fingerprint of
# its bytes), the lock names the setup in `after` (a changed setup
# re-opens, re-runs and re-locks in one apply), and each member's agent
# names its lock's id and its task in `member_triggers`: the lock's id
# changes with every enforced write, so a member's agent runs again, alone,
# after its re-lock (a setup change, a change of its allowlist) or a change
# of its task. One row is born restricted: its lists are in the create
# request, so it never has an open second and has no open setup. One row
# is never locked: the baseline.
#
# `make demo` runs this against prime-mock (a local, in-memory Prime API),
# prints the reward table and the platform's event timeline per sandbox,
# and checks that order; then it applies again with a wider allowlist for
# the partial-allow row (-var 'partial_allow=["example.com","google.com"]')
# and checks that only that row's agent ran again, under its new lock, and
# that its reward follows. The provider reads PRIME_API_BASE_URL and
# PRIME_API_KEY from the environment, so the same file runs against the
# real API with a real key.

terraform {
  required_providers {
    prime = {
      source = "primeintellect/prime"
    }
  }
}

provider "prime" {}

# The partial-allow row's allowlist: `make demo`'s second apply widens it.
variable "partial_allow" {
  description = "Allowlist of the partial-allow scenario."
  type        = list(string)
  default     = ["example.com"]
}

locals {
  # The agent's task (task/README.md) is to fetch these; expect is what
  # its lock lets it reach, hence its reward.
  pages = ["example.com", "google.com"]

  # The rows of the reward table, in its order.
  scenario_rows = [
    {
      name   = "open", allow = null, block = null, born = false
      expect = { "example.com" = true, "google.com" = true }
    },
    {
      name   = "partial-allow", allow = var.partial_allow, block = null, born = false
      expect = { for p in local.pages : p => contains(var.partial_allow, p) }
    },
    {
      name   = "blocked", allow = [], block = null, born = false
      expect = { "example.com" = false, "google.com" = false }
    },
    {
      name   = "deny-one", allow = null, block = ["example.com"], born = false
      expect = { "example.com" = false, "google.com" = true }
    },
    # Allow example.com from the create on: no open setup at all.
    {
      name   = "born-allow", allow = ["example.com"], block = null, born = true
      expect = { "example.com" = true, "google.com" = false }
    },
  ]
  scenarios  = { for s in local.scenario_rows : s.name => s }
  open_setup = { for k, s in local.scenarios : k => s if !s.born }
  locked     = { for k, s in local.open_setup : k => s if s.allow != null || s.block != null }
  born       = { for k, s in local.scenarios : k => s if s.born }

  # The agent's LLM calls go through an interception endpoint it must
  # always reach.
  routes = ["https://intercept.example.net/v1/chat/completions"]
}

resource "prime_sandbox" "eval" {
  for_each     = local.scenarios
  name         = "demo-${each.key}"
  docker_image = "python:3.12-slim"
  labels       = ["demo"]

  # Born restricted: the lists go into the create request, and create
  # returns only once the data plane enforces them.
  dynamic "egress" {
    for_each = each.value.born ? [each.value] : []
    content {
      allow  = egress.value.allow
      block  = egress.value.block
      routes = local.routes
    }
  }
}

locals {
  sandbox_ids = { for k, s in prime_sandbox.eval : k => s.id }
}

# The task, the same in every sandbox: the prompt, the setup script and the
# agent (task/). One archive, uploaded through the gateway (egress locks do
# not apply to it), unpacked into /task.
resource "prime_fleet_file" "task" {
  sandbox_ids = local.sandbox_ids
  path        = "/task"
  source_dir  = "${path.module}/task"
}

# Each sandbox's own part of the task: its scenario. A change of one
# scenario uploads to that sandbox only. (The agent is not told its lists:
# what it can reach is the lock's business.)
resource "prime_fleet_file" "scenario" {
  sandbox_ids = local.sandbox_ids
  path        = "/task/scenario.json"
  members = {
    for k, s in local.scenarios : k => {
      content = jsonencode({ name = k, born_restricted = s.born })
    }
  }
}

# Trusted setup, once the task is in, while egress is still open;
# require_open_egress refuses to run it on a sandbox whose egress is
# restricted. A changed task directory runs it again everywhere (and so
# re-locks): the upload's id is the fingerprint of its bytes, known at plan
# time.
resource "prime_fleet_command" "setup" {
  sandbox_ids         = { for k, f in prime_fleet_file.task.files : k => f.sandbox_id if contains(keys(local.open_setup), k) }
  commands            = ["sh /task/setup.sh"]
  require_open_egress = true
  triggers            = { task = prime_fleet_file.task.id }
}

# Lock egress down; create returns only once the data plane enforces it.
# after names the setup: a changed setup replaces this policy, so the
# sandbox is re-opened for the new setup and locked again after it.
resource "prime_egress_policy" "lock" {
  for_each   = local.locked
  sandbox_id = prime_fleet_command.setup.results[each.key].sandbox_id
  allow      = each.value.allow
  block      = each.value.block
  routes     = local.routes
  after      = [prime_fleet_command.setup.id]
}

locals {
  # Where the agent runs, reached through what locked it: the policy, the
  # born sandbox itself (its create waited for the born lists), or for the
  # open baseline its setup. lock_id changes whenever a sandbox was locked
  # anew: a policy's id changes with every enforced write.
  agent_sandbox = merge(
    { for k, r in prime_fleet_command.setup.results : k => r.sandbox_id if !contains(keys(local.locked), k) },
    { for k, p in prime_egress_policy.lock : k => p.sandbox_id },
    { for k, _ in local.born : k => prime_sandbox.eval[k].id },
  )
  lock_id = merge(
    { for k, _ in local.open_setup : k => prime_fleet_command.setup.id },
    { for k, p in prime_egress_policy.lock : k => p.id },
    { for k, _ in local.born : k => prime_sandbox.eval[k].id },
  )
}

# The agent, as a background job in each sandbox (it survives a cut
# connection or a killed apply): it starts only once its lists are
# enforced, and never if a policy fails closed. It reads its task and
# writes /results/reward.json. A sandbox's agent runs again, alone, when
# it is locked anew (a setup change, a change of its lists) or its task
# changes.
resource "prime_fleet_command" "agent" {
  sandbox_ids     = local.agent_sandbox
  commands        = ["sh /task/agent.sh"]
  background      = true
  timeout_seconds = 600
  result_paths    = ["/results"] # cleared before every run, which leaves the run's stamp
  member_triggers = {
    for k, id in local.agent_sandbox : k => join(" ", [
      local.lock_id[k], prime_fleet_file.task.files[k].sha256, prime_fleet_file.scenario.files[k].sha256,
    ])
  }
}

# Each agent's result, read back once it ended (keyed by the agent's
# results, so it waits for them), only if its current run wrote it; a
# missing one reads as null.
data "prime_fleet_file" "result" {
  sandbox_ids   = { for k, r in prime_fleet_command.agent.results : k => r.sandbox_id }
  path          = "/results/reward.json"
  allow_missing = true
  run_ids       = { for k, r in prime_fleet_command.agent.results : k => r.run_id }
}

# Every sandbox's /results to results/<scenario>/ on local disk, again for
# a sandbox whenever its agent ran again.
resource "prime_fleet_artifact" "results" {
  sandbox_ids = { for k, r in prime_fleet_command.agent.results : k => r.sandbox_id }
  remote_path = "/results"
  kind        = "directory"
  local_path  = "${path.root}/results/{key}"
  run_ids     = { for k, r in prime_fleet_command.agent.results : k => r.run_id }
}

output "sandbox_ids" {
  value = local.sandbox_ids
}

output "scenarios" {
  value = [for s in local.scenario_rows : { name = s.name, allow = s.allow, block = s.block, born_restricted = s.born }]
}

output "policies" {
  value = merge(
    {
      for k, p in prime_egress_policy.lock : k => {
        how            = "prime_egress_policy after the setup"
        sent_allowlist = p.effective_allow
        sent_blocklist = p.effective_block
        generation     = p.generation
        applied        = p.applied
      }
    },
    {
      for k, _ in local.born : k => {
        how            = "born restricted (egress block)"
        sent_allowlist = prime_sandbox.eval[k].egress.effective_allow
        sent_blocklist = prime_sandbox.eval[k].egress.effective_block
        generation     = prime_sandbox.eval[k].egress_generation
        applied        = prime_sandbox.eval[k].egress_applied
      }
    },
  )
}

# What each agent wrote, decoded: its scenario, what it reached, its reward.
output "results" {
  value = { for k, f in data.prime_fleet_file.result.files : k => f.exists ? jsondecode(f.content) : null }
}

output "result_files" {
  value = { for k, m in prime_fleet_artifact.results.members : k => [for f in m.files : f.path] }
}

# Where each reward came from: its run, the image, the lists its sandbox
# enforced when the run started (a lock's lists_sha256 names them too).
output "runs" {
  value = {
    for k, r in prime_fleet_command.agent.results : k => {
      run_id            = r.run_id
      sandbox_id        = r.sandbox_id
      from              = "image ${prime_sandbox.eval[k].docker_image}"
      started_at        = r.started_at
      ended_at          = r.executed_at
      exit_code         = r.exit_code
      egress_generation = r.egress_generation
      egress_sha256     = r.egress_sha256
      lists_sha256 = (
        contains(keys(local.locked), k) ? prime_egress_policy.lock[k].lists_sha256 :
        contains(keys(local.born), k) ? prime_sandbox.eval[k].egress.lists_sha256 : null
      )
      commands_sha256 = prime_fleet_command.agent.commands_sha256
      reward_run_id   = data.prime_fleet_file.result.files[k].run_id
    }
  }
}

output "expected_reachability" {
  value = { for k, s in local.scenarios : k => s.expect }
}
