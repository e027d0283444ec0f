# A small evaluation fleet, the whole protocol as code:
#   sandbox -> trusted setup (network open) -> egress policy -> agent.
#
# `make demo` runs this against prime-mock (a local, in-memory Prime API) and
# prints the platform's event timeline per sandbox. The provider reads
# PRIME_API_BASE_URL and PRIME_API_KEY from the environment, so the same file
# runs against the real API with a real key.

terraform {
  required_providers {
    prime = {
      source = "primeintellect/prime"
    }
  }
}

provider "prime" {}

locals {
  # One sandbox per scenario of the upstream verification table.
  scenarios = {
    partial-allow = { allow = ["example.com"], block = null }
    blocked       = { allow = [], block = null }
    deny-one      = { allow = null, block = ["example.com"] }
  }
  # The agent's LLM calls go through an interception endpoint it must
  # always reach.
  routes = ["https://intercept.example.net/v1/chat/completions"]
}

resource "prime_sandbox" "eval" {
  for_each     = local.scenarios
  name         = "demo-${each.key}"
  docker_image = "python:3.12-slim"
  labels       = ["demo"]
}

# Trusted setup runs while egress is still open.
resource "prime_sandbox_command" "setup" {
  for_each   = local.scenarios
  sandbox_id = prime_sandbox.eval[each.key].id
  command    = "echo installing the task && probe pypi.org"
}

# Lock egress down; create returns only once the data plane enforces it.
# Taking sandbox_id from the setup command puts the order in the data flow.
# Terraform orders whole resource blocks, not instances, so every policy
# waits for every sandbox's setup: the fleet moves phase by phase.
resource "prime_egress_policy" "lock" {
  for_each   = local.scenarios
  sandbox_id = prime_sandbox_command.setup[each.key].sandbox_id
  allow      = each.value.allow
  block      = each.value.block
  routes     = local.routes
}

# The "agent" probes two hosts; curl's exit code 7 means unreachable. Its
# sandbox_id comes from the policy, so it starts only once the policies are
# enforced, and never if a policy fails closed.
resource "prime_sandbox_command" "agent_example" {
  for_each           = local.scenarios
  sandbox_id         = prime_egress_policy.lock[each.key].sandbox_id
  command            = "curl -sS https://example.com/"
  allowed_exit_codes = [0, 7]
}

resource "prime_sandbox_command" "agent_google" {
  for_each           = local.scenarios
  sandbox_id         = prime_egress_policy.lock[each.key].sandbox_id
  command            = "curl -sS https://google.com/"
  allowed_exit_codes = [0, 7]
}

output "sandbox_ids" {
  value = { for k, s in prime_sandbox.eval : k => s.id }
}

output "policies" {
  value = {
    for k, p in prime_egress_policy.lock : k => {
      sent_allowlist = p.effective_allow
      sent_blocklist = p.effective_block
      generation     = p.generation
      applied        = p.applied
    }
  }
}

output "agent_reachability" {
  value = {
    for k in keys(local.scenarios) : k => {
      "example.com" = prime_sandbox_command.agent_example[k].exit_code == 0 ? "reachable" : "blocked"
      "google.com"  = prime_sandbox_command.agent_google[k].exit_code == 0 ? "reachable" : "blocked"
    }
  }
}
