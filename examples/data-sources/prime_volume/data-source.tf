resource "prime_volume" "datasets" {
  name    = "eval-datasets"
  size_gb = 20
}

# Read a volume by name (here the one above; usually one made elsewhere):
# its size, visibility and the checkpoint new attachments copy.
data "prime_volume" "datasets" {
  name       = prime_volume.datasets.name
  depends_on = [prime_volume.datasets] # read after it exists
}

# Null while nothing was ever published to the volume (it is empty).
output "datasets_head" {
  value = data.prime_volume.datasets.head_checkpoint_id
}
