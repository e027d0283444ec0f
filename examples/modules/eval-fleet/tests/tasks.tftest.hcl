# Task files in, rewards and results out, against the mock: a shared task
# directory on every member, each member's own task, the agent as a
# background job (the default) with a per-member environment, every
# reward read back and every results directory downloaded. Then one
# member's task changes: only that member's agent runs again, in place.
# Then the shared task changes: the setup runs again, every member is
# re-locked and every agent runs again. The Go test that runs these files
# (internal/provider/module_test.go) also checks the mock's event log: each
# upload before the setup or agent run that needs it, and how often each
# member's agent started.
provider "prime" {}

variables {
  name_prefix = "tasks"
  # gamma has no task of its own: its agent writes no result.
  members        = ["alpha", "beta", "gamma"]
  image          = "python:3.12-slim"
  task_dir       = "tests/fixtures/task"
  setup_commands = ["cat /task/prompt.txt && probe pypi.org"]
  allow          = ["example.com"]
  member_tasks = {
    alpha = { dir = "tests/fixtures/members/alpha" }
    beta  = { dir = "tests/fixtures/members/beta" }
  }
  agent = {
    commands   = ["sh /task/agent.sh"]
    member_env = { alpha = { REWARD = "1" }, beta = { REWARD = "0.25" }, gamma = { REWARD = "0" } }
  }
  results_path = "/results"
  # Relative to where terraform test runs (the module's directory): kept
  # after the run, as results are.
  results_local_dir = "test-results/tasks"
  reward_file       = "/results/reward.json"
  # Set, not left null: terraform test 1.11 refuses an unset ephemeral
  # variable at apply (hashicorp/terraform#38974).
  secrets_wo   = {}
  setup_env_wo = {}
}

run "tasks" {
  assert {
    condition     = jsonencode(output.setup_stdout) == jsonencode({ for k in ["alpha", "beta", "gamma"] : k => ["Fetch https://example.com/ and report what you found."] })
    error_message = "the shared task must be in every member before the setup: ${jsonencode(output.setup_stdout)}"
  }

  assert {
    condition     = prime_fleet_command.agent[0].background && jsonencode(output.agent_exit_codes) == jsonencode({ alpha = [0], beta = [0], gamma = [0] })
    error_message = "the agent must run in the background by default and succeed on every member: ${jsonencode(output.agent_exit_codes)}"
  }

  assert {
    condition     = jsonencode(output.rewards) == jsonencode({ alpha = 1, beta = 0.25, gamma = null })
    error_message = "each member's reward must come back, and a missing one as null: ${jsonencode(output.rewards)}"
  }

  # The data source's content, as the agent wrote it: each member got its
  # own key and its own task.
  assert {
    condition = alltrue([
      for k, id in { alpha = "alpha-1", beta = "beta-1" } :
      jsondecode(data.prime_fleet_file.reward[0].files[k].content).task.id == id && jsondecode(data.prime_fleet_file.reward[0].files[k].content).member == k
    ])
    error_message = "each member must read its own task: ${jsonencode({ for k, f in data.prime_fleet_file.reward[0].files : k => f.content })}"
  }

  assert {
    condition     = prime_fleet_file.member_task[0].files["alpha"].sha256 != prime_fleet_file.member_task[0].files["beta"].sha256 && !contains(keys(prime_fleet_file.member_task[0].files), "gamma")
    error_message = "alpha and beta must get distinct tasks, gamma none: ${jsonencode(prime_fleet_file.member_task[0].files)}"
  }

  # On disk, through prime_fleet_artifact: the results of the members that
  # wrote some, and null for gamma.
  assert {
    condition     = jsonencode(output.results_local_paths) == jsonencode({ alpha = "test-results/tasks/alpha/results", beta = "test-results/tasks/beta/results", gamma = null })
    error_message = "results must be downloaded to <results_local_dir>/<key>/results: ${jsonencode(output.results_local_paths)}"
  }

  assert {
    condition     = jsondecode(file("${output.results_local_paths["beta"]}/reward.json")).task.id == "beta-1" && startswith(file("${output.results_local_paths["alpha"]}/transcript.txt"), "Fetch https://example.com/")
    error_message = "the results directories must be on disk"
  }

  assert {
    condition     = length(output.task_fingerprints) == 3 && output.task_fingerprints["alpha"] != output.task_fingerprints["beta"] && output.task_fingerprints["gamma"] == prime_fleet_file.task[0].files["gamma"].sha256
    error_message = "task_fingerprints must combine each member's uploads: ${jsonencode(output.task_fingerprints)}"
  }
}

