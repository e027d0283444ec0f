variable "sandbox_id" {
  type    = string
  default = "cm0abc123def456ghi789jklm"
}

# Read one sandbox by ID, in any status (a terminated sandbox is reported,
# not an error; an unknown ID is).
data "prime_sandbox" "example" {
  id = var.sandbox_id
}

output "sandbox_status" {
  value = data.prime_sandbox.example.status
}

output "sandbox_arch" {
  value = data.prime_sandbox.example.arch # amd64 or arm64
}
