terraform {
  required_providers {
    prime = {
      source = "primeintellect/prime"
    }
  }
}

# Credentials and endpoint are resolved like the Prime SDK does it: the
# provider block, then PRIME_API_KEY / PRIME_API_BASE_URL / PRIME_TEAM_ID,
# then ~/.prime/config.json (written by `prime login`). With `prime login`
# done, an empty block is enough:
provider "prime" {}

# Everything explicit, e.g. in CI. Keep the key out of the configuration:
# pass it in through a sensitive variable or PRIME_API_KEY.
variable "prime_api_key" {
  type      = string
  sensitive = true
  default   = null
}

provider "prime" {
  alias   = "team"
  api_key = var.prime_api_key
  team_id = "team-eval"

  # Pacing, shared by every resource of this provider process that talks to
  # the same API. The defaults suit fleets of hundreds of sandboxes.
  max_requests_per_second = 50
  max_concurrent_requests = 16
  max_retries             = 5

  # The create journal lets the next apply on the same machine adopt
  # sandboxes whose create a killed Terraform never saw return. An
  # ephemeral CI runner never runs that next apply, so it can go.
  create_journal = false
}

# Offline: point the provider at prime-mock (`prime-mock -addr
# 127.0.0.1:8080`), which accepts any non-empty key. Plain http:// is
# accepted on loopback hosts only; anything else needs https:// (or
# insecure_http = true, which sends the key in cleartext).
provider "prime" {
  alias    = "mock"
  base_url = "http://127.0.0.1:8080"
  api_key  = "mock"
}
