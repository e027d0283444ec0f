variable "network_id" {
  type = string
}

data "prime_sandbox_network" "eval" {
  id = var.network_id
}

# Every member's address, by sandbox ID.
output "members" {
  value = { for m in data.prime_sandbox_network.eval.members : m.sandbox_id => m.host }
}
