# Block mode against the mock, with members by size: the denylist is sent
# canonical, without route hosts, and enforced after the setup.
provider "prime" {}

variables {
  name_prefix    = "block"
  size           = 1
  image          = "python:3.12-slim"
  setup_commands = ["echo setup && probe example.com"]
  block          = ["Example.com", "203.0.113.7", "10.1.2.3/8"]
  routes         = ["https://intercept.example.net/v1"]
  # Set, not left null: terraform test 1.11 refuses an unset ephemeral
  # variable at apply (hashicorp/terraform#38974).
  secrets_wo   = {}
  setup_env_wo = {}
  agent = {
    commands           = ["echo agent && probe example.com", "echo agent google && probe google.com"]
    allowed_exit_codes = [0, 7]
  }
}

run "blocklist" {
  assert {
    condition     = jsonencode(keys(output.sandbox_ids)) == jsonencode(["0"])
    error_message = "size = 1 must give the one member \"0\": ${jsonencode(output.sandbox_ids)}"
  }

  assert {
    condition     = jsonencode(output.effective_block) == jsonencode(["10.0.0.0/8", "203.0.113.7/32", "example.com"])
    error_message = "effective_block must be canonical and sorted, without route hosts: ${jsonencode(output.effective_block)}"
  }

  assert {
    condition     = output.effective_allow == null
    error_message = "effective_allow must be null in block mode"
  }

  assert {
    condition     = jsonencode(output.setup_exit_codes) == jsonencode({ "0" = [0] })
    error_message = "the setup ran before the blocklist, so example.com was reachable: ${jsonencode(output.setup_exit_codes)}"
  }

  assert {
    condition     = jsonencode(output.policy_generations) == jsonencode({ "0" = 1 }) && jsonencode(output.policy_applied) == jsonencode({ "0" = true })
    error_message = "the blocklist must be enforced: ${jsonencode(output.policy_generations)}"
  }

  assert {
    condition     = jsonencode(output.agent_exit_codes) == jsonencode({ "0" = [7, 0] })
    error_message = "the agent must not reach example.com and must reach google.com: ${jsonencode(output.agent_exit_codes)}"
  }
}
