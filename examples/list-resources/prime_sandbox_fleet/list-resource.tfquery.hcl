# One result per fleet: every label starting with "eval-run-" names one,
# and its import block adopts all of its members as one prime_sandbox_fleet.
list "prime_sandbox_fleet" "runs" {
  provider         = prime
  include_resource = true

  config {
    label_prefix = "eval-run-"
  }
}
