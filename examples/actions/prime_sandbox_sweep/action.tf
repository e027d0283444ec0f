# terraform apply -invoke=action.prime_sandbox_sweep.preview
# lists the sandboxes of the run older than a day; nothing is deleted.
action "prime_sandbox_sweep" "preview" {
  config {
    labels     = ["eval-fleet", "run-2024-06"]
    older_than = "24h"
  }
}

# terraform apply -invoke=action.prime_sandbox_sweep.delete
# deletes them.
action "prime_sandbox_sweep" "delete" {
  config {
    labels     = ["eval-fleet", "run-2024-06"]
    older_than = "24h"
    dry_run    = false
  }
}
