# terraform query -generate-config-out=adopted.tf
# finds the running sandboxes of a run whose state was lost and writes a
# prime_sandbox block and an import block for each; `terraform plan` then
# imports them and changes nothing else.
list "prime_sandbox" "lost_run" {
  provider         = prime
  include_resource = true
  limit            = 500

  config {
    labels         = ["eval-fleet", "run-2024-06"]
    name_prefix    = "eval-"
    created_before = "2024-07-01T00:00:00Z"
  }
}
