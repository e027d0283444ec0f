# Every kind of input change re-runs the agent, with per-member setup (the lock a policy after it):
# the lists, the setup commands and their environment, the task directory,
# one member's task (that member alone), the image and the agent's
# commands. Each run checks the re-run itself — every run ID new (or only
# the changed member's), its record naming the new input — not only the
# plan, and that every run started under the lists the members enforce
# (its egress digest and generation, read from the platform as it
# started), with its run.json on disk. Each run gets the one before's
# records as a test-only variable (prev): tofu test resolves run.<name> in
# a variables block but not in an assertion.
provider "prime" {}

variables {
  name_prefix    = "rerunpm"
  members        = ["p1", "p2"]
  image          = "python:3.12-slim"
  allow          = ["example.com"]
  task_dir       = "tests/fixtures/task"
  setup_commands = ["echo setup $STAGE && probe pypi.org"]
  setup_env      = { STAGE = "1" }
  member_tasks = {
    p1 = { content = "{\"id\": \"p1-1\"}" }
    p2 = { content = "{\"id\": \"p2-1\"}" }
  }
  member_task_path = "/task/member/task.json"
  agent = {
    commands   = ["sh /task/agent.sh"]
    member_env = { p1 = { REWARD = "1" }, p2 = { REWARD = "0.5" } }
  }
  reward_file       = "/results/reward.json"
  results_path      = "/results"
  results_local_dir = "test-results/rerunpm"
  # Set, not left null: terraform test 1.11 refuses an unset ephemeral
  # variable at apply (hashicorp/terraform#38974).
  secrets_wo   = {}
  setup_env_wo = {}
}

run "first" {
  assert {
    condition     = length(output.runs) == 2 && jsonencode(output.rewards) == jsonencode({ p1 = 1, p2 = 0.5 })
    error_message = "every member's agent must run and its reward come back: ${jsonencode(output.runs)} ${jsonencode(output.rewards)}"
  }

  assert {
    condition = alltrue([for k, r in output.runs : r.member == k && r.sandbox_id == output.sandbox_ids[k] && !r.failed && r.exit_code == 0 &&
      r.commands_sha256 == sha256(jsonencode(["sh /task/agent.sh"])) && r.triggers.image == "python:3.12-slim" &&
    r.triggers.setup_sha256 != null && r.member_trigger == output.task_fingerprints[k] && r.started_at != null && r.ended_at != null])
    error_message = "each run's record must name its member, sandbox, steps, image, setup and task: ${jsonencode(output.runs)}"
  }

  assert {
    condition     = alltrue([for k, r in output.runs : r.egress_sha256 == output.lists_sha256 && r.egress_generation == output.policy_generations[k]])
    error_message = "every run must start under the enforced lists: ${jsonencode(output.runs)} vs ${output.lists_sha256} ${jsonencode(output.policy_generations)}"
  }

  assert {
    condition     = alltrue([for k, r in output.runs : jsondecode(file("test-results/rerunpm/${k}/run.json")).run_id == r.run_id && jsondecode(file("test-results/rerunpm/${k}/run.json")).egress_sha256 == r.egress_sha256])
    error_message = "each member's run.json must be its run's record"
  }

  assert {
    condition     = length(output.failures) == 0 && output.progress_file == "test-results/rerunpm/progress.json"
    error_message = "nothing must have failed: ${jsonencode(output.failures)}"
  }
}

run "lists" {
  variables {
    allow = ["example.com", "pypi.org"]
    prev  = run.first.runs
  }

  assert {
    condition     = alltrue([for k, r in output.runs : r.run_id != var.prev[k].run_id && r.triggers.lists_sha256 == output.lists_sha256 && r.triggers.lists_sha256 != var.prev[k].triggers.lists_sha256])
    error_message = "a change of the lists must re-run every agent: ${jsonencode(output.runs)}"
  }

  assert {
    condition     = alltrue([for k, r in output.runs : r.egress_sha256 == output.lists_sha256 && r.egress_generation == output.policy_generations[k] && r.egress_sha256 != var.prev[k].egress_sha256])
    error_message = "every run must start under the new lists, enforced: ${jsonencode(output.runs)} vs ${output.lists_sha256} ${jsonencode(output.policy_generations)}"
  }

  assert {
    condition     = alltrue([for k, r in output.runs : r.sandbox_id == var.prev[k].sandbox_id]) && jsonencode(output.rewards) == jsonencode({ p1 = 1, p2 = 0.5 })
    error_message = "the lists change in place, and the rewards are the new runs': ${jsonencode(output.rewards)}"
  }
}

run "setup_commands" {
  variables {
    allow          = ["example.com", "pypi.org"]
    setup_commands = ["echo setup $STAGE && probe pypi.org", "echo second step"]
    prev           = run.lists.runs
  }

  assert {
    condition     = alltrue([for k, r in output.runs : r.run_id != var.prev[k].run_id && r.triggers.setup_sha256 != var.prev[k].triggers.setup_sha256])
    error_message = "a change of the setup must re-run every agent: ${jsonencode(output.runs)}"
  }

  assert {
    condition     = alltrue([for k, r in output.runs : r.egress_sha256 == output.lists_sha256 && r.egress_generation == output.policy_generations[k]])
    error_message = "every run must start under the enforced lists: ${jsonencode(output.runs)}"
  }
}

