# Every running sandbox of an evaluation fleet, by label.
data "prime_sandboxes" "fleet" {
  labels = ["eval-fleet", "run-2024-06"]
  status = "RUNNING"
}

output "fleet_ids" {
  value = data.prime_sandboxes.fleet.ids
}

output "fleet_by_name" {
  value = { for sb in data.prime_sandboxes.fleet.sandboxes : sb.name => sb.id }
}
