package tfcli

import (
	"fmt"
	"os"
)

// DevOverridesConfig is a CLI configuration that points
// primeintellect/prime at the provider binary in providerDir. With
// dev_overrides, validate, plan, apply, destroy and test run without
// `terraform init`, which would ask the registry for the provider and fail
// offline.
func DevOverridesConfig(providerDir string) string {
	return fmt.Sprintf(`provider_installation {
  dev_overrides {
    "primeintellect/prime" = %q
  }
  direct {}
}
`, providerDir)
}

// WriteDevOverrides writes DevOverridesConfig(providerDir) to path.
func WriteDevOverrides(path, providerDir string) error {
	return os.WriteFile(path, []byte(DevOverridesConfig(providerDir)), 0o600)
}
