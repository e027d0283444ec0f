package soak

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
	"github.com/primeintellect/terraform-provider-prime/internal/provider"
)

// serveProviderEnv makes this test binary serve the provider instead of
// running tests: the short soak points Terraform's dev_overrides at a
// symlink to the test binary, so Terraform starts the real provider server
// (providerserver.Serve, as main.go does) as its own plugin process, with
// the code `go test` just compiled and without a `go build` inside the test.
const serveProviderEnv = "PRIME_SOAK_SERVE_PROVIDER"

func TestMain(m *testing.M) {
	if dir := os.Getenv(recordEnvDirEnv); dir != "" {
		recordEnv(dir)
	}
	switch {
	case os.Getenv(serveProviderEnv) == "1":
		os.Exit(serveProvider())
	case os.Getenv(fakeTerraformEnv) == "1":
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// serveProvider serves the provider as main.go does (the provider's own
// protocol 6 server). Profiling aid:
// PRIME_SOAK_CPUPROFILE_DIR=dir writes one CPU profile per provider process
// (point prime-bench -provider at a symlink to the test binary).
func serveProvider() int {
	if dir := os.Getenv("PRIME_SOAK_CPUPROFILE_DIR"); dir != "" {
		if f, err := os.Create(filepath.Join(dir, fmt.Sprintf("cpu-%d.pprof", os.Getpid()))); err == nil {
			if pprof.StartCPUProfile(f) == nil {
				defer pprof.StopCPUProfile()
			}
		}
	}
	err := tf6server.Serve(provider.Address, provider.NewProtocol6Server(provider.New("soak-test")()))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// terraformCLI is the CLI the Makefile chose, else terraform or tofu on PATH.
// Without one the test is skipped, except under CI (CI set), where a
// missing CLI is a broken runner, not a reason to pass.
func terraformCLI(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("TF_ACC_TERRAFORM_PATH"); p != "" {
		return p
	}
	for _, name := range []string{"terraform", "tofu"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no terraform or tofu on PATH (and CI is set)")
	}
	t.Skip("no terraform or tofu on PATH")
	return ""
}

// providerDir returns a directory holding terraform-provider-prime: the
// binary named by PRIME_SOAK_PROVIDER_BIN, or a symlink to this test binary
// (which then serves the provider, see TestMain).
func providerDir(t *testing.T) (dir string, env []string) {
	if bin := os.Getenv("PRIME_SOAK_PROVIDER_BIN"); bin != "" {
		abs, err := filepath.Abs(bin)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Base(abs) != "terraform-provider-prime" {
			t.Fatalf("PRIME_SOAK_PROVIDER_BIN must name a file called terraform-provider-prime, got %s", abs)
		}
		return filepath.Dir(abs), nil
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	if err := os.Symlink(self, filepath.Join(dir, "terraform-provider-prime")); err != nil {
		t.Fatal(err)
	}
	return dir, []string{serveProviderEnv + "=1"}
}

// TestShortSoak is the short variant of `make soak` that `make test` runs:
// N=20 sandboxes with egress policies applied through the Terraform CLI and
// the provider as a separate plugin process, against an in-process mock that
// fails 10 % of API requests with 503 (half of them after acting), throttles
// 5 % with 429 and adds 5 ms + [0, 20 ms) latency. It checks exactly N live
// sandboxes, none created twice, every policy applied and enforced, an empty
// second plan, and an empty mock after destroy.
func TestShortSoak(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("set TF_ACC=1 to run the short soak (it drives the Terraform CLI)")
	}
	tf := terraformCLI(t)
	dir, env := providerDir(t)

	seed := time.Now().UnixNano()
	if s := os.Getenv("PRIME_SOAK_SEED"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("PRIME_SOAK_SEED: %v", err)
		}
		seed = v
	}
	t.Logf("mock seed %d (replay with PRIME_SOAK_SEED=%d)", seed, seed)

	srv := primemock.New(primemock.Options{Seed: seed})
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		ts.Close()
		srv.Close()
	})

	ctx, cancel := context.WithTimeout(context.Background(), 170*time.Second)
	defer cancel()
	r := &Runner{
		Terraform:   tf,
		ProviderDir: dir,
		WorkRoot:    t.TempDir(),
		Mock:        NewMock(ts.URL),
		Parallelism: 10,
		Knobs: primemock.ConfigPatch{
			BootDelay:     D(300 * time.Millisecond),
			ApplyDelay:    D(200 * time.Millisecond),
			Latency:       D(5 * time.Millisecond),
			LatencyJitter: D(20 * time.Millisecond),
			FailRate:      F64(0.10),
			ThrottleRate:  F64(0.05),
		},
		Logf:     t.Logf,
		ExtraEnv: env,
	}
	rep := r.FaultRun(ctx, 20)
	t.Log("\n" + rep.String())
	if !rep.Passed() {
		for _, c := range rep.Failures() {
			t.Errorf("%s: %s", c.Name, c.Detail)
		}
		t.Logf("terraform output: %s", filepath.Join(r.WorkRoot, "fault", "terraform.log"))
	}
}
