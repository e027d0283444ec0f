# A root module of its own, with no state: the CI job's last resort after a
# failure or a cancellation, run even when the evaluation's state is locked
# or lost. It deletes the sandboxes that carry the evaluation's label and
# are older than ten minutes (none of a run that is starting), whether a
# state holds them or not: run it after `terraform destroy`, never beside a
# live apply of the same label.
#
#   terraform apply -auto-approve -invoke=action.prime_sandbox_sweep.leftovers
variable "eval_label" {
  type    = string
  default = "eval-nightly"
}

provider "prime" {}

action "prime_sandbox_sweep" "leftovers" {
  config {
    labels     = [var.eval_label]
    older_than = "10m"
    dry_run    = false
  }
}
