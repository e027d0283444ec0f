# Allow mode end to end against the mock: sandboxes, a two-step setup, then
# an allowlist that must include the route hosts.
provider "prime" {}

variables {
  sandbox_names  = ["alpha", "beta"]
  image          = "python:3.12-slim"
  resources      = { cpu_cores = 2, memory_gb = 4 }
  labels         = ["eval-fleet", "tftest"]
  setup_commands = ["echo step-one && probe pypi.org", "echo step-two"]
  allow          = ["example.com", "*.example.com", "Example.COM."]
  routes         = ["https://intercept.example.net/v1", "http://10.0.0.5:8080/mcp"]
  policy_timeout = "30s"
}

run "fleet" {
  assert {
    condition     = length(output.sandbox_ids) == 2 && alltrue([for id in values(output.sandbox_ids) : length(id) > 0])
    error_message = "every sandbox must have an ID: ${jsonencode(output.sandbox_ids)}"
  }

  assert {
    condition     = output.ready_sandbox_ids == output.sandbox_ids
    error_message = "ready_sandbox_ids must name the same sandboxes"
  }

  assert {
    condition     = toset(keys(output.applied_generations)) == toset(["alpha", "beta"]) && alltrue([for g in values(output.applied_generations) : g >= 1])
    error_message = "every policy must be enforced at generation 1 or later: ${jsonencode(output.applied_generations)}"
  }

  assert {
    condition = alltrue([
      for list in values(output.effective_allow) :
      list == tolist(["intercept.example.net", "10.0.0.5/32", "*.example.com", "example.com"])
    ])
    error_message = "effective_allow must be the route hosts, then the canonical, deduplicated allow entries: ${jsonencode(output.effective_allow)}"
  }

  assert {
    condition     = alltrue([for list in values(output.effective_block) : list == null])
    error_message = "effective_block must be null in allow mode"
  }

  assert {
    condition     = alltrue([for p in prime_egress_policy.this : p.applied])
    error_message = "every policy must be applied"
  }

  assert {
    condition     = tolist(output.setup_outputs["alpha"]) == tolist(["step-one\n", "step-two\n"])
    error_message = "setup steps must run in order: ${jsonencode(output.setup_outputs)}"
  }

  assert {
    condition     = prime_sandbox.this["alpha"].cpu_cores == 2 && prime_sandbox.this["alpha"].memory_gb == 4 && prime_sandbox.this["alpha"].vm
    error_message = "resources must be passed through, and sandboxes must be VMs"
  }
}

# Changing the allowlist updates the policies in place. Generation 2 proves
# it: a replaced sandbox (or policy) would start again at generation 1.
run "update_allowlist" {
  variables {
    allow = []
  }

  assert {
    condition     = alltrue([for g in values(output.applied_generations) : g >= 2])
    error_message = "the update must be enforced in place, at a newer generation: ${jsonencode(output.applied_generations)}"
  }

  assert {
    condition     = alltrue([for list in values(output.effective_allow) : list == tolist(["intercept.example.net", "10.0.0.5/32"])])
    error_message = "allow = [] must leave only the route hosts: ${jsonencode(output.effective_allow)}"
  }
}
