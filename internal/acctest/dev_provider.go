package acctest

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/tfcli"
)

// RepoRoot is the module root: the nearest directory above the test's
// package directory that holds go.mod.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for !FileExists(filepath.Join(dir, "go.mod")) {
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
	return dir
}

// RequireCLI skips unless TF_ACC is set and returns the Terraform CLI:
// TF_ACC_TERRAFORM_PATH, else terraform on PATH.
func RequireCLI(t *testing.T) string {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("set TF_ACC=1 to run tests that drive the Terraform CLI")
	}
	if p := os.Getenv("TF_ACC_TERRAFORM_PATH"); p != "" {
		return p
	}
	p, err := exec.LookPath("terraform")
	if err != nil {
		t.Fatal("no Terraform CLI: set TF_ACC_TERRAFORM_PATH or put terraform on PATH")
	}
	return p
}

// sharedDevProvider is the provider binary built from this tree, shared by
// the tests that drive the CLI in one test process, and removed when the
// last of them finishes.
var sharedDevProvider struct {
	mu    sync.Mutex
	users int
	dir   string // temporary directory; "" until built
	rc    string
	err   error
}

// DevProvider registers a user of the shared provider build and returns a
// function that builds it on first use (once per test process) and returns
// the path of a CLI configuration whose dev_overrides point
// primeintellect/prime at it. With dev_overrides, validate, plan, apply and
// test run without init (init would ask the registry for the provider).
//
// Call it before t.Parallel, so that every parallel user is registered
// before the first one finishes and removes the build.
func DevProvider(t *testing.T) func() string {
	t.Helper()
	s := &sharedDevProvider
	s.mu.Lock()
	s.users++
	s.mu.Unlock()
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.users--; s.users == 0 && s.dir != "" {
			_ = os.RemoveAll(s.dir)
			s.dir, s.rc, s.err = "", "", nil
		}
	})
	return func() string {
		t.Helper()
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.dir == "" && s.err == nil {
			s.dir, s.rc, s.err = buildDevProvider(RepoRoot(t))
		}
		if s.err != nil {
			t.Fatal(s.err)
		}
		return s.rc
	}
}

// buildDevProvider builds the provider into a new temporary directory and
// writes the dev_overrides CLI configuration next to it.
func buildDevProvider(root string) (dir, rc string, err error) {
	dir, err = os.MkdirTemp("", "prime-dev-provider-")
	if err != nil {
		return "", "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(dir, "terraform-provider-prime"), ".")
	build.Dir = root
	build.Env = append(os.Environ(), "HOME="+goHome)
	if out, err := build.CombinedOutput(); err != nil {
		return dir, "", fmt.Errorf("building the provider: %w\n%s", err, out)
	}
	rc = filepath.Join(dir, "terraformrc")
	if err := tfcli.WriteDevOverrides(rc, filepath.ToSlash(dir)); err != nil {
		return dir, "", err
	}
	return dir, rc, nil
}

// TFEnv is the environment of a Terraform CLI run: the process's, without
// anything that could redirect the CLI or the provider, plus extra.
func TFEnv(rc string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "TF_CLI_CONFIG_FILE", k == "TF_DATA_DIR", k == "TF_WORKSPACE", k == "TF_LOG", k == "TF_LOG_PATH",
			strings.HasPrefix(k, "TF_CLI_ARGS"), strings.HasPrefix(k, "TF_VAR_"), strings.HasPrefix(k, "PRIME_"),
			k == frameworkLogEnv && frameworkQuieted.Load():
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "TF_CLI_CONFIG_FILE="+rc, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1")
	return append(env, extra...)
}

// CopyDir copies the regular files of src into dst, recursively, skipping
// Terraform's working files, so no state or lock file lands in the repo.
func CopyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if name == ".terraform" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() || name == ".terraform.lock.hcl" || strings.Contains(name, ".tfstate") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatalf("copying %s: %v", src, err)
	}
}
