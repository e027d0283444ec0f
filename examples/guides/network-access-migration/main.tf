terraform {
  required_providers {
    prime = {
      source = "primeintellect/prime"
    }
  }
}

# network_access = false becomes a VM sandbox plus allow = []: all egress
# denied except the framework routes.
resource "prime_sandbox" "restricted" {
  name         = "eval-restricted"
  docker_image = "python:3.12-slim"
  vm           = true
}

resource "prime_egress_policy" "restricted" {
  sandbox_id = prime_sandbox.restricted.id
  allow      = []
  routes     = ["https://intercept.example.net/v1"]
}

# network_access = true (the old default) is no policy at all.
resource "prime_sandbox" "open" {
  name         = "eval-open"
  docker_image = "python:3.12-slim"
}