run "setup_env" {
  variables {
    allow          = ["example.com", "pypi.org"]
    setup_commands = ["echo setup $STAGE && probe pypi.org", "echo second step"]
    setup_env      = { STAGE = "2" }
    prev           = run.setup_commands.runs
  }

  assert {
    condition     = alltrue([for k, r in output.runs : r.run_id != var.prev[k].run_id && r.triggers.setup_sha256 != var.prev[k].triggers.setup_sha256])
    error_message = "a change of the setup's environment must re-run every agent: ${jsonencode(output.runs)}"
  }

  assert {
    condition     = alltrue([for k, r in output.runs : r.egress_sha256 == output.lists_sha256 && r.egress_generation == output.policy_generations[k]])
    error_message = "every run must start under the enforced lists: ${jsonencode(output.runs)}"
  }
}

run "task_dir" {
  variables {
    allow          = ["example.com", "pypi.org"]
    setup_commands = ["echo setup $STAGE && probe pypi.org", "echo second step"]
    setup_env      = { STAGE = "2" }
    task_dir       = "tests/fixtures/task-v2"
    prev           = run.setup_env.runs
  }

  assert {
    condition     = alltrue([for k, r in output.runs : r.run_id != var.prev[k].run_id && r.member_trigger != var.prev[k].member_trigger && r.member_trigger == output.task_fingerprints[k]])
    error_message = "a change of the task directory must re-run every agent: ${jsonencode(output.runs)}"
  }

  assert {
    condition     = alltrue([for k, r in output.runs : r.egress_sha256 == output.lists_sha256 && r.egress_generation == output.policy_generations[k]])
    error_message = "every run must start under the enforced lists: ${jsonencode(output.runs)}"
  }
}

run "member_task" {
  variables {
    allow          = ["example.com", "pypi.org"]
    setup_commands = ["echo setup $STAGE && probe pypi.org", "echo second step"]
    setup_env      = { STAGE = "2" }
    task_dir       = "tests/fixtures/task-v2"
    member_tasks = {
      p1 = { content = "{\"id\": \"p1-2\"}" }
      p2 = { content = "{\"id\": \"p2-1\"}" }
    }
    prev = run.task_dir.runs
  }

  assert {
    condition     = output.runs.p1.run_id != var.prev.p1.run_id && output.runs.p1.member_trigger != var.prev.p1.member_trigger && jsonencode(output.runs.p2) == jsonencode(var.prev.p2)
    error_message = "a change of p1's task must re-run p1 alone: ${jsonencode(output.runs)}"
  }

  assert {
    condition     = jsondecode(data.prime_fleet_file.reward[0].files.p1.content).task.id == "p1-2" && data.prime_fleet_file.reward[0].files.p1.run_id == output.runs.p1.run_id
    error_message = "p1's reward must be its new run's, of its new task"
  }
}

run "image" {
  variables {
    allow          = ["example.com", "pypi.org"]
    setup_commands = ["echo setup $STAGE && probe pypi.org", "echo second step"]
    setup_env      = { STAGE = "2" }
    task_dir       = "tests/fixtures/task-v2"
    member_tasks = {
      p1 = { content = "{\"id\": \"p1-2\"}" }
      p2 = { content = "{\"id\": \"p2-1\"}" }
    }
    image = "python:3.13-slim"
    prev  = run.member_task.runs
  }

  assert {
    condition     = alltrue([for k, r in output.runs : r.run_id != var.prev[k].run_id && r.sandbox_id != var.prev[k].sandbox_id && r.triggers.image == "python:3.13-slim"])
    error_message = "a change of the image must re-run every agent, in new sandboxes: ${jsonencode(output.runs)}"
  }

  assert {
    condition     = alltrue([for k, r in output.runs : r.egress_sha256 == output.lists_sha256 && r.egress_generation == output.policy_generations[k]])
    error_message = "every run must start under the enforced lists: ${jsonencode(output.runs)}"
  }
}

run "agent_commands" {
  variables {
    allow          = ["example.com", "pypi.org"]
    setup_commands = ["echo setup $STAGE && probe pypi.org", "echo second step"]
    setup_env      = { STAGE = "2" }
    task_dir       = "tests/fixtures/task-v2"
    member_tasks = {
      p1 = { content = "{\"id\": \"p1-2\"}" }
      p2 = { content = "{\"id\": \"p2-1\"}" }
    }
    image = "python:3.13-slim"
    agent = {
      commands   = ["sh /task/agent.sh", "echo agent done"]
      member_env = { p1 = { REWARD = "1" }, p2 = { REWARD = "0.5" } }
    }
    prev = run.image.runs
  }

  assert {
    condition     = alltrue([for k, r in output.runs : r.run_id != var.prev[k].run_id && r.commands_sha256 == sha256(jsonencode(["sh /task/agent.sh", "echo agent done"]))])
    error_message = "a change of the agent's commands must re-run every agent: ${jsonencode(output.runs)}"
  }

  assert {
    condition     = alltrue([for k, r in output.runs : r.egress_sha256 == output.lists_sha256 && r.egress_generation == output.policy_generations[k]]) && jsonencode(output.rewards) == jsonencode({ p1 = 1, p2 = 0.5 })
    error_message = "every run must start under the enforced lists, and the rewards be its: ${jsonencode(output.runs)}"
  }
}
