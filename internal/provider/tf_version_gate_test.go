package provider

import (
	"context"
	"encoding/json"
	"os/exec"
	"testing"
	"time"

	"github.com/hashicorp/go-version"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
)

// The Terraform versions the 1.12+ and 1.14+ surface needs: resource
// identity (import blocks with identity), and list resources and actions.
var (
	tfIdentity = tfversion.Version1_12_0
	tfQuery    = tfversion.Version1_14_0
)

// skipBelow is the gate of tests that need a newer Terraform, as
// terraform-plugin-testing version checks. The one place to switch to the
// shared helper of cli_version_test.go (which fails instead of skipping
// under CI=true) once it is on this branch.
func skipBelow(v *version.Version) []tfversion.TerraformVersionCheck {
	return []tfversion.TerraformVersionCheck{tfversion.SkipBelow(v)}
}

// requireCLIAtLeast is skipBelow for tests that drive the CLI themselves:
// requireCLI, skipped when that CLI is older than v.
func requireCLIAtLeast(t *testing.T, v *version.Version) string {
	t.Helper()
	cli := requireCLI(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, cli, "version", "-json").Output()
	if err != nil {
		t.Fatalf("%s version -json: %v", cli, err)
	}
	var got struct {
		Version string `json:"terraform_version"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%s version -json: %v\n%s", cli, err, out)
	}
	have, err := version.NewVersion(got.Version)
	if err != nil {
		t.Fatalf("%s version %q: %v", cli, got.Version, err)
	}
	if have.Core().LessThan(v) {
		t.Skipf("needs Terraform %s or later; %s is %s", v, cli, have)
	}
	return cli
}
