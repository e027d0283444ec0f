# An egress policy is imported by the ID of its sandbox (a sandbox has one
# policy), or by a policy ID "<sandbox_id>/<generation>".
terraform import prime_egress_policy.lock cm0abc123def456ghi789jklm
