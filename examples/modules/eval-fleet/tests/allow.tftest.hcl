# Allow mode end to end against the mock: a two-member fleet, a two-step
# setup with the network open, the allowlist (with the route hosts) locked
# after it, and an agent that probes from inside each member.
provider "prime" {}

variables {
  name_prefix    = "allow"
  members        = ["alpha", "beta"]
  image          = "python:3.12-slim"
  resources      = { cpu_cores = 2, memory_gb = 4 }
  labels         = ["eval-fleet", "tftest"]
  environment    = { TASK_SET = "smoke" }
  setup_commands = ["echo step-one && probe pypi.org", "printenv SETUP_TOKEN >/dev/null && echo step-two $TASK_SET"]
  setup_env_wo   = { SETUP_TOKEN = "setup-only" }
  # Set, not left null: terraform test 1.11 refuses an unset ephemeral
  # variable at apply (hashicorp/terraform#38974).
  secrets_wo     = { EVAL_SECRET = "agent-visible" }
  allow          = ["example.com", "*.example.com", "Example.COM."]
  routes         = ["https://intercept.example.net/v1", "http://10.0.0.5:8080/mcp"]
  policy_timeout = "30s"
  agent = {
    # probe exits 7 when the host is unreachable.
    commands           = ["echo agent && probe example.com", "echo agent route && probe intercept.example.net", "echo agent pypi && probe pypi.org"]
    allowed_exit_codes = [0, 7]
  }
}

run "fleet" {
  assert {
    condition     = toset(keys(output.sandbox_ids)) == toset(["alpha", "beta"]) && alltrue([for id in values(output.sandbox_ids) : length(id) > 0])
    error_message = "every member must have a sandbox: ${jsonencode(output.sandbox_ids)}"
  }

  assert {
    condition     = output.ready_sandbox_ids == output.sandbox_ids
    error_message = "every member must be ready: ${jsonencode(output.ready_sandbox_ids)}"
  }

  assert {
    condition     = jsonencode(output.setup_exit_codes) == jsonencode({ alpha = [0, 0], beta = [0, 0] })
    error_message = "every setup step must succeed on every member: ${jsonencode(output.setup_exit_codes)}"
  }

  assert {
    condition     = jsonencode(output.setup_stdout["alpha"]) == jsonencode(["step-one", "step-two smoke"])
    error_message = "setup steps must run in order, with the environment and setup_env_wo: ${jsonencode(output.setup_stdout)}"
  }

  assert {
    condition     = jsonencode(output.setup_stderr["beta"]) == jsonencode(["", ""])
    error_message = "setup_stderr must hold each step's standard error: ${jsonencode(output.setup_stderr)}"
  }

  assert {
    condition     = prime_fleet_command.setup[0].require_open_egress
    error_message = "setup must require open egress"
  }

  assert {
    condition     = jsonencode(prime_fleet_egress_policy.this[0].after) == jsonencode([prime_fleet_command.setup[0].id])
    error_message = "the policy's after must name the setup's id"
  }

  assert {
    condition     = jsonencode(output.policy_generations) == jsonencode({ alpha = 1, beta = 1 }) && jsonencode(output.policy_applied) == jsonencode({ alpha = true, beta = true })
    error_message = "every member must enforce the first policy write: ${jsonencode(output.policy_generations)} ${jsonencode(output.policy_applied)}"
  }

  assert {
    condition     = jsonencode(output.effective_allow) == jsonencode(["intercept.example.net", "10.0.0.5/32", "*.example.com", "example.com"])
    error_message = "effective_allow must be the route hosts, then the canonical, deduplicated allow entries: ${jsonencode(output.effective_allow)}"
  }

  assert {
    condition     = output.effective_block == null
    error_message = "effective_block must be null in allow mode"
  }

  assert {
    condition     = jsonencode(output.agent_exit_codes) == jsonencode({ alpha = [0, 0, 7], beta = [0, 0, 7] })
    error_message = "the agent must reach example.com and the route, and not pypi.org: ${jsonencode(output.agent_exit_codes)}"
  }

  assert {
    condition     = output.agent_stderr["alpha"][0] == "" && strcontains(output.agent_stderr["alpha"][2], "Failed to connect to pypi.org")
    error_message = "agent_stderr must hold each step's standard error: ${jsonencode(output.agent_stderr)}"
  }

  assert {
    condition     = prime_fleet_command.agent[0].triggers.lock == prime_fleet_egress_policy.this[0].id && prime_fleet_command.agent[0].triggers.lists_sha256 == prime_fleet_egress_policy.this[0].lists_sha256 && prime_fleet_command.agent[0].triggers.image == "python:3.12-slim"
    error_message = "the agent's triggers must name the policy, its lists and the image: ${jsonencode(prime_fleet_command.agent[0].triggers)}"
  }

  assert {
    condition     = prime_sandbox_fleet.this.cpu_cores == 2 && prime_sandbox_fleet.this.memory_gb == 4 && prime_sandbox_fleet.this.egress == null
    error_message = "resources must be passed through, and members not born restricted"
  }

  assert {
    condition     = prime_sandbox_fleet.this.timeout_minutes == -1 && prime_sandbox_fleet.this.idle_timeout_minutes == 60
    error_message = "members must default to no lifetime limit and a 60-minute idle timeout, as verifiers runs rollouts"
  }
}

