package acctest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/tfcli"
)

// The one harness of the tests that drive the real Terraform CLI: what
// survives a killed or interrupted Terraform, `terraform query`, modules,
// state surgery and examples can only be seen with the CLI. Work is
// tfcli's Workspace plus the test's failure handling; every run gets
// -no-color (see tfcli.Workspace.Run).

// Work is one Terraform working directory of a test.
type Work struct {
	*tfcli.Workspace
	t *testing.T
}

// CLIProviders is the terraform block of a configuration that uses the
// provider built from this tree (through dev_overrides).
const CLIProviders = `
terraform {
  required_providers {
    prime = { source = "primeintellect/prime" }
  }
}
`

// WorkIn is a working directory dir (which exists) whose runs use cli
// with env.
func WorkIn(t *testing.T, cli, dir string, env []string) *Work {
	return &Work{Workspace: tfcli.New(dir, cli, env), t: t}
}

// NewWork writes files into a new temporary directory whose runs use cli
// with env.
func NewWork(t *testing.T, cli string, env []string, files map[string]string) *Work {
	t.Helper()
	w := WorkIn(t, cli, t.TempDir(), env)
	for name, text := range files {
		w.Put(name, text)
	}
	return w
}

// NewMockWork is a new working directory against mock m, through the
// dev_overrides CLI configuration rc, whose main.tf is CLIProviders + hcl.
func NewMockWork(t *testing.T, m *mocktest.Mock, rc, cli, hcl string) *Work {
	t.Helper()
	w := NewWork(t, cli, MockEnv(rc, m), nil)
	w.Write(hcl)
	return w
}

// MockEnv is the environment of CLI runs against mock m.
func MockEnv(rc string, m *mocktest.Mock) []string {
	return TFEnv(rc, "PRIME_API_BASE_URL="+m.URL, "PRIME_API_KEY="+mocktest.APIKey)
}

// Write replaces main.tf with CLIProviders + hcl.
func (w *Work) Write(hcl string) { w.t.Helper(); w.Put("main.tf", CLIProviders+hcl) }

// Put writes one file of the working directory.
func (w *Work) Put(name, text string) {
	w.t.Helper()
	if err := w.WriteFile(name, text); err != nil {
		w.t.Fatal(err)
	}
}

// Read reads one file of the working directory.
func (w *Work) Read(name string) string {
	w.t.Helper()
	s, err := w.ReadFile(name)
	if err != nil {
		w.t.Fatal(err)
	}
	return s
}

// Exec runs the CLI to completion: its output and exit code. A run that
// could not start, or that ctx ended, fails the test.
func (w *Work) Exec(ctx context.Context, args ...string) (string, int) {
	w.t.Helper()
	res := w.Run(ctx, args...)
	if res.Err != nil {
		w.t.Fatalf("%s\n%s", res.Describe(), res.Output)
	}
	return res.Output, res.ExitCode
}

// Must runs the CLI and fails the test unless it exits 0.
func (w *Work) Must(ctx context.Context, args ...string) string {
	w.t.Helper()
	out, code := w.Exec(ctx, args...)
	if code != 0 {
		w.t.Fatalf("terraform %s exited %d:\n%s", strings.Join(args, " "), code, out)
	}
	return out
}

// Try runs the CLI: its output, and an error unless it exited 0.
func (w *Work) Try(ctx context.Context, args ...string) (string, error) {
	w.t.Helper()
	res := w.Run(ctx, args...)
	return res.Output, res.Check()
}

// Launch starts the CLI and returns at once; whatever is still running
// when the test ends is killed.
func (w *Work) Launch(args ...string) *tfcli.Running {
	w.t.Helper()
	r, err := w.Start(args...)
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { r.KillAll() })
	return r
}

// StateAttr is attribute attr of the resource at addr in the working
// directory's state ("" when absent).
func (w *Work) StateAttr(ctx context.Context, addr, attr string) string {
	w.t.Helper()
	state, err := w.State(ctx)
	if err != nil {
		w.t.Fatal(err)
	}
	for _, r := range state {
		if r.Address == addr {
			s, _ := r.Values[attr].(string)
			return s
		}
	}
	return ""
}

// OnNewRunner gives w's runs from now on a HOME of their own, as a new
// runner of ephemeral CI has: the same working directory and state (a
// remote backend), but an empty cache directory, hence no journal of what
// an earlier apply did. It returns the HOME.
func (w *Work) OnNewRunner() string {
	w.t.Helper()
	home := w.t.TempDir()
	env := make([]string, 0, len(w.Env)+1)
	for _, kv := range w.Env {
		k, _, _ := strings.Cut(kv, "=")
		if k != "HOME" && k != "XDG_CACHE_HOME" {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+home)
	w.Env = env
	return home
}

// JournalsIn lists the journal entry files the provider left under home's
// cache directory.
func JournalsIn(t *testing.T, home string) []string {
	t.Helper()
	var found []string
	root := filepath.Join(home, ".cache", "terraform-provider-prime")
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".json") {
			found = append(found, p)
		}
		return nil
	})
	return found
}

// OutputJSON is output name of the root module as compact JSON.
func (w *Work) OutputJSON(ctx context.Context, name string) string {
	w.t.Helper()
	out, err := w.Try(ctx, "output", "-json", name)
	if err != nil {
		w.t.Fatalf("terraform output %s: %v\n%s", name, err, out)
	}
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		w.t.Fatalf("terraform output %s: %v\n%s", name, err, out)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// KillTF kills Terraform and every plugin process it started, at once, and
// waits for Terraform to exit.
func KillTF(r *tfcli.Running) {
	r.KillAll()
	<-r.Done()
}

// InterruptTF sends Terraform one SIGINT (Ctrl-C) and waits for it to stop.
func InterruptTF(ctx context.Context, t *testing.T, r *tfcli.Running) {
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

// DestroyAtEnd destroys everything the working directory applied when the
// test ends, in ctx (register its cancel before this), and then checks that
// m runs no sandbox.
func (w *Work) DestroyAtEnd(ctx context.Context, m *mocktest.Mock) {
	w.t.Cleanup(func() {
		if out, code := w.Exec(ctx, "destroy", "-auto-approve", "-input=false"); code != 0 {
			w.t.Errorf("destroy exited %d:\n%s", code, out)
		}
		if live := m.Stats().LiveSandboxes; live != 0 {
			w.t.Errorf("%d sandboxes live after destroy", live)
		}
	})
}

// MockCLITest starts a test that drives the CLI against its own mock: it
// registers the provider build (before t.Parallel, see DevProvider), runs
// the test in parallel, and returns the mock, the CLI environment against
// it and a context of ten minutes that ends with the test.
func MockCLITest(t *testing.T) (*mocktest.Mock, []string, context.Context) {
	t.Helper()
	provider := DevProvider(t)
	t.Parallel()
	m := mocktest.New(t, mocktest.Fast())
	env := MockEnv(provider(), m)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	return m, env, ctx
}

// FleetMembers are the member sandbox IDs the state holds for the fleet
// at addr, sorted.
func (w *Work) FleetMembers(ctx context.Context, addr string) []string {
	t := w.t
	t.Helper()
	state, err := w.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range state {
		if r.Address != addr {
			continue
		}
		if m, ok := r.Values["sandbox_ids"].(map[string]any); ok {
			for _, v := range m {
				ids = append(ids, fmt.Sprint(v))
			}
		}
	}
	slices.Sort(ids)
	return ids
}
