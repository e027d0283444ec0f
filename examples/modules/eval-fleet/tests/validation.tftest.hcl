# Plan-time validation and plan shape: bad inputs are refused before any
# API call, and the plan shows what the module will do in each mode.
provider "prime" {}

variables {
  name_prefix  = "plan"
  members      = ["a", "b"]
  image        = "python:3.12-slim"
  secrets_wo   = {}
  setup_env_wo = {}
}

run "allow_and_block_are_mutually_exclusive" {
  command = plan

  variables {
    allow = ["example.com"]
    block = ["example.org"]
  }

  expect_failures = [var.allow]
}

run "members_and_size_are_mutually_exclusive" {
  command = plan

  variables {
    size = 2
  }

  expect_failures = [var.members]
}

run "members_or_size_is_required" {
  command = plan

  variables {
    members = null
  }

  expect_failures = [var.members]
}

run "member_keys_are_name_safe" {
  command = plan

  variables {
    members = ["a b"]
  }

  expect_failures = [var.members]
}

run "name_prefix_is_name_safe" {
  command = plan

  variables {
    name_prefix = "-bad"
  }

  expect_failures = [var.name_prefix]
}

run "resources_must_be_positive" {
  command = plan

  variables {
    resources = { cpu_cores = 0 }
  }

  expect_failures = [var.resources]
}

run "gpu_needs_a_type_and_count" {
  command = plan

  variables {
    gpu = { type = "", count = 1 }
  }

  expect_failures = [var.gpu]
}

run "cpu_cores_must_be_whole" {
  command = plan

  variables {
    resources = { cpu_cores = 1.5 }
  }

  expect_failures = [var.resources]
}

run "timeout_zero_refused" {
  command = plan

  variables {
    timeout_minutes = 0
  }

  expect_failures = [var.timeout_minutes]
}

run "idle_timeout_at_most_a_day" {
  command = plan

  variables {
    idle_timeout_minutes = 1441
  }

  expect_failures = [var.idle_timeout_minutes]
}

run "arch_amd64_or_arm64" {
  command = plan

  variables {
    arch = "x86"
  }

  expect_failures = [var.arch]
}

run "idle_timeout_within_lifetime" {
  command = plan

  variables {
    timeout_minutes      = 30
    idle_timeout_minutes = 45
  }

  expect_failures = [var.idle_timeout_minutes]
}

run "setup_commands_not_empty" {
  command = plan

  variables {
    setup_commands = ["echo ok", " "]
  }

  expect_failures = [var.setup_commands]
}

run "born_restricted_needs_lists" {
  command = plan

  variables {
    born_restricted = true
  }

  expect_failures = [var.born_restricted]
}

run "policy_timeout_is_a_duration" {
  command = plan

  variables {
    allow          = []
    policy_timeout = "a minute"
  }

  expect_failures = [var.policy_timeout]
}

run "agent_needs_commands" {
  command = plan

  variables {
    agent = { commands = [] }
  }

  expect_failures = [var.agent]
}

run "member_tasks_need_one_source" {
  command = plan

  variables {
    member_tasks = { a = { dir = "tests/fixtures/members/alpha", content = "task a" } }
  }

  expect_failures = [var.member_tasks]
}

run "member_tasks_are_for_members" {
  command = plan

  variables {
    member_tasks = { c = { content = "task c" } }
  }

  expect_failures = [var.member_tasks]
}

run "member_env_is_for_members" {
  command = plan

  variables {
    size    = 2
    members = null
    agent   = { commands = ["echo agent"], member_env = { a = { TASK = "a" } } }
  }

  expect_failures = [var.agent]
}

run "task_path_is_absolute" {
  command = plan

  variables {
    task_dir  = "tests/fixtures/task"
    task_path = "task"
  }

  expect_failures = [var.task_path]
}

run "results_need_the_agent" {
  command = plan

  variables {
    results_path = "/results"
    reward_file  = "/results/reward.json"
  }

  expect_failures = [var.results_path, var.reward_file]
}

run "reward_file_is_a_file" {
  command = plan

  variables {
    agent       = { commands = ["echo agent"] }
    reward_file = "/results/"
  }

  expect_failures = [var.reward_file]
}

# The task files before the setup, the agent in the background by
# default, the rewards read and the results downloaded after it.
run "plan_shows_tasks_and_results" {
  command = plan

  variables {
    task_dir       = "tests/fixtures/task"
    member_tasks   = { a = { content = "task a" }, b = { dir = "tests/fixtures/members/beta" } }
    setup_commands = ["echo setup"]
    agent          = { commands = ["echo agent"] }
    results_path   = "/results"
    reward_file    = "/results/reward.json"
  }

  assert {
    condition     = prime_fleet_file.task[0].path == "/task" && prime_fleet_file.member_task[0].path == "/task/member"
    error_message = "the task directory must go to /task and each member's task to /task/member by default"
  }

  assert {
    condition     = prime_fleet_file.member_task[0].members["a"].content == "task a" && prime_fleet_file.member_task[0].members["b"].source_dir == "tests/fixtures/members/beta"
    error_message = "member_tasks must reach prime_fleet_file's members: ${jsonencode(prime_fleet_file.member_task[0].members)}"
  }

  assert {
    condition     = prime_fleet_command.agent[0].background && length(data.prime_fleet_file.reward) == 1 && data.prime_fleet_file.reward[0].allow_missing
    error_message = "the agent must run in the background by default, and missing rewards must be allowed"
  }

  assert {
    condition     = endswith(prime_fleet_artifact.results[0].local_path, "results/{key}/results") && prime_fleet_artifact.results[0].kind == "directory" && prime_fleet_artifact.results[0].remote_path == "/results"
    error_message = "results_path must be downloaded as a directory per member: ${prime_fleet_artifact.results[0].local_path}"
  }
}