# Changing the allowlist relocks every member in place: each member gets
# exactly one more write (generation 2; a replacement would restore open
# egress first, generation 2, and lock at 3), the sandboxes and the setup
# results stay, and the policy's ID changes with the write (lock_id), so
# every member's agent runs again under the new lists.
#
# The first run's outputs come in as test-only variables (the module
# declares no fleet_*): tofu test resolves run.<name> in a variables block
# but not in an assertion, terraform test in both.
run "update_allowlist" {
  variables {
    allow = []

    fleet_lock_id          = run.fleet.lock_id
    fleet_sandbox_ids      = run.fleet.sandbox_ids
    fleet_setup_exit_codes = run.fleet.setup_exit_codes
    fleet_agent_run_ids    = run.fleet.agent_run_ids
  }

  assert {
    condition     = var.fleet_lock_id != "" && output.lock_id != var.fleet_lock_id
    error_message = "the relock must give the policy a new ID: ${output.lock_id} vs ${var.fleet_lock_id}"
  }

  assert {
    condition     = length(var.fleet_agent_run_ids) == 2 && alltrue([for k, id in var.fleet_agent_run_ids : output.agent_run_ids[k] != id])
    error_message = "every member's agent must run again after the relock: ${jsonencode(output.agent_run_ids)} vs ${jsonencode(var.fleet_agent_run_ids)}"
  }

  assert {
    condition     = jsonencode(output.agent_exit_codes) == jsonencode({ alpha = [7, 0, 7], beta = [7, 0, 7] })
    error_message = "the agent must run under the new lists (only the routes reachable): ${jsonencode(output.agent_exit_codes)}"
  }

  assert {
    condition     = jsonencode(output.policy_generations) == jsonencode({ alpha = 2, beta = 2 })
    error_message = "each member must get exactly one more policy write: ${jsonencode(output.policy_generations)}"
  }

  assert {
    condition     = length(var.fleet_sandbox_ids) == 2 && jsonencode(output.sandbox_ids) == jsonencode(var.fleet_sandbox_ids) && jsonencode(output.setup_exit_codes) == jsonencode(var.fleet_setup_exit_codes)
    error_message = "the sandboxes and the setup results must stay: ${jsonencode(output.sandbox_ids)} vs ${jsonencode(var.fleet_sandbox_ids)}"
  }

  assert {
    condition     = jsonencode(output.effective_allow) == jsonencode(["intercept.example.net", "10.0.0.5/32"])
    error_message = "allow = [] must leave only the route hosts: ${jsonencode(output.effective_allow)}"
  }
}
