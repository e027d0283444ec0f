import {
  to = prime_egress_policy.lock
  id = "cm0abc123def456ghi789jklm"
}
