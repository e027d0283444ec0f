package provider

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-version"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
)

// Version gating for tests of features newer than the oldest CLI the
// provider supports (Terraform 1.11): list resources, `terraform query` and
// actions need Terraform 1.14, and OpenTofu 1.12 has none of them.
//
//	cli := requireTerraform(t, tfversion.Version1_14_0) // tests that drive the CLI themselves
//	resource.Test(t, resource.TestCase{
//		TerraformVersionChecks: terraformAtLeast(tfversion.Version1_14_0), // plugin-testing tests
//		...
//	})
//
// Both skip, naming the CLI, when it is OpenTofu (whatever its version:
// OpenTofu's version numbers do not carry Terraform's features) or a
// Terraform below the minimum. One exception keeps CI honest: with CI=true
// and PRIME_TEST_EXPECT_TERRAFORM set (the Makefile sets it to the pinned
// Terraform's minor version, 1.15, for the run on that CLI), a CLI that
// falls short of a minimum the expected version meets fails the test: the
// run was supposed to cover it, and a skip would hide that it did not.

// expectTerraformEnv names the Terraform version a run is meant to use.
const expectTerraformEnv = "PRIME_TEST_EXPECT_TERRAFORM"

// cliInfo is what `<cli> version` says: Terraform or OpenTofu, and which.
type cliInfo struct {
	name    string // "Terraform" or "OpenTofu"
	version *version.Version
}

func (c cliInfo) String() string { return c.name + " v" + c.version.String() }

func (c cliInfo) isTerraform() bool { return c.name == "Terraform" }

var cliVersionLine = regexp.MustCompile(`^(Terraform|OpenTofu) v(\S+)`)

// parseCLIVersion reads the first line of `terraform version` or `tofu version`.
func parseCLIVersion(out string) (cliInfo, error) {
	first, _, _ := strings.Cut(out, "\n")
	m := cliVersionLine.FindStringSubmatch(strings.TrimSpace(first))
	if m == nil {
		return cliInfo{}, fmt.Errorf("not a Terraform or OpenTofu version line: %q", first)
	}
	v, err := version.NewVersion(m[2])
	if err != nil {
		return cliInfo{}, fmt.Errorf("version of %q: %w", first, err)
	}
	return cliInfo{name: m[1], version: v}, nil
}

// cliInfos caches identifyCLI per binary: every gated test asks.
var cliInfos sync.Map // path → cliInfoResult

type cliInfoResult struct {
	info cliInfo
	err  error
}

// identifyCLI runs `<cli> version` once per binary.
func identifyCLI(cli string) (cliInfo, error) {
	if r, ok := cliInfos.Load(cli); ok {
		r := r.(cliInfoResult)
		return r.info, r.err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cli, "version")
	// TestMain points TF_CLI_CONFIG_FILE at an existing file and turns off
	// checkpoint; the rest of the environment is the test process's.
	out, err := cmd.Output()
	var r cliInfoResult
	if err != nil {
		r.err = fmt.Errorf("%s version: %w", cli, err)
	} else {
		r.info, r.err = parseCLIVersion(string(out))
	}
	cliInfos.Store(cli, r)
	return r.info, r.err
}

// acceptanceCLI is the CLI the acceptance tests run, found as requireCLI
// and terraform-plugin-testing find it: TF_ACC_TERRAFORM_PATH, else
// terraform on PATH.
func acceptanceCLI() (string, error) {
	if p := os.Getenv("TF_ACC_TERRAFORM_PATH"); p != "" {
		return p, nil
	}
	p, err := exec.LookPath("terraform")
	if err != nil {
		return "", errors.New("no Terraform CLI: set TF_ACC_TERRAFORM_PATH or put terraform on PATH")
	}
	return p, nil
}

type gateVerdict int

const (
	gateRun gateVerdict = iota
	gateSkip
	gateFail
)

// gateEnv is the part of the environment the gate reads.
type gateEnv struct {
	ci     bool   // CI=true
	expect string // PRIME_TEST_EXPECT_TERRAFORM, "" when unset
}

func gateEnvFromOS() gateEnv {
	ci, _ := strconv.ParseBool(os.Getenv("CI"))
	return gateEnv{ci: ci, expect: strings.TrimSpace(os.Getenv(expectTerraformEnv))}
}

