variable "sandbox_id" {
  type = string
}

# The policy the platform holds for a VM sandbox, whoever wrote it (a
# prime_egress_policy, a sandbox's egress block, the CLI), and whether the
# data plane enforces it.
data "prime_egress_policy" "current" {
  sandbox_id = var.sandbox_id
}

output "egress_mode" {
  value = data.prime_egress_policy.current.mode # "allow", "block" or "open"
}

output "egress_allow" {
  # The allowlist as the platform stores it, route hosts included (null
  # unless the mode is "allow"); block holds the blocklist.
  value = data.prime_egress_policy.current.allow
}

# As a gate: a check block reports a warning on every plan and apply while
# the data plane does not enforce the current generation.
check "egress_enforced" {
  assert {
    condition     = data.prime_egress_policy.current.applied
    error_message = "The egress policy of ${var.sandbox_id} is not enforced (generation ${data.prime_egress_policy.current.generation}, applied ${data.prime_egress_policy.current.applied_generation})."
  }
}
