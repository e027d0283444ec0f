variable "sandbox_id" {
  description = "The member to debug."
  type        = string
}

variable "ssh_public_key" {
  description = "Your public key: the contents of ~/.ssh/id_ed25519.pub (never the private key)."
  type        = string
  default     = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIExampleExampleExampleExampleExampleExample you@laptop"
}

# A session for this run only: it is opened when Terraform needs it, closed
# when the run ends, and never stored in the plan or the state.
ephemeral "prime_sandbox_ssh_session" "debug" {
  sandbox_id  = var.sandbox_id
  public_key  = var.ssh_public_key
  ttl_seconds = 900
}

# Collect what a failed rollout left behind, over the session.
resource "terraform_data" "collect_logs" {
  provisioner "remote-exec" {
    inline = ["tail -n 200 /workspace/agent.log"]

    connection {
      type  = "ssh"
      host  = ephemeral.prime_sandbox_ssh_session.debug.host
      port  = ephemeral.prime_sandbox_ssh_session.debug.port
      agent = true # the private key stays in your ssh-agent
    }
  }
}
