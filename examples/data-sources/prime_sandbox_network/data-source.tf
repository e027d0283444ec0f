resource "prime_sandbox_network" "eval" {
  name  = "eval-tools"
  rules = [{ from = "tag:agent", to = "tag:tools", ports = [8080] }]
}

# Read a network by ID (here one made above; usually one made elsewhere):
# its rules and its members as the platform holds them, whoever added them.
data "prime_sandbox_network" "eval" {
  id = prime_sandbox_network.eval.id
}

# Every member's address, by sandbox ID.
output "members" {
  value = { for m in data.prime_sandbox_network.eval.members : m.sandbox_id => m.host }
}
