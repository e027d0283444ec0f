terraform {
  # Variable validation that refers to other variables needs 1.9.
  required_version = ">= 1.9"

  required_providers {
    prime = {
      source = "primeintellect/prime"
    }
  }
}
