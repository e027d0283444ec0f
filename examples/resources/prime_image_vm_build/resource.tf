# An image pushed before VM images existed has no VM artifact: every VM
# create from it fails with "VM image not found". Convert it once (nothing
# is requested when it already has one) and boot the fleet after it.
resource "prime_image_vm_build" "agent" {
  name = "legacy-agent"
  tag  = "v1"

  timeouts {
    create = "45m"
  }
}

data "prime_image" "agent" {
  name       = prime_image_vm_build.agent.name
  tag        = prime_image_vm_build.agent.tag
  depends_on = [prime_image_vm_build.agent]
}

resource "prime_sandbox_fleet" "agents" {
  name_prefix  = "agent"
  docker_image = "legacy-agent:v1"
  size         = 20

  lifecycle {
    precondition {
      condition     = data.prime_image.agent.vm_ready
      error_message = "legacy-agent:v1 has no ready VM artifact (VM artifact: ${coalesce(data.prime_image.agent.vm_status, "none")})."
    }
  }
}
