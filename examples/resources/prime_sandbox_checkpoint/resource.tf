# Setup once, fan out: a template sandbox runs the trusted setup with the
# network open, and is checkpointed once the setup has run. The checkpoint
# is DURABLE (restorable, and outliving the template) before anything that
# depends on it starts.
resource "prime_sandbox" "template" {
  name         = "eval-template"
  docker_image = "python:3.12-slim"

  # The checkpoint deletes the template once it is DURABLE (below): keep it
  # in state, retired, so the next plan is empty. A checkpoint deleted out
  # of band un-retires it: the next apply makes a new template, runs the
  # setup and checkpoints it again.
  retire_after_checkpoint = true
}

resource "prime_sandbox_command" "setup" {
  sandbox_id          = prime_sandbox.template.id
  command             = "pip install -r /workspace/requirements.txt"
  require_open_egress = true
}

resource "prime_sandbox_checkpoint" "setup" {
  sandbox_id = prime_sandbox.template.id

  # A changed setup command gets a new ID, which takes a new checkpoint
  # (and orders the checkpoint after the setup).
  triggers = {
    setup = prime_sandbox_command.setup.id
  }

  # Deleted by the platform a week after it was taken, if not destroyed
  # before; a refresh then finds it gone and the next apply takes a new one.
  ttl_seconds = 7 * 24 * 60 * 60

  # Once the checkpoint is DURABLE it outlives the template: delete the
  # template, which is billed no longer. ("pause" keeps it, billed for its
  # disk, to run commands in it again later.)
  source_after = "delete"

  timeouts {
    create = "30m"
  }
}

output "setup_checkpoint" {
  value = {
    id           = prime_sandbox_checkpoint.setup.id
    stored_bytes = prime_sandbox_checkpoint.setup.stored_bytes
  }
}
