package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfcli"
)

// The examples under examples/ are what the generated documentation shows,
// and what users copy. These tests hold them to the provider's real schema:
// every example directory must pass `terraform validate` (with the provider
// built from this tree through dev_overrides) without errors or warnings,
// and be `terraform fmt` clean.

// repoRoot is the module root, two levels above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if !fileExists(filepath.Join(root, "go.mod")) {
		t.Fatalf("no go.mod in %s", root)
	}
	return root
}

// requireCLI skips unless TF_ACC is set and returns the Terraform CLI:
// TF_ACC_TERRAFORM_PATH, else terraform on PATH.
func requireCLI(t *testing.T) string {
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

// goHome is HOME as the test process started with it, captured before
// TestMain points HOME at a temporary directory: `go build` needs it to find
// the developer's module and build caches (without them it downloads every
// module and recompiles everything into a throwaway cache).
var goHome = os.Getenv("HOME")

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

// devProvider registers a user of the shared provider build and returns a
// function that builds it on first use (once per test process) and returns
// the path of a CLI configuration whose dev_overrides point
// primeintellect/prime at it. With dev_overrides, validate, plan, apply and
// test run without init (init would ask the registry for the provider).
//
// Call it before t.Parallel, so that every parallel user is registered
// before the first one finishes and removes the build.
func devProvider(t *testing.T) func() string {
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
			s.dir, s.rc, s.err = buildDevProvider(repoRoot(t))
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

// tfEnv is the environment of a Terraform CLI run: the process's, without
// anything that could redirect the CLI or the provider, plus extra.
func tfEnv(rc string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "TF_CLI_CONFIG_FILE", k == "TF_DATA_DIR", k == "TF_WORKSPACE", k == "TF_LOG", k == "TF_LOG_PATH",
			strings.HasPrefix(k, "TF_CLI_ARGS"), strings.HasPrefix(k, "TF_VAR_"), strings.HasPrefix(k, "PRIME_"):
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "TF_CLI_CONFIG_FILE="+rc, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1")
	return append(env, extra...)
}

// copyDir copies the regular files of src into dst, recursively, skipping
// Terraform's working files, so no state or lock file lands in the repo.
func copyDir(t *testing.T, src, dst string) {
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

// exampleDirs lists the example root modules, relative to examples/: the
// provider example, every resource and data source example, the guides'
// examples and the modules.
func exampleDirs(t *testing.T, examples string) []string {
	t.Helper()
	dirs := []string{"provider"}
	for _, group := range []string{"resources", "data-sources", "guides", "modules"} {
		entries, err := os.ReadDir(filepath.Join(examples, group))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() {
				dirs = append(dirs, group+"/"+e.Name())
			}
		}
	}
	sort.Strings(dirs)
	return dirs
}

var requiredProvidersRE = regexp.MustCompile(`(?m)^\s*required_providers\s*\{`)

// requiredProvidersFile is added to an example that does not declare the
// provider's source itself (resource and data source snippets do not), so
// that `prime` resolves to primeintellect/prime rather than hashicorp/prime.
const requiredProvidersFile = `terraform {
  required_providers {
    prime = {
      source = "primeintellect/prime"
    }
  }
}
`

// validateJSON is the part of `terraform validate -json` the test reads.
type validateJSON struct {
	Valid       bool `json:"valid"`
	Diagnostics []struct {
		Severity string `json:"severity"`
		Summary  string `json:"summary"`
		Detail   string `json:"detail"`
		Range    *struct {
			Filename string `json:"filename"`
			Start    struct {
				Line int `json:"line"`
			} `json:"start"`
		} `json:"range"`
	} `json:"diagnostics"`
}

// TestAccExamples validates every example directory against the provider
// built from this tree, checks that it is `terraform fmt` clean, and plans
// it against a mock (with a running VM for the examples that read one, and
// values for their required variables; the import-by-ID files name IDs
// that do not exist, and checkImportTargets covers them). Warnings fail
// validation too: an example that makes the provider warn (a wildcard
// without its apex, a duplicate entry) teaches the wrong thing.
func TestAccExamples(t *testing.T) {
	cli := requireCLI(t)
	provider := devProvider(t)
	t.Parallel()
	examples := filepath.Join(repoRoot(t), "examples")
	rc := provider()
	env := tfEnv(rc)

	m := newTestMock(t, fastMockOptions())
	sb, err := m.client(t).CreateSandbox(waitCtx(t), prime.CreateSandboxRequest{Name: "example-reads-me", DockerImage: "python:3.12-slim"})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.client(t).WaitForRunning(waitCtx(t), sb.ID, prime.WaitRunningOptions{}); err != nil {
		t.Fatal(err)
	}
	planEnv := tfEnv(rc, "PRIME_API_BASE_URL="+m.URL, "PRIME_API_KEY="+fastMockOptions().APIKey,
		"TF_VAR_prime_api_key="+fastMockOptions().APIKey, "TF_VAR_sandbox_id="+sb.ID,
		"TF_VAR_hf_token=example-token", "TF_VAR_dataset_token=example-token",
		"TF_VAR_name_prefix=example", "TF_VAR_image=python:3.12-slim", "TF_VAR_size=2")

	dirs := exampleDirs(t, examples)
	for _, want := range []string{"provider", "modules/eval-fleet"} {
		if !slices.Contains(dirs, want) {
			t.Errorf("examples/%s is missing", want)
		}
	}

	for _, rel := range dirs {
		t.Run(rel, func(t *testing.T) {
			t.Parallel()
			src := filepath.Join(examples, filepath.FromSlash(rel))
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()

			if out, err := tfWorkIn(t, cli, src, env).try(ctx, "fmt", "-check", "-diff", "-recursive", "-no-color"); err != nil {
				t.Errorf("examples/%s is not terraform fmt clean (run `terraform fmt -recursive examples`): %v\n%s", rel, err, out)
			}

			work := filepath.Join(t.TempDir(), filepath.Base(src))
			copyDir(t, src, work)
			files, _ := filepath.Glob(filepath.Join(work, "*.tf"))
			if len(files) == 0 {
				t.Fatalf("examples/%s has no .tf files", rel)
			}
			declared := false
			for _, f := range files {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				declared = declared || requiredProvidersRE.Match(data)
			}
			if !declared {
				if err := os.WriteFile(filepath.Join(work, "zz_required_providers_test.tf"), []byte(requiredProvidersFile), 0o644); err != nil {
					t.Fatal(err)
				}
			}

			// An import by identity needs Terraform 1.12+ and names the same
			// resource as the import by ID: TestAccTerraform14Examples
			// validates it on its own.
			if err := os.Remove(filepath.Join(work, "import-by-identity.tf")); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			out, err := tfWorkIn(t, cli, work, env).try(ctx, "validate", "-json", "-no-color")
			var res validateJSON
			if jerr := json.Unmarshal([]byte(out), &res); jerr != nil {
				t.Fatalf("terraform validate in examples/%s: %v (%v)\n%s", rel, err, jerr, out)
			}
			var problems []string
			for _, d := range res.Diagnostics {
				if d.Severity == "warning" && d.Summary == "Provider development overrides are in effect" {
					continue
				}
				where := ""
				if d.Range != nil {
					where = fmt.Sprintf(" (%s:%d)", d.Range.Filename, d.Range.Start.Line)
				}
				problems = append(problems, fmt.Sprintf("%s: %s%s: %s", d.Severity, d.Summary, where, d.Detail))
			}
			if err != nil || !res.Valid || len(problems) > 0 {
				t.Fatalf("terraform validate in examples/%s (valid %t, %v):\n%s", rel, res.Valid, err, strings.Join(problems, "\n"))
			}

			if err := os.Remove(filepath.Join(work, "import-by-string-id.tf")); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			if out, err := tfWorkIn(t, cli, work, planEnv).try(ctx, "plan", "-input=false", "-no-color"); err != nil {
				t.Errorf("terraform plan in examples/%s against the mock: %v\n%s", rel, err, out)
			}

			checkImportTargets(t, rel, src)
		})
	}
}

var (
	resourceBlockRE = regexp.MustCompile(`(?m)^\s*resource\s+"([^"]+)"\s+"([^"]+)"`)
	importToRE      = regexp.MustCompile(`(?m)^\s*to\s*=\s*([A-Za-z0-9_.\-\[\]"]+)`)
	importCmdRE     = regexp.MustCompile(`(?m)^\s*terraform\s+import\s+(\S+)\s+(\S+)`)
)

// checkImportTargets checks what validate does not: that the import block
// and the `terraform import` command of an example name a resource the
// example declares.
func checkImportTargets(t *testing.T, rel, dir string) {
	t.Helper()
	declared := map[string]bool{}
	files, _ := filepath.Glob(filepath.Join(dir, "*.tf"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range resourceBlockRE.FindAllStringSubmatch(string(data), -1) {
			declared[m[1]+"."+m[2]] = true
		}
	}
	check := func(file string, re *regexp.Regexp) {
		data, err := os.ReadFile(filepath.Join(dir, file))
		if os.IsNotExist(err) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		matches := re.FindAllStringSubmatch(string(data), -1)
		if len(matches) == 0 {
			t.Errorf("examples/%s/%s names no import target", rel, file)
		}
		for _, m := range matches {
			if !declared[m[1]] {
				t.Errorf("examples/%s/%s imports into %s, which the example does not declare", rel, file, m[1])
			}
		}
	}
	check("import-by-string-id.tf", importToRE)
	check("import.sh", importCmdRE)
}

// TestExamplesCoverEverySchema needs no CLI: every resource and data source
// has an example, and the import examples exist exactly for the resources
// that support import (tfplugindocs renders the Import section from them).
func TestExamplesCoverEverySchema(t *testing.T) {
	ctx := context.Background()
	examples := filepath.Join(repoRoot(t), "examples")
	p := New("test")()

	if !fileExists(filepath.Join(examples, "provider", "provider.tf")) {
		t.Error("examples/provider/provider.tf is missing")
	}
	for _, newResource := range p.Resources(ctx) {
		r := newResource()
		var md resource.MetadataResponse
		r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "prime"}, &md)
		dir := filepath.Join(examples, "resources", md.TypeName)
		if !fileExists(filepath.Join(dir, "resource.tf")) {
			t.Errorf("examples/resources/%s/resource.tf is missing", md.TypeName)
		}
		_, importable := r.(resource.ResourceWithImportState)
		for _, f := range []string{"import.sh", "import-by-string-id.tf"} {
			switch exists := fileExists(filepath.Join(dir, f)); {
			case importable && !exists:
				t.Errorf("%s supports import but examples/resources/%s/%s is missing", md.TypeName, md.TypeName, f)
			case !importable && exists:
				t.Errorf("%s does not support import, yet examples/resources/%s/%s exists", md.TypeName, md.TypeName, f)
			}
		}
	}
	for _, newDataSource := range p.DataSources(ctx) {
		var md datasource.MetadataResponse
		newDataSource().Metadata(ctx, datasource.MetadataRequest{ProviderTypeName: "prime"}, &md)
		if !fileExists(filepath.Join(examples, "data-sources", md.TypeName, "data-source.tf")) {
			t.Errorf("examples/data-sources/%s/data-source.tf is missing", md.TypeName)
		}
	}
}
