# Block mode against the mock: the denylist is sent as is (canonical), no
# route hosts are added. (Blocking a route host is a provider error at plan
# time, which terraform test cannot expect; the provider's acceptance tests
# cover it.)
provider "prime" {}

variables {
  sandbox_names  = ["solo"]
  image          = "python:3.12-slim"
  setup_commands = ["echo setup"]
  block          = ["Example.com", "203.0.113.7", "10.1.2.3/8"]
  routes         = ["https://intercept.example.net/v1"]
}

run "blocklist" {
  assert {
    condition     = output.effective_block["solo"] == tolist(["10.0.0.0/8", "203.0.113.7/32", "example.com"])
    error_message = "effective_block must be canonical and sorted, without route hosts: ${jsonencode(output.effective_block)}"
  }

  assert {
    condition     = output.effective_allow["solo"] == null
    error_message = "effective_allow must be null in block mode"
  }

  assert {
    condition     = output.applied_generations["solo"] >= 1
    error_message = "the blocklist must be enforced: ${jsonencode(output.applied_generations)}"
  }
}