// gate decides whether a test that needs Terraform >= minimum runs on cli.
// Prereleases count as their release (1.14.0-rc1 meets 1.14.0), as
// tfversion.SkipBelow counts them.
func gate(cli cliInfo, minimum *version.Version, env gateEnv) (gateVerdict, string) {
	if cli.isTerraform() && !cli.version.Core().LessThan(minimum) {
		return gateRun, ""
	}
	why := fmt.Sprintf("needs Terraform >= %s; the CLI is %s", minimum, cli)
	if !cli.isTerraform() {
		why += " (OpenTofu has no list resources, query or actions)"
	}
	if env.expect == "" {
		return gateSkip, why
	}
	expected, err := version.NewVersion(env.expect)
	if err != nil {
		return gateFail, fmt.Sprintf("%s=%q is not a version: %v", expectTerraformEnv, env.expect, err)
	}
	if expected.LessThan(minimum) {
		// This run was never meant to cover the test.
		return gateSkip, why
	}
	if env.ci {
		return gateFail, fmt.Sprintf("%s; this run expects Terraform %s (%s), which would run it: the CLI under test is not the one the run is for",
			why, env.expect, expectTerraformEnv)
	}
	return gateSkip, fmt.Sprintf("%s (%s=%s expected a newer one; under CI=true this fails)", why, expectTerraformEnv, env.expect)
}

// requireTerraform skips t unless TF_ACC is set and the acceptance CLI is
// Terraform >= minimum (or fails it, in a CI run that expects a Terraform
// that meets minimum), and returns the CLI, as requireCLI does.
func requireTerraform(t *testing.T, minimum *version.Version) string {
	t.Helper()
	cli := requireCLI(t)
	info, err := identifyCLI(cli)
	if err != nil {
		t.Fatal(err)
	}
	switch verdict, msg := gate(info, minimum, gateEnvFromOS()); verdict {
	case gateSkip:
		t.Skip(msg)
	case gateFail:
		t.Fatal(msg)
	}
	return cli
}

// terraformAtLeast is requireTerraform for resource.TestCase's
// TerraformVersionChecks.
func terraformAtLeast(minimum *version.Version) []tfversion.TerraformVersionCheck {
	return []tfversion.TerraformVersionCheck{terraformGate{minimum: minimum}}
}

// terraformGate is the tfversion check behind terraformAtLeast. identify
// and env stand in for the CLI and the environment in unit tests.
type terraformGate struct {
	minimum  *version.Version
	identify func() (cliInfo, error)
	env      *gateEnv
}

func (g terraformGate) CheckTerraformVersion(_ context.Context, req tfversion.CheckTerraformVersionRequest, resp *tfversion.CheckTerraformVersionResponse) {
	identify := g.identify
	if identify == nil {
		identify = func() (cliInfo, error) {
			cli, err := acceptanceCLI()
			if err != nil {
				return cliInfo{}, err
			}
			return identifyCLI(cli)
		}
	}
	info, err := identify()
	if err != nil {
		resp.Error = err
		return
	}
	// The version terraform-plugin-testing read from the CLI it runs is the
	// one this test case gets.
	if req.TerraformVersion != nil {
		info.version = req.TerraformVersion
	}
	env := gateEnvFromOS()
	if g.env != nil {
		env = *g.env
	}
	switch verdict, msg := gate(info, g.minimum, env); verdict {
	case gateSkip:
		resp.Skip = msg
	case gateFail:
		resp.Error = errors.New(msg)
	}
}

// TestCLIVersionGate holds the gate to its contract on made-up CLIs and
// environments. No CLI needed.
func TestCLIVersionGate(t *testing.T) {
	tf := func(v string) cliInfo {
		return cliInfo{name: "Terraform", version: version.Must(version.NewVersion(v))}
	}
	tofu := func(v string) cliInfo { return cliInfo{name: "OpenTofu", version: version.Must(version.NewVersion(v))} }
	min14 := tfversion.Version1_14_0
	expect15CI := gateEnv{ci: true, expect: "1.15"}
	for _, tc := range []struct {
		name string
		cli  cliInfo
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
		cli       cliInfo
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
			g := terraformGate{minimum: min14, env: &env, identify: func() (cliInfo, error) { return tc.cli, nil }}
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
	cli := requireCLI(t)
	info, err := identifyCLI(cli)
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
	if !info.isTerraform() || !sameLeading(got, want.Segments(), strings.Count(expect, ".")+1) {
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
	cli := requireTerraform(t, tfversion.Version1_14_0)
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
		ProtoV6ProviderFactories: providerFactories(t),
		TerraformVersionChecks:   terraformAtLeast(tfversion.Version1_14_0),
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
