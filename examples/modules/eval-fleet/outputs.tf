output "sandbox_ids" {
  description = "Sandbox ID by name."
  value       = { for name, sb in prime_sandbox.this : name => sb.id }
}

output "ready_sandbox_ids" {
  description = "Sandbox ID by name, resolved only after every setup step ran and every egress policy is enforced. Run the agent on these IDs so it can never start early."
  value       = { for name, sb in prime_sandbox.this : name => sb.id }

  depends_on = [
    prime_sandbox_command.setup_0,
    prime_sandbox_command.setup_1,
    prime_sandbox_command.setup_2,
    prime_sandbox_command.setup_3,
    prime_sandbox_command.setup_4,
    prime_sandbox_command.setup_5,
    prime_sandbox_command.setup_6,
    prime_sandbox_command.setup_7,
    prime_egress_policy.this,
  ]
}

output "applied_generations" {
  description = "Egress policy generation the data plane enforces, by sandbox name (empty when neither allow nor block is set). At least 1 after a successful apply."
  value       = { for name, p in prime_egress_policy.this : name => p.applied_generation }
}

output "effective_allow" {
  description = "Allowlist sent to the platform by sandbox name, canonical, route hosts first (null entries in block mode)."
  value       = { for name, p in prime_egress_policy.this : name => p.effective_allow }
}

output "effective_block" {
  description = "Blocklist sent to the platform by sandbox name, canonical (null entries in allow mode)."
  value       = { for name, p in prime_egress_policy.this : name => p.effective_block }
}

output "setup_outputs" {
  description = "Standard output of every setup step, by sandbox name, in order."
  value = {
    for name in var.sandbox_names : name => [
      for step in [
        prime_sandbox_command.setup_0, prime_sandbox_command.setup_1, prime_sandbox_command.setup_2,
        prime_sandbox_command.setup_3, prime_sandbox_command.setup_4, prime_sandbox_command.setup_5,
        prime_sandbox_command.setup_6, prime_sandbox_command.setup_7,
      ] : step[name].stdout if contains(keys(step), name)
    ]
  }
}
