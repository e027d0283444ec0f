# Read one sandbox by ID, in any status.
data "prime_sandbox" "example" {
  id = "cm0abc123def456ghi789jklm"
}

output "sandbox_status" {
  value = data.prime_sandbox.example.status
}
