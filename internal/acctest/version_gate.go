package acctest

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
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
)

// Version gating for tests of features newer than the oldest CLI the
// provider supports (Terraform 1.11): list resources, `terraform query` and
// actions need Terraform 1.14, and OpenTofu 1.12 has none of them.
//
//	cli := RequireTerraform(t, tfversion.Version1_14_0) // tests that drive the CLI themselves
//	resource.Test(t, resource.TestCase{
//		TerraformVersionChecks: TerraformAtLeast(tfversion.Version1_14_0), // plugin-testing tests
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

// CLIInfo is what `<cli> version` says: Terraform or OpenTofu, and which.
type CLIInfo struct {
	name    string // "Terraform" or "OpenTofu"
	version *version.Version
}

func (c CLIInfo) String() string { return c.name + " v" + c.version.String() }

// IsTerraform tells Terraform from OpenTofu.
func (c CLIInfo) IsTerraform() bool { return c.name == "Terraform" }

// Version is the CLI's version.
func (c CLIInfo) Version() *version.Version { return c.version }

var cliVersionLine = regexp.MustCompile(`^(Terraform|OpenTofu) v(\S+)`)

// parseCLIVersion reads the first line of `terraform version` or `tofu version`.
func parseCLIVersion(out string) (CLIInfo, error) {
	first, _, _ := strings.Cut(out, "\n")
	m := cliVersionLine.FindStringSubmatch(strings.TrimSpace(first))
	if m == nil {
		return CLIInfo{}, fmt.Errorf("not a Terraform or OpenTofu version line: %q", first)
	}
	v, err := version.NewVersion(m[2])
	if err != nil {
		return CLIInfo{}, fmt.Errorf("version of %q: %w", first, err)
	}
	return CLIInfo{name: m[1], version: v}, nil
}

// cliInfos caches IdentifyCLI per binary: every gated test asks.
var cliInfos sync.Map // path → cliInfoResult

type cliInfoResult struct {
	info CLIInfo
	err  error
}

// IdentifyCLI runs `<cli> version` once per binary.
func IdentifyCLI(cli string) (CLIInfo, error) {
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

// AcceptanceCLI is the CLI the acceptance tests run, found as RequireCLI
// and terraform-plugin-testing find it: TF_ACC_TERRAFORM_PATH, else
// terraform on PATH.
func AcceptanceCLI() (string, error) {
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
func gate(cli CLIInfo, minimum *version.Version, env gateEnv) (gateVerdict, string) {
	if cli.IsTerraform() && !cli.version.Core().LessThan(minimum) {
		return gateRun, ""
	}
	why := fmt.Sprintf("needs Terraform >= %s; the CLI is %s", minimum, cli)
	if !cli.IsTerraform() {
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

// RequireTerraform skips t unless TF_ACC is set and the acceptance CLI is
// Terraform >= minimum (or fails it, in a CI run that expects a Terraform
// that meets minimum), and returns the CLI, as RequireCLI does.
func RequireTerraform(t *testing.T, minimum *version.Version) string {
	t.Helper()
	cli := RequireCLI(t)
	info, err := IdentifyCLI(cli)
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

// TerraformAtLeast is RequireTerraform for resource.TestCase's
// TerraformVersionChecks.
func TerraformAtLeast(minimum *version.Version) []tfversion.TerraformVersionCheck {
	return []tfversion.TerraformVersionCheck{terraformGate{minimum: minimum}}
}

// terraformGate is the tfversion check behind TerraformAtLeast. identify
// and env stand in for the CLI and the environment in unit tests.
type terraformGate struct {
	minimum  *version.Version
	identify func() (CLIInfo, error)
	env      *gateEnv
}

func (g terraformGate) CheckTerraformVersion(_ context.Context, req tfversion.CheckTerraformVersionRequest, resp *tfversion.CheckTerraformVersionResponse) {
	identify := g.identify
	if identify == nil {
		identify = func() (CLIInfo, error) {
			cli, err := AcceptanceCLI()
			if err != nil {
				return CLIInfo{}, err
			}
			return IdentifyCLI(cli)
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

// Feature is a part of the Terraform 1.12+ / 1.14+ surface a test needs.
type Feature int

const (
	Identity Feature = iota // import blocks with identity: Terraform 1.12
	Query                   // list resources (terraform query) and actions: Terraform 1.14
)

// Minimum is the feature's first Terraform version.
func (f Feature) Minimum() *version.Version {
	if f == Query {
		return tfversion.Version1_14_0
	}
	return tfversion.Version1_12_0
}

// SkipBelow is the gate of tests that need a newer Terraform, as
// terraform-plugin-testing version checks: this file's gate,
// which skips naming the CLI, and fails instead under CI=true when the run
// expects a Terraform that has the feature.
func SkipBelow(f Feature) []tfversion.TerraformVersionCheck {
	return TerraformAtLeast(f.Minimum())
}

// RequireCLIAtLeast is SkipBelow for tests that drive the CLI themselves.
func RequireCLIAtLeast(t *testing.T, f Feature) string {
	t.Helper()
	return RequireTerraform(t, f.Minimum())
}
