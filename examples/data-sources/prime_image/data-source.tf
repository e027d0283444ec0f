variable "image" {
  type    = string
  default = "my-user-id/agent:v3"
}

# Read the image at plan time ...
data "prime_image" "agent" {
  reference = var.image
}

# ... and refuse to plan a fleet that could not boot it: without a VM
# artifact every create would fail with "VM image not found", after all of
# them were attempted. The plan fails here instead, before any create.
resource "prime_sandbox_fleet" "agents" {
  name_prefix  = "agent"
  docker_image = var.image
  size         = 50

  lifecycle {
    precondition {
      condition     = data.prime_image.agent.vm_ready
      error_message = "Image ${var.image} cannot boot a VM sandbox (VM artifact: ${coalesce(data.prime_image.agent.vm_status, "none")}). Add a prime_image_vm_build for it, or run `prime images push` again."
    }
  }
}
