package provider

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/tfcli"
)

// The one harness of the tests that drive the real Terraform CLI: what
// survives a killed or interrupted Terraform, `terraform query`, modules,
// state surgery and examples can only be seen with the CLI. tfWork is
// tfcli's Workspace plus the test's failure handling; every run gets
// -no-color (see tfcli.Workspace.Run).

// tfWork is one Terraform working directory of a test.
type tfWork struct {
	*tfcli.Workspace
	t *testing.T
}

// cliProviders is the terraform block of a configuration that uses the
// provider built from this tree (through dev_overrides).
const cliProviders = `
terraform {
  required_providers {
    prime = { source = "primeintellect/prime" }
  }
}
`

// tfWorkIn is a working directory dir (which exists) whose runs use cli
// with env.
func tfWorkIn(t *testing.T, cli, dir string, env []string) *tfWork {
	return &tfWork{Workspace: tfcli.New(dir, cli, env), t: t}
}

// newTFWork writes files into a new temporary directory whose runs use cli
// with env.
func newTFWork(t *testing.T, cli string, env []string, files map[string]string) *tfWork {
	t.Helper()
	w := tfWorkIn(t, cli, t.TempDir(), env)
	for name, text := range files {
		w.writeFile(name, text)
	}
	return w
}

// newMockWork is a new working directory against mock m, through the
// dev_overrides CLI configuration rc, whose main.tf is cliProviders + hcl.
func newMockWork(t *testing.T, m *testMock, rc, cli, hcl string) *tfWork {
	t.Helper()
	w := newTFWork(t, cli, mockEnv(rc, m), nil)
	w.write(hcl)
	return w
}

// mockEnv is the environment of CLI runs against mock m.
func mockEnv(rc string, m *testMock) []string {
	return tfEnv(rc, "PRIME_API_BASE_URL="+m.URL, "PRIME_API_KEY="+fastMockOptions().APIKey)
}

// write replaces main.tf with cliProviders + hcl.
func (w *tfWork) write(hcl string) { w.t.Helper(); w.writeFile("main.tf", cliProviders+hcl) }

// writeFile writes one file of the working directory.
func (w *tfWork) writeFile(name, text string) {
	w.t.Helper()
	if err := w.WriteFile(name, text); err != nil {
		w.t.Fatal(err)
	}
}

// read reads one file of the working directory.
func (w *tfWork) read(name string) string {
	w.t.Helper()
	s, err := w.ReadFile(name)
	if err != nil {
		w.t.Fatal(err)
	}
	return s
}

// run runs the CLI to completion: its output and exit code. A run that
// could not start, or that ctx ended, fails the test.
func (w *tfWork) run(ctx context.Context, args ...string) (string, int) {
	w.t.Helper()
	res := w.Run(ctx, args...)
	if res.Err != nil {
		w.t.Fatalf("%s\n%s", res.Describe(), res.Output)
	}
	return res.Output, res.ExitCode
}

// must runs the CLI and fails the test unless it exits 0.
func (w *tfWork) must(ctx context.Context, args ...string) string {
	w.t.Helper()
	out, code := w.run(ctx, args...)
	if code != 0 {
		w.t.Fatalf("terraform %s exited %d:\n%s", strings.Join(args, " "), code, out)
	}
	return out
}

// try runs the CLI: its output, and an error unless it exited 0.
func (w *tfWork) try(ctx context.Context, args ...string) (string, error) {
	w.t.Helper()
	res := w.Run(ctx, args...)
	return res.Output, res.Check()
}

// start starts the CLI and returns at once; whatever is still running when
// the test ends is killed.
func (w *tfWork) start(args ...string) *tfcli.Running {
	w.t.Helper()
	r, err := w.Start(args...)
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { r.KillAll() })
	return r
}

// killTF kills Terraform and every plugin process it started, at once, and
// waits for Terraform to exit.
func killTF(r *tfcli.Running) {
	r.KillAll()
	<-r.Done()
}

// interruptTF sends Terraform one SIGINT (Ctrl-C) and waits for it to stop.
func interruptTF(ctx context.Context, t *testing.T, r *tfcli.Running) {
	t.Helper()
	if err := r.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.Done():
	case <-ctx.Done():
		t.Fatalf("terraform did not stop after SIGINT:\n%s", r.Output())
	}
}

// destroyAtEnd destroys everything the working directory applied when the
// test ends, in ctx (register its cancel before this), and then checks that
// m runs no sandbox.
func (w *tfWork) destroyAtEnd(ctx context.Context, m *testMock) {
	w.t.Cleanup(func() {
		if out, code := w.run(ctx, "destroy", "-auto-approve", "-input=false"); code != 0 {
			w.t.Errorf("destroy exited %d:\n%s", code, out)
		}
		if live := m.Stats().LiveSandboxes; live != 0 {
			w.t.Errorf("%d sandboxes live after destroy", live)
		}
	})
}

// mockCLITest starts a test that drives the CLI against its own mock: it
// registers the provider build (before t.Parallel, see devProvider), runs
// the test in parallel, and returns the mock, the CLI environment against
// it and a context of ten minutes that ends with the test.
func mockCLITest(t *testing.T) (*testMock, []string, context.Context) {
	t.Helper()
	provider := devProvider(t)
	t.Parallel()
	m := newTestMock(t, fastMockOptions())
	env := mockEnv(provider(), m)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	return m, env, ctx
}
