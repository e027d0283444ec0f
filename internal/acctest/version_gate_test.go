package acctest

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-version"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
)

// TestCLIVersionGate holds the gate to its contract on made-up CLIs and
// environments. No CLI needed.
func TestCLIVersionGate(t *testing.T) {
	tf := func(v string) CLIInfo {
		return CLIInfo{name: "Terraform", version: version.Must(version.NewVersion(v))}
	}
	tofu := func(v string) CLIInfo { return CLIInfo{name: "OpenTofu", version: version.Must(version.NewVersion(v))} }
	min14 := tfversion.Version1_14_0
	expect15CI := gateEnv{ci: true, expect: "1.15"}
	for _, tc := range []struct {
		name string
		cli  CLIInfo
		env  gateEnv
		want gateVerdict
		msg  string // a part of the message
	}{
		{"terraform 1.15 runs", tf("1.15.0"), gateEnv{}, gateRun, ""},
		{"terraform 1.14.0 runs", tf("1.14.0"), expect15CI, gateRun, ""},
		{"a prerelease counts as its release", tf("1.14.0-rc1"), gateEnv{}, gateRun, ""},
		{"terraform 1.11 skips", tf("1.11.4"), gateEnv{}, gateSkip, "needs Terraform >= 1.14.0; the CLI is Terraform v1.11.4"},
		{"terraform 1.11 skips under CI without an expectation", tf("1.11.4"), gateEnv{ci: true}, gateSkip, "Terraform v1.11.4"},
		{"terraform 1.11 fails in the CI run that expects 1.15", tf("1.11.4"), expect15CI, gateFail, "this run expects Terraform 1.15"},
		{"terraform 1.11 skips, saying so, outside CI", tf("1.11.4"), gateEnv{expect: "1.15"}, gateSkip, "under CI=true this fails"},
		{"an expectation below the minimum skips", tf("1.13.3"), gateEnv{ci: true, expect: "1.13"}, gateSkip, "Terraform v1.13.3"},
		{"opentofu skips, named", tofu("1.12.6"), gateEnv{ci: true}, gateSkip, "the CLI is OpenTofu v1.12.6 (OpenTofu has no"},
		{"opentofu skips whatever its version", tofu("1.20.0"), gateEnv{}, gateSkip, "OpenTofu v1.20.0"},
		{"opentofu fails where Terraform 1.15 is expected", tofu("1.12.6"), expect15CI, gateFail, "OpenTofu v1.12.6"},
		{"a bad expectation fails", tf("1.11.4"), gateEnv{ci: true, expect: "latest"}, gateFail, `PRIME_TEST_EXPECT_TERRAFORM="latest" is not a version`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, msg := gate(tc.cli, min14, tc.env)
			if got != tc.want || !strings.Contains(msg, tc.msg) {
				t.Fatalf("gate(%s, >= 1.14.0, %+v) = %d %q; want %d with %q", tc.cli, tc.env, got, msg, tc.want, tc.msg)
			}
		})
	}

	// The tfversion adapter reports the same verdicts, with the version
	// terraform-plugin-testing read.
	for _, tc := range []struct {
		name      string
		cli       CLIInfo
		reqV      string
		wantSkip  string
		wantError string
	}{
		{"runs", tf("1.11.4"), "1.15.0", "", ""},
		{"skips", tf("1.15.0"), "1.11.4", "the CLI is Terraform v1.11.4", ""},
		{"fails", tf("1.11.4"), "1.11.4", "", "this run expects Terraform 1.15"},
		{"opentofu skips", tofu("1.12.6"), "1.12.6", "OpenTofu v1.12.6", ""},
	} {
		t.Run("tfversion "+tc.name, func(t *testing.T) {
			env := gateEnv{}
			if tc.wantError != "" {
				env = expect15CI
			}
			g := terraformGate{minimum: min14, env: &env, identify: func() (CLIInfo, error) { return tc.cli, nil }}
			var resp tfversion.CheckTerraformVersionResponse
			g.CheckTerraformVersion(context.Background(), tfversion.CheckTerraformVersionRequest{TerraformVersion: version.Must(version.NewVersion(tc.reqV))}, &resp)
			switch {
			case tc.wantSkip == "" && resp.Skip != "", tc.wantSkip != "" && !strings.Contains(resp.Skip, tc.wantSkip):
				t.Errorf("skip %q, want %q", resp.Skip, tc.wantSkip)
			case tc.wantError == "" && resp.Error != nil, tc.wantError != "" && (resp.Error == nil || !strings.Contains(resp.Error.Error(), tc.wantError)):
				t.Errorf("error %v, want %q", resp.Error, tc.wantError)
			}
		})
	}

	for _, tc := range []struct{ out, want string }{
		{"Terraform v1.15.0\non linux_amd64\n", "Terraform v1.15.0"},
		{"OpenTofu v1.12.6\non linux_amd64\n", "OpenTofu v1.12.6"},
		{"Terraform v1.14.0-rc1\n", "Terraform v1.14.0-rc1"},
	} {
		info, err := parseCLIVersion(tc.out)
		if err != nil || info.String() != tc.want {
			t.Errorf("parseCLIVersion(%q) = %v, %v; want %s", tc.out, info, err, tc.want)
		}
	}
	if _, err := parseCLIVersion("something else v1.0.0\n"); err == nil {
		t.Error("parseCLIVersion accepted a line that is neither Terraform's nor OpenTofu's")
	}
}

