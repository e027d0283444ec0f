# setup_mode = "once": the task directory and the trusted setup go into one
# template sandbox with egress open; its checkpoint is taken once the setup
# succeeded and the template is deleted; every member is restored from the
# checkpoint and restricted right after its restore, and only then does
# its agent run. Each member's agent finds the setup's marker (the files
# came with the checkpoint) and the shared task, reaches the allowed host
# and not pypi.org, and writes its reward. The Go test that runs these files
# (internal/provider/module_test.go) checks the mock's event log: the setup
# ran once, on the template; no member ran a setup step; every member was
# restored and its agent started only with its lists enforced; no member
# was deleted before the new checkpoint was DURABLE; terraform test's
# destroy deleted the checkpoints.
provider "prime" {}

variables {
  name_prefix    = "once"
  members        = ["m1", "m2", "m3"]
  image          = "python:3.12-slim"
  setup_mode     = "once"
  task_dir       = "tests/fixtures/task"
  setup_commands = ["probe pypi.org && mkdir -p /opt/setup && echo installed > /opt/setup/marker"]
  allow          = ["example.com"]
  member_tasks = {
    m1 = { content = "{\"id\": \"m1\"}" }
    m2 = { content = "{\"id\": \"m2\"}" }
  }
  agent = {
    # The marker and the shared task came with the checkpoint; pypi.org is
    # blocked (7) once the lists are enforced.
    commands           = ["cat /task/prompt.txt && echo agent && cat /opt/setup/marker", "sh /task/agent.sh", "echo agent pypi && probe pypi.org"]
    member_env         = { m1 = { REWARD = "1" }, m2 = { REWARD = "0.5" }, m3 = { REWARD = "0" } }
    allowed_exit_codes = [0, 7]
  }
  member_task_path = "/task/member/task.json"
  reward_file      = "/results/reward.json"
  # Set, not left null: terraform test 1.11 refuses an unset ephemeral
  # variable at apply (hashicorp/terraform#38974).
  secrets_wo   = {}
  setup_env_wo = {}
}

run "once" {
  assert {
    condition     = jsonencode(output.setup_exit_codes) == jsonencode({ template = [0] })
    error_message = "the setup must run once, on the template: ${jsonencode(output.setup_exit_codes)}"
  }

  assert {
    condition     = prime_sandbox_checkpoint.template[0].state == "DURABLE" && prime_sandbox_checkpoint.template[0].sandbox_id == output.template_sandbox_id
    error_message = "the template's checkpoint must be DURABLE"
  }

  assert {
    condition     = prime_sandbox_checkpoint.template[0].source_after == "delete" && prime_sandbox.template[0].retire_after_checkpoint
    error_message = "the template must be deleted once its checkpoint is DURABLE, and stay in state retired"
  }

  assert {
    condition     = prime_sandbox_fleet.this.checkpoint_id == output.checkpoint_id && prime_sandbox_fleet.this.docker_image == null
    error_message = "every member must be restored from the checkpoint"
  }

  assert {
    condition     = length(prime_fleet_egress_policy.this) == 0 && length(prime_fleet_command.setup) == 0
    error_message = "setup once runs no member setup and writes no policy after it: the lists are the fleet's"
  }

  assert {
    condition     = jsonencode(output.policy_applied) == jsonencode({ m1 = true, m2 = true, m3 = true })
    error_message = "every member must enforce its lists: ${jsonencode(output.policy_applied)}"
  }

  assert {
    condition     = output.ready_sandbox_ids == output.sandbox_ids
    error_message = "every member must be ready: ${jsonencode(output.ready_sandbox_ids)}"
  }

  assert {
    condition     = jsonencode(output.agent_exit_codes) == jsonencode({ m1 = [0, 0, 7], m2 = [0, 0, 7], m3 = [0, 0, 7] })
    error_message = "every agent must find the setup's marker, reach example.com and not pypi.org: ${jsonencode(output.agent_exit_codes)}"
  }

  assert {
    condition     = alltrue([for k, s in output.agent_stdout : strcontains(s[0], "installed")])
    error_message = "every member must hold the setup's marker: ${jsonencode(output.agent_stdout)}"
  }

  assert {
    condition     = jsonencode(output.rewards) == jsonencode({ m1 = 1, m2 = 0.5, m3 = null })
    error_message = "the rewards must come back (m3 has no task, so no reward): ${jsonencode(output.rewards)}"
  }
}

# A changed setup replaces the template: one apply runs the new setup once,
# in a new template, checkpoints it, and then restores every member from the
# new checkpoint in place (the fleet keeps its id; the agents run again
# there). The first run's IDs come in as test-only variables: tofu test
# resolves run.<name> in a variables block but not in an assertion.
run "change_setup" {
  variables {
    setup_commands = ["probe pypi.org && mkdir -p /opt/setup && echo installed-v2 > /opt/setup/marker"]

    once_template_id   = run.once.template_sandbox_id
    once_checkpoint_id = run.once.checkpoint_id
    once_sandbox_ids   = run.once.sandbox_ids
  }

  assert {
    condition     = output.template_sandbox_id != var.once_template_id && output.checkpoint_id != var.once_checkpoint_id
    error_message = "a changed setup must run in a new template and take a new checkpoint"
  }

  assert {
    condition     = alltrue([for k, id in output.sandbox_ids : id != var.once_sandbox_ids[k]])
    error_message = "every member must be restored from the new checkpoint: ${jsonencode(output.sandbox_ids)}"
  }

  assert {
    condition     = jsonencode(output.setup_exit_codes) == jsonencode({ template = [0] }) && strcontains(output.agent_stdout.m1[0], "installed-v2")
    error_message = "the new setup must run once and its files reach the members: ${jsonencode(output.agent_stdout)}"
  }
}

# A change of the lists relocks every member in place (the lists are in
# the fleet's egress block: the checkpoint and the sandboxes stay), and
# every member's agent runs again under the new lists. The earlier run's
# IDs come in as test-only variables.
run "change_lists" {
  variables {
    setup_commands = ["probe pypi.org && mkdir -p /opt/setup && echo installed-v2 > /opt/setup/marker"]
    allow          = ["example.com", "pypi.org"]

    setup_checkpoint_id = run.change_setup.checkpoint_id
    setup_sandbox_ids   = run.change_setup.sandbox_ids
    setup_run_ids       = run.change_setup.agent_run_ids
  }

  assert {
    condition     = output.checkpoint_id == var.setup_checkpoint_id && jsonencode(output.sandbox_ids) == jsonencode(var.setup_sandbox_ids)
    error_message = "a change of the lists must keep the checkpoint and the members"
  }

  assert {
    condition     = length(var.setup_run_ids) == 3 && alltrue([for k, id in var.setup_run_ids : output.agent_run_ids[k] != id])
    error_message = "every member's agent must run again under the new lists: ${jsonencode(output.agent_run_ids)} vs ${jsonencode(var.setup_run_ids)}"
  }

  assert {
    condition     = jsonencode(output.agent_exit_codes) == jsonencode({ m1 = [0, 0, 0], m2 = [0, 0, 0], m3 = [0, 0, 0] })
    error_message = "the agents must now reach pypi.org: ${jsonencode(output.agent_exit_codes)}"
  }
}
