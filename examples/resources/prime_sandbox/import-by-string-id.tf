import {
  to = prime_sandbox.example
  id = "cm0abc123def456ghi789jklm"
}
