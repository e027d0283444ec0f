package provider

import (
	"testing"

	"github.com/hashicorp/go-version"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
)

// tfFeature is a part of the Terraform 1.12+ / 1.14+ surface a test needs.
type tfFeature int

const (
	tfIdentity tfFeature = iota // import blocks with identity: Terraform 1.12
	tfQuery                     // list resources (terraform query) and actions: Terraform 1.14
)

// minimum is the feature's first Terraform version.
func (f tfFeature) minimum() *version.Version {
	if f == tfQuery {
		return tfversion.Version1_14_0
	}
	return tfversion.Version1_12_0
}

// skipBelow is the gate of tests that need a newer Terraform, as
// terraform-plugin-testing version checks: cli_version_test.go's gate,
// which skips naming the CLI, and fails instead under CI=true when the run
// expects a Terraform that has the feature.
func skipBelow(f tfFeature) []tfversion.TerraformVersionCheck {
	return terraformAtLeast(f.minimum())
}

// requireCLIAtLeast is skipBelow for tests that drive the CLI themselves.
func requireCLIAtLeast(t *testing.T, f tfFeature) string {
	t.Helper()
	return requireTerraform(t, f.minimum())
}
