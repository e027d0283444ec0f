resource "prime_sandbox" "template" {
  name         = "eval-template"
  docker_image = "python:3.12-slim"
}

resource "prime_sandbox_checkpoint" "setup" {
  sandbox_id = prime_sandbox.template.id
}

# Read a checkpoint by ID, for instance one another configuration took: its
# state says whether sandboxes can be restored from it.
data "prime_sandbox_checkpoint" "setup" {
  id = prime_sandbox_checkpoint.setup.id
}

output "checkpoint_restorable" {
  value = data.prime_sandbox_checkpoint.setup.state == "DURABLE"
}
