terraform {
  # Write-only arguments and ephemeral variables (secrets_wo, setup_env_wo)
  # need 1.11.
  required_version = ">= 1.11"

  required_providers {
    prime = {
      source = "primeintellect/prime"
      # prime_sandbox_fleet, prime_fleet_command and prime_fleet_egress_policy.
      version = ">= 0.1.0"
    }
  }
}