# alpha's task changes: its task is uploaded again and its agent runs again,
# alone and in place; nothing is re-locked, no sandbox is replaced, and
# beta's and gamma's runs stay. The first run's outputs come in as test-only
# variables (the module declares no tasks_*): tofu test resolves
# run.<name> in a variables block but not in an assertion.
run "change_one_task" {
  variables {
    member_tasks = {
      alpha = { dir = "tests/fixtures/members/alpha-v2" }
      beta  = { dir = "tests/fixtures/members/beta" }
    }

    tasks_sandbox_ids   = run.tasks.sandbox_ids
    tasks_lock_id       = run.tasks.lock_id
    tasks_agent_run_ids = run.tasks.agent_run_ids
  }

  assert {
    condition     = length(var.tasks_sandbox_ids) == 3 && jsonencode(output.sandbox_ids) == jsonencode(var.tasks_sandbox_ids)
    error_message = "a task change must not replace a sandbox: ${jsonencode(output.sandbox_ids)} vs ${jsonencode(var.tasks_sandbox_ids)}"
  }

  assert {
    condition     = var.tasks_lock_id != "" && output.lock_id == var.tasks_lock_id
    error_message = "a member task change must not re-lock: ${output.lock_id} vs ${var.tasks_lock_id}"
  }

  # Also proves that the variable holds the first run's IDs: alpha's
  # differs.
  assert {
    condition     = output.agent_run_ids["alpha"] != var.tasks_agent_run_ids["alpha"] && output.agent_run_ids["beta"] == var.tasks_agent_run_ids["beta"] && output.agent_run_ids["gamma"] == var.tasks_agent_run_ids["gamma"]
    error_message = "only alpha's agent must run again: ${jsonencode(output.agent_run_ids)} vs ${jsonencode(var.tasks_agent_run_ids)}"
  }

  assert {
    condition     = jsondecode(data.prime_fleet_file.reward[0].files["alpha"].content).task.id == "alpha-2" && jsondecode(file("${output.results_local_paths["alpha"]}/reward.json")).task.id == "alpha-2"
    error_message = "alpha's new result must be read and downloaded again: ${data.prime_fleet_file.reward[0].files["alpha"].content}"
  }

  assert {
    condition     = jsonencode(output.rewards) == jsonencode({ alpha = 1, beta = 0.25, gamma = null })
    error_message = "the rewards must stay: ${jsonencode(output.rewards)}"
  }
}

# The shared task changes: it is uploaded again, which replaces the setup,
# so every member is re-opened, set up with the new task, locked again and
# runs its agent again, in one apply, with the same sandboxes.
run "change_shared_task" {
  variables {
    task_dir = "tests/fixtures/task-v2"
    member_tasks = {
      alpha = { dir = "tests/fixtures/members/alpha-v2" }
      beta  = { dir = "tests/fixtures/members/beta" }
    }

    tasks_sandbox_ids   = run.change_one_task.sandbox_ids
    tasks_lock_id       = run.change_one_task.lock_id
    tasks_agent_run_ids = run.change_one_task.agent_run_ids
  }

  assert {
    condition     = length(var.tasks_sandbox_ids) == 3 && jsonencode(output.sandbox_ids) == jsonencode(var.tasks_sandbox_ids)
    error_message = "a task change must not replace a sandbox: ${jsonencode(output.sandbox_ids)} vs ${jsonencode(var.tasks_sandbox_ids)}"
  }

  assert {
    condition     = var.tasks_lock_id != "" && output.lock_id != var.tasks_lock_id
    error_message = "a shared task change must re-run the setup and so re-lock: ${output.lock_id} vs ${var.tasks_lock_id}"
  }

  assert {
    condition     = jsonencode(output.setup_stdout) == jsonencode({ for k in ["alpha", "beta", "gamma"] : k => ["Fetch https://example.com/ again, version 2."] })
    error_message = "the setup must run again with the new task: ${jsonencode(output.setup_stdout)}"
  }

  assert {
    condition     = alltrue([for k in ["alpha", "beta", "gamma"] : output.agent_run_ids[k] != var.tasks_agent_run_ids[k]])
    error_message = "every member's agent must run again: ${jsonencode(output.agent_run_ids)} vs ${jsonencode(var.tasks_agent_run_ids)}"
  }

  assert {
    condition     = startswith(file("${output.results_local_paths["beta"]}/transcript.txt"), "Fetch https://example.com/ again") && jsonencode(output.rewards) == jsonencode({ alpha = 1, beta = 0.25, gamma = null })
    error_message = "the new results must be downloaded: ${jsonencode(output.rewards)}"
  }
}
