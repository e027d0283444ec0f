# An egress policy is imported by the ID of its sandbox.
terraform import prime_egress_policy.lock cm0abc123def456ghi789jklm
