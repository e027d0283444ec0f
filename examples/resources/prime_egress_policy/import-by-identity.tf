import {
  to = prime_egress_policy.lock
  identity = {
    sandbox_id = "cm0abc123def456ghi789jklm"
  }
}
