# born_restricted: the allowlist goes into the fleet's egress block, so the
# members are restricted from their first second; there is no policy after
# the setup, and the setup runs under the born lists.
provider "prime" {}

variables {
  name_prefix     = "born"
  members         = ["x", "y"]
  image           = "python:3.12-slim"
  born_restricted = true
  allow           = ["example.com"]
  routes          = ["https://intercept.example.net/v1"]
  setup_commands  = ["echo offline setup && probe example.com"]
  policy_timeout  = "30s"
  # Set, not left null: terraform test 1.11 refuses an unset ephemeral
  # variable at apply (hashicorp/terraform#38974).
  secrets_wo   = { EVAL_SECRET = "agent-visible" }
  setup_env_wo = {}
  agent = {
    commands           = ["printenv EVAL_SECRET >/dev/null && echo agent && probe example.com", "echo agent pypi && probe pypi.org"]
    allowed_exit_codes = [0, 7]
  }
}

run "born" {
  assert {
    condition     = length(prime_fleet_egress_policy.this) == 0
    error_message = "born_restricted must not lock with a policy after the setup"
  }

  assert {
    condition     = jsonencode(prime_sandbox_fleet.this.egress.effective_allow) == jsonencode(["intercept.example.net", "example.com"])
    error_message = "the lists must be in the fleet's egress block"
  }

  assert {
    condition     = jsonencode(output.effective_allow) == jsonencode(["intercept.example.net", "example.com"]) && output.effective_block == null
    error_message = "effective lists must come from the egress block: ${jsonencode(output.effective_allow)}"
  }

  assert {
    condition     = jsonencode(output.policy_generations) == jsonencode({ x = 0, y = 0 }) && jsonencode(output.policy_applied) == jsonencode({ x = true, y = true })
    error_message = "the born lists (generation 0) must be enforced on every member: ${jsonencode(output.policy_generations)} ${jsonencode(output.policy_applied)}"
  }

  assert {
    condition     = !prime_fleet_command.setup[0].require_open_egress && jsonencode(output.setup_exit_codes) == jsonencode({ x = [0], y = [0] })
    error_message = "the setup must run under the born lists (no open egress required): ${jsonencode(output.setup_exit_codes)}"
  }

  assert {
    condition     = output.ready_sandbox_ids == output.sandbox_ids
    error_message = "every member must be ready: ${jsonencode(output.ready_sandbox_ids)}"
  }

  assert {
    condition     = jsonencode(output.agent_exit_codes) == jsonencode({ x = [0, 7], y = [0, 7] })
    error_message = "the agent must see secrets_wo, reach example.com and not pypi.org: ${jsonencode(output.agent_exit_codes)}"
  }
}

# Changing the born lists updates every member in place through the fleet:
# the sandboxes stay, each member's lists move to generation 1, and every
# member's agent runs again under them. The first run's IDs come in as
# test-only variables: tofu test resolves run.<name> in a variables block
# but not in an assertion.
run "update_born_lists" {
  variables {
    allow = ["example.com", "pypi.org"]

    born_sandbox_ids = run.born.sandbox_ids
    born_run_ids     = run.born.agent_run_ids
  }

  assert {
    condition     = length(var.born_run_ids) == 2 && alltrue([for k, id in var.born_run_ids : output.agent_run_ids[k] != id])
    error_message = "every member's agent must run again under the new lists: ${jsonencode(output.agent_run_ids)} vs ${jsonencode(var.born_run_ids)}"
  }

  assert {
    condition     = jsonencode(output.agent_exit_codes) == jsonencode({ x = [0, 0], y = [0, 0] })
    error_message = "the agent must now reach pypi.org too: ${jsonencode(output.agent_exit_codes)}"
  }

  assert {
    condition     = length(var.born_sandbox_ids) == 2 && jsonencode(output.sandbox_ids) == jsonencode(var.born_sandbox_ids)
    error_message = "the members must stay: ${jsonencode(output.sandbox_ids)} vs ${jsonencode(var.born_sandbox_ids)}"
  }

  assert {
    condition     = jsonencode(output.policy_generations) == jsonencode({ x = 1, y = 1 }) && jsonencode(output.policy_applied) == jsonencode({ x = true, y = true })
    error_message = "each member must enforce the new lists at generation 1: ${jsonencode(output.policy_generations)}"
  }

  assert {
    condition     = jsonencode(output.effective_allow) == jsonencode(["intercept.example.net", "example.com", "pypi.org"])
    error_message = "effective_allow must follow the change: ${jsonencode(output.effective_allow)}"
  }
}