// TestAccCLIVersion_expected: when the Makefile says which Terraform a run
// is for (PRIME_TEST_EXPECT_TERRAFORM=1.15), the acceptance CLI is that
// Terraform; otherwise the test only logs which CLI the run uses.
func TestAccCLIVersion_expected(t *testing.T) {
	cli := RequireCLI(t)
	info, err := IdentifyCLI(cli)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("acceptance CLI: %s (%s)", info, cli)
	expect := gateEnvFromOS().expect
	if expect == "" {
		return
	}
	want, err := version.NewVersion(expect)
	if err != nil {
		t.Fatalf("%s=%q: %v", expectTerraformEnv, expect, err)
	}
	// "1.15" expects any 1.15.x; "1.15.0" exactly that release.
	got := info.version.Core().Segments()
	if !info.IsTerraform() || !sameLeading(got, want.Segments(), strings.Count(expect, ".")+1) {
		t.Fatalf("%s=%s, but the acceptance CLI %s is %s", expectTerraformEnv, expect, cli, info)
	}
}

func sameLeading(a, b []int, n int) bool {
	for i := range min(n, len(a), len(b)) {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestAccCLIVersion_gate proves the gate on the CLI at hand: it runs only
// on a Terraform that has 1.14's `terraform query` (on 1.11 and OpenTofu it
// skips, and fails in a CI run that expects 1.15), and there the command
// must exist.
func TestAccCLIVersion_gate(t *testing.T) {
	cli := RequireTerraform(t, tfversion.Version1_14_0)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, cli, "query", "-help").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "query") {
		t.Fatalf("the gate let %s through, but it has no `terraform query` (%v):\n%s", cli, err, out)
	}
}

// TestAccCLIVersion_gateTestCase is the same through terraform-plugin-
// testing's TerraformVersionChecks: a one-output configuration, applied
// only where the gate lets it.
func TestAccCLIVersion_gateTestCase(t *testing.T) {
	ran := false
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: ProviderFactories(t),
		TerraformVersionChecks:   TerraformAtLeast(tfversion.Version1_14_0),
		Steps: []resource.TestStep{{
			Config: `output "gated" { value = "ran" }`,
			Check: func(*terraform.State) error {
				ran = true
				return nil
			},
		}},
	})
	// A skip ends the test inside ParallelTest: here the gate let it run.
	if !ran {
		t.Fatal("the gate let the test case through, but its step never ran")
	}
}
