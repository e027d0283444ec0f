# The day-two pattern through the module: changing a setup command on a
# running fleet re-opens egress, runs the new setup with the network open,
# locks again and runs the agent again, in one apply, without replacing a
# sandbox. The Go test that runs these files (internal/provider/
# module_test.go) checks that order in the mock's event log.
provider "prime" {}

variables {
  name_prefix    = "relock"
  members        = ["a", "b"]
  image          = "python:3.12-slim"
  setup_commands = ["echo installing v1 && probe pypi.org"]
  allow          = ["example.com"]
  # Set, not left null: terraform test 1.11 refuses an unset ephemeral
  # variable at apply (hashicorp/terraform#38974).
  secrets_wo   = {}
  setup_env_wo = {}
  agent = {
    commands           = ["echo agent && probe example.com", "echo agent pypi && probe pypi.org"]
    allowed_exit_codes = [0, 7]
  }
}

run "v1" {
  assert {
    condition     = jsonencode(output.setup_exit_codes) == jsonencode({ a = [0], b = [0] }) && jsonencode(output.agent_exit_codes) == jsonencode({ a = [0, 7], b = [0, 7] })
    error_message = "v1: setup must reach pypi.org, the agent must not: ${jsonencode(output.setup_exit_codes)} ${jsonencode(output.agent_exit_codes)}"
  }
}

# v1's outputs come in as test-only variables: tofu test resolves
# run.<name> in a variables block but not in an assertion.
run "v2" {
  variables {
    setup_commands = ["echo installing v2 && probe pypi.org", "echo second step"]

    v1_sandbox_ids = run.v1.sandbox_ids
    v1_lock_id     = run.v1.lock_id
  }

  assert {
    condition     = length(var.v1_sandbox_ids) == 2 && jsonencode(output.sandbox_ids) == jsonencode(var.v1_sandbox_ids)
    error_message = "a setup change must not replace a sandbox: ${jsonencode(output.sandbox_ids)} vs ${jsonencode(var.v1_sandbox_ids)}"
  }

  # Also proves that var.v1_lock_id is v1's, not this run's: the same
  # value here would fail.
  assert {
    condition     = var.v1_lock_id != "" && output.lock_id != var.v1_lock_id
    error_message = "a setup change must replace the policy (after names the setup's id): ${output.lock_id} vs ${var.v1_lock_id}"
  }

  assert {
    condition     = jsonencode(output.setup_exit_codes) == jsonencode({ a = [0, 0], b = [0, 0] }) && jsonencode(output.setup_stdout["a"]) == jsonencode(["installing v2", "second step"])
    error_message = "v2 must run with egress open (pypi.org reachable): ${jsonencode(output.setup_exit_codes)} ${jsonencode(output.setup_stdout)}"
  }

  # Lock (1), restore open egress when the old policy is destroyed (2),
  # lock again (3).
  assert {
    condition     = jsonencode(output.policy_generations) == jsonencode({ a = 3, b = 3 }) && jsonencode(output.policy_applied) == jsonencode({ a = true, b = true })
    error_message = "the members must be locked again: ${jsonencode(output.policy_generations)}"
  }

  assert {
    condition     = jsonencode(output.agent_exit_codes) == jsonencode({ a = [0, 7], b = [0, 7] })
    error_message = "the agent must run again under the new lock: ${jsonencode(output.agent_exit_codes)}"
  }
}
