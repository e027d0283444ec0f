package provider

import (
	"context"
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/tfversion"
)

// tfFeature is a part of the Terraform 1.12+ / 1.14+ surface a test needs.
type tfFeature int

const (
	tfIdentity tfFeature = iota // import blocks with identity: Terraform 1.12
	tfQuery                     // list resources (terraform query) and actions: Terraform 1.14
)

// gate is the feature's first Terraform version, as a version check and as
// text and segments.
func (f tfFeature) gate() (check tfversion.TerraformVersionCheck, version string, segments []int) {
	v := tfversion.Version1_12_0
	if f == tfQuery {
		v = tfversion.Version1_14_0
	}
	return tfversion.SkipBelow(v), v.String(), v.Segments()
}

// skipBelow is the gate of tests that need a newer Terraform, as
// terraform-plugin-testing version checks. The one place to switch to the
// shared helper of cli_version_test.go (which fails instead of skipping
// under CI=true) once it is on this branch.
func skipBelow(f tfFeature) []tfversion.TerraformVersionCheck {
	check, _, _ := f.gate()
	return []tfversion.TerraformVersionCheck{check}
}

// requireCLIAtLeast is skipBelow for tests that drive the CLI themselves:
// requireCLI, skipped when that CLI is older than the feature needs.
func requireCLIAtLeast(t *testing.T, f tfFeature) string {
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
	_, want, segments := f.gate()
	if cliOlderThan(got.Version, segments) {
		t.Skipf("needs Terraform %s or later; %s is %s", want, cli, got.Version)
	}
	return cli
}

// cliOlderThan compares "1.15.0" (or "1.15.0-dev") with major, minor, patch.
func cliOlderThan(v string, want []int) bool {
	core, _, _ := strings.Cut(v, "-")
	parts := strings.Split(core, ".")
	for i, w := range want {
		n := 0
		if i < len(parts) {
			n, _ = strconv.Atoi(parts[i])
		}
		if n != w {
			return n < w
		}
	}
	return false
}

func TestCLIOlderThan(t *testing.T) {
	for _, c := range []struct {
		v    string
		want bool
	}{{"1.11.4", true}, {"1.14.0", false}, {"1.15.0", false}, {"1.13.9", true}, {"1.14.0-rc1", false}, {"2.0.0", false}} {
		if got := cliOlderThan(c.v, []int{1, 14, 0}); got != c.want {
			t.Errorf("cliOlderThan(%q, 1.14.0) = %t", c.v, got)
		}
	}
}
