# A tool server and a fleet of agents on one private network, the agents
# locked to an egress allowlist. Each agent starts only once
#   - its fleet's egress lock is enforced (sandbox_ids from the lock),
#   - every agent is on the network (triggers name the agents' membership),
#   - the tool server is on the network and serving (env and triggers name them).

variable "agents" {
  type    = number
  default = 8
}

resource "prime_sandbox_network" "eval" {
  name = "eval-tools"

  # Agents may open connections to the tool server on 8080; nothing else,
  # and never the other way round.
  rules = [
    { from = "tag:agent", to = "tag:tools", ports = [8080] },
  ]
}

# The tool server, set up and started with the network open.
resource "prime_sandbox" "tool" {
  name         = "tool-server"
  docker_image = "python:3.12-slim"
}

resource "prime_sandbox_command" "tool_serve" {
  sandbox_id = prime_sandbox.tool.id
  command    = "pip install my-tool-server && (nohup my-tool-server --port 8080 >/tmp/tool.log 2>&1 &)"
}

resource "prime_sandbox_network_member" "tool" {
  network_id = prime_sandbox_network.eval.id
  sandbox_id = prime_sandbox.tool.id
  tags       = ["tools"]
}

# The agents: trusted setup with the network open, then the lock.
resource "prime_sandbox_fleet" "agents" {
  name_prefix  = "agent"
  size         = var.agents
  docker_image = "python:3.12-slim"
}

resource "prime_fleet_command" "setup" {
  sandbox_ids         = prime_sandbox_fleet.agents.sandbox_ids
  commands            = ["pip install -r /workspace/requirements.txt"]
  require_open_egress = true
}

resource "prime_sandbox_network_member" "agents" {
  network_id  = prime_sandbox_network.eval.id
  sandbox_ids = prime_sandbox_fleet.agents.sandbox_ids
  tags        = ["agent"]
}

resource "prime_fleet_egress_policy" "lock" {
  sandbox_ids = prime_sandbox_fleet.agents.sandbox_ids

  # The internet: only the interception route. The tool server is reached
  # over the network, under its rules.
  allow  = []
  routes = ["https://intercept.example.net/v1"]
  after  = [prime_fleet_command.setup.id]
}

resource "prime_fleet_command" "agent" {
  sandbox_ids = prime_fleet_egress_policy.lock.sandbox_ids # once every lock is enforced
  commands    = ["python -m agent --tools \"$TOOL_URL\""]
  env = {
    TOOL_URL = "http://${prime_sandbox_network_member.tool.host}:8080" # once the tool joined
  }
  triggers = {
    lock    = prime_fleet_egress_policy.lock.id
    network = prime_sandbox_network_member.agents.id # once every agent joined
    tool    = prime_sandbox_command.tool_serve.id    # once the server started
  }
}

output "tool_url" {
  value = "http://${prime_sandbox_network_member.tool.host}:8080"
}
