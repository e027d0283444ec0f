# Plan-time validation: bad inputs are refused before any API call.
#
# The provider is configured from the environment (PRIME_API_BASE_URL and
# PRIME_API_KEY), which the Go test points at an in-process prime-mock.
provider "prime" {}

variables {
  sandbox_names = ["a", "b"]
  image         = "python:3.12-slim"
}

run "allow_and_block_are_mutually_exclusive" {
  command = plan

  variables {
    allow = ["example.com"]
    block = ["example.org"]
  }

  expect_failures = [var.allow]
}

run "resources_must_be_positive" {
  command = plan

  variables {
    resources = { cpu_cores = 0 }
  }

  expect_failures = [var.resources]
}

run "at_most_eight_setup_commands" {
  command = plan

  variables {
    setup_commands = ["echo 1", "echo 2", "echo 3", "echo 4", "echo 5", "echo 6", "echo 7", "echo 8", "echo 9"]
  }

  expect_failures = [var.setup_commands]
}

run "policy_timeout_is_a_duration" {
  command = plan

  variables {
    allow          = []
    policy_timeout = "a minute"
  }

  expect_failures = [var.policy_timeout]
}

run "plan_shows_the_policy_before_apply" {
  command = plan

  variables {
    allow  = ["Example.COM", "1.2.3.4"]
    routes = ["https://intercept.example.net/v1"]
  }

  assert {
    condition     = length(prime_egress_policy.this) == 2
    error_message = "one egress policy per sandbox"
  }

  assert {
    condition     = prime_egress_policy.this["a"].effective_allow == tolist(["intercept.example.net", "1.2.3.4/32", "example.com"])
    error_message = "effective_allow must be canonical, with the route host first: ${jsonencode(prime_egress_policy.this["a"].effective_allow)}"
  }
}

run "no_lists_means_no_policy" {
  command = plan

  assert {
    condition     = length(prime_egress_policy.this) == 0
    error_message = "neither allow nor block must leave egress unrestricted (no policy)"
  }
}
