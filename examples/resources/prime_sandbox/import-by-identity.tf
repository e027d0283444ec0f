import {
  to = prime_sandbox.example
  identity = {
    id = "cm0abc123def456ghi789jklm"
  }
}