# Without task files the agent has no member_triggers and without
# results_path and reward_file nothing is read or downloaded: a fleet that
# uses none of them plans as before. background = false is honoured.
run "plan_without_tasks_or_results" {
  command = plan

  variables {
    agent = { commands = ["echo agent"], background = false }
  }

  assert {
    condition     = prime_fleet_command.agent[0].member_triggers == null && !prime_fleet_command.agent[0].background
    error_message = "without task files the agent must have no member_triggers, and background = false must reach it"
  }

  assert {
    condition     = length(prime_fleet_file.task) == 0 && length(prime_fleet_file.member_task) == 0 && length(data.prime_fleet_file.reward) == 0 && length(prime_fleet_artifact.results) == 0
    error_message = "no task files, reads or downloads without task_dir, member_tasks, reward_file and results_path"
  }
}

# No step cap: twelve setup steps are one fleet command.
run "setup_has_no_step_cap" {
  command = plan

  variables {
    setup_commands = [for i in range(12) : "echo step ${i}"]
    allow          = ["example.com"]
  }

  assert {
    condition     = length(prime_fleet_command.setup) == 1 && length(prime_fleet_command.setup[0].commands) == 12
    error_message = "all twelve steps must be one prime_fleet_command"
  }
}

run "plan_shows_the_policy_before_apply" {
  command = plan

  variables {
    setup_commands = ["echo setup"]
    allow          = ["Example.COM", "1.2.3.4"]
    routes         = ["https://intercept.example.net/v1"]
    gpu            = { type = "A100", count = 2 }
    region         = "us"
    start_argv     = ["/bin/sh", "-c", "sleep 3600"]
  }

  assert {
    condition     = length(prime_fleet_egress_policy.this) == 1 && prime_sandbox_fleet.this.egress == null
    error_message = "allow mode must lock with one fleet policy after the setup, not at birth"
  }

  assert {
    condition     = prime_fleet_egress_policy.this[0].effective_allow == tolist(["intercept.example.net", "1.2.3.4/32", "example.com"])
    error_message = "effective_allow must be canonical, with the route host first: ${jsonencode(prime_fleet_egress_policy.this[0].effective_allow)}"
  }

  assert {
    condition     = prime_fleet_command.setup[0].require_open_egress && length(prime_fleet_command.agent) == 0
    error_message = "setup must require open egress; no agent without var.agent"
  }

  assert {
    condition     = prime_sandbox_fleet.this.gpu_type == "A100" && prime_sandbox_fleet.this.gpu_count == 2 && prime_sandbox_fleet.this.region == "us" && prime_sandbox_fleet.this.start_argv == tolist(["/bin/sh", "-c", "sleep 3600"])
    error_message = "GPU, region and start_argv must reach the fleet"
  }
}

run "born_restricted_plans_no_policy" {
  command = plan

  variables {
    born_restricted = true
    block           = ["example.org"]
    setup_commands  = ["echo setup"]
  }

  assert {
    condition     = length(prime_fleet_egress_policy.this) == 0 && prime_sandbox_fleet.this.egress.block == toset(["example.org"])
    error_message = "born_restricted must put the lists in the fleet's egress block and plan no policy"
  }

  assert {
    condition     = !prime_fleet_command.setup[0].require_open_egress
    error_message = "under born lists the setup cannot require open egress"
  }
}

run "no_lists_means_no_policy" {
  command = plan

  assert {
    condition     = length(prime_fleet_egress_policy.this) == 0 && prime_sandbox_fleet.this.egress == null && length(prime_fleet_command.setup) == 0
    error_message = "neither allow nor block must leave egress unrestricted (no policy, no egress block), and no setup without commands"
  }
}

run "setup_once_needs_setup_commands" {
  command = plan

  variables {
    setup_mode = "once"
  }

  expect_failures = [var.setup_mode]
}

run "setup_once_is_not_born_restricted" {
  command = plan

  variables {
    setup_mode      = "once"
    setup_commands  = ["echo setup"]
    allow           = ["example.com"]
    born_restricted = true
  }

  expect_failures = [var.setup_mode]
}

run "setup_once_keeps_the_template_name" {
  command = plan

  variables {
    setup_mode     = "once"
    setup_commands = ["echo setup"]
    members        = ["a", "template"]
  }

  expect_failures = [var.setup_mode]
}

run "setup_mode_is_per_member_or_once" {
  command = plan

  variables {
    setup_mode = "twice"
  }

  expect_failures = [var.setup_mode]
}

# The plan of setup once: a template, its setup and checkpoint, the fleet
# restored from it under the lists, no policy after the setup.
run "setup_once_plan" {
  command = plan

  variables {
    setup_mode     = "once"
    setup_commands = ["echo setup"]
    allow          = ["example.com"]
  }

  assert {
    condition     = length(prime_sandbox.template) == 1 && length(prime_sandbox_checkpoint.template) == 1 && length(prime_fleet_command.template_setup) == 1
    error_message = "setup once needs a template, its setup and its checkpoint"
  }

  assert {
    condition     = length(prime_fleet_command.setup) == 0 && length(prime_fleet_egress_policy.this) == 0
    error_message = "setup once runs no member setup and no policy after it"
  }

  assert {
    condition     = prime_sandbox_checkpoint.template[0].source_after == "delete" && prime_sandbox.template[0].retire_after_checkpoint && prime_sandbox_fleet.this.docker_image == null
    error_message = "the template is deleted (and retired) after its checkpoint; the members boot from the checkpoint, not the image"
  }
}
