terraform {
  required_providers {
    prime = { source = "primeintellect/prime" }
  }
}

provider "prime" {}

resource "prime_sandbox" "box" {
  name         = "upgrade-box"
  docker_image = "python:3.12-slim"
  vm           = true
  cpu_cores    = 2
  labels       = ["upgrade"]
}

resource "prime_sandbox" "defaults" {
  name         = "upgrade-defaults"
  docker_image = "python:3.12-slim"
}

resource "prime_sandbox_fleet" "fleet" {
  name_prefix  = "upgrade-fleet"
  size         = 2
  docker_image = "python:3.12-slim"
  vm           = true
  cpu_cores    = 2
}

data "prime_sandbox" "box" {
  id = prime_sandbox.box.id
}
