# A small evaluation fleet, the whole protocol as code:
#   sandbox -> trusted setup (network open) -> egress policy -> agent,
# written the day-two way: the setup requires open egress, the policy names
# the setup in `after` (a changed setup re-opens, re-runs and re-locks in one
# apply), and the agent names the policy in `triggers` (it runs again after
# every re-lock). One more row is born restricted: its lists are in the
# create request, so it never has an open second and has no open setup.
#
# `make demo` runs this against prime-mock (a local, in-memory Prime API),
# prints the platform's event timeline per sandbox and checks that order.
# The provider reads PRIME_API_BASE_URL and PRIME_API_KEY from the
# environment, so the same file runs against the real API with a real key.

terraform {
  required_providers {
    prime = {
      source = "primeintellect/prime"
    }
  }
}

provider "prime" {}

locals {
  # One sandbox per scenario of the upstream verification table, with what
  # the agent must see from inside it.
  scenarios = {
    partial-allow = {
      allow  = ["example.com"], block = null, born = false
      expect = { "example.com" = "reachable", "google.com" = "blocked" }
    }
    blocked = {
      allow  = [], block = null, born = false
      expect = { "example.com" = "blocked", "google.com" = "blocked" }
    }
    deny-one = {
      allow  = null, block = ["example.com"], born = false
      expect = { "example.com" = "blocked", "google.com" = "reachable" }
    }
    # Allow example.com from the create on: no open setup at all.
    born-allow = {
      allow  = ["example.com"], block = null, born = true
      expect = { "example.com" = "reachable", "google.com" = "blocked" }
    }
  }
  open_setup = { for k, s in local.scenarios : k => s if !s.born }
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

# Trusted setup runs while egress is still open; require_open_egress refuses
# to run it on a sandbox whose egress is restricted.
resource "prime_sandbox_command" "setup" {
  for_each            = local.open_setup
  sandbox_id          = prime_sandbox.eval[each.key].id
  command             = "echo installing the task && probe pypi.org"
  require_open_egress = true
}

# Lock egress down; create returns only once the data plane enforces it.
# after names the setup: a changed setup replaces this policy, so the
# sandbox is re-opened for the new setup and locked again after it.
# Terraform orders whole resource blocks, not instances, so every policy
# waits for every sandbox's setup: the fleet moves phase by phase.
resource "prime_egress_policy" "lock" {
  for_each   = local.open_setup
  sandbox_id = prime_sandbox.eval[each.key].id
  allow      = each.value.allow
  block      = each.value.block
  routes     = local.routes
  after      = [prime_sandbox_command.setup[each.key].id]
}

locals {
  # Where the agent runs, reached through what locked it: the policy, or
  # for a born-restricted sandbox the sandbox itself (its create waited
  # for the born lists). The IDs go into the agent's triggers, so it runs
  # again after every re-lock.
  agent_sandbox = merge(
    { for k, p in prime_egress_policy.lock : k => p.sandbox_id },
    { for k, _ in local.born : k => prime_sandbox.eval[k].id },
  )
  lock_id = merge(
    { for k, p in prime_egress_policy.lock : k => p.id },
    { for k, _ in local.born : k => prime_sandbox.eval[k].id },
  )
}

# The "agent" probes two hosts; curl's exit code 7 means unreachable. It
# starts only once the lists are enforced, and never if a policy fails
# closed.
resource "prime_sandbox_command" "agent_example" {
  for_each           = local.scenarios
  sandbox_id         = local.agent_sandbox[each.key]
  command            = "curl -sS https://example.com/"
  allowed_exit_codes = [0, 7]
  triggers           = { lock = local.lock_id[each.key] }
}

resource "prime_sandbox_command" "agent_google" {
  for_each           = local.scenarios
  sandbox_id         = local.agent_sandbox[each.key]
  command            = "curl -sS https://google.com/"
  allowed_exit_codes = [0, 7]
  triggers           = { lock = local.lock_id[each.key] }
}

output "sandbox_ids" {
  value = { for k, s in prime_sandbox.eval : k => s.id }
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

output "agent_reachability" {
  value = {
    for k in keys(local.scenarios) : k => {
      "example.com" = prime_sandbox_command.agent_example[k].exit_code == 0 ? "reachable" : "blocked"
      "google.com"  = prime_sandbox_command.agent_google[k].exit_code == 0 ? "reachable" : "blocked"
    }
  }
}

output "expected_reachability" {
  value = { for k, s in local.scenarios : k => s.expect }
}
