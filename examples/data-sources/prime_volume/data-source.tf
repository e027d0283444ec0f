data "prime_volume" "datasets" {
  name = "eval-datasets"
}

# Null while nothing was ever published to the volume (it is empty).
output "datasets_head" {
  value = data.prime_volume.datasets.head_checkpoint_id
}
