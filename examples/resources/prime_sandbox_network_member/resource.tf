resource "prime_sandbox_network" "eval" {
  name  = "eval-run-7"
  rules = [{ from = "tag:agent", to = "tag:tools", ports = [8080] }]
}

resource "prime_sandbox" "tool" {
  name         = "tool-server"
  docker_image = "python:3.12-slim"
}

# One sandbox: its address on the network is in host.
resource "prime_sandbox_network_member" "tool" {
  network_id = prime_sandbox_network.eval.id
  sandbox_id = prime_sandbox.tool.id
  tags       = ["tools"]
}

resource "prime_sandbox_fleet" "agents" {
  name_prefix  = "agent"
  size         = 4
  docker_image = "python:3.12-slim"
}

# Every member of a fleet, concurrently; members that join or leave the
# fleet join or leave the network in place.
resource "prime_sandbox_network_member" "agents" {
  network_id  = prime_sandbox_network.eval.id
  sandbox_ids = prime_sandbox_fleet.agents.sandbox_ids
  tags        = ["agent"]
}

output "tool_url" {
  value = "http://${prime_sandbox_network_member.tool.host}:8080"
}

output "agent_hosts" {
  value = { for k, m in prime_sandbox_network_member.agents.members : k => m.host }
}
