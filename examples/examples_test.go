package examples_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/provider"
)

// The examples under examples/ are what the generated documentation shows,
// and what users copy. These tests hold them to the provider's real schema:
// every example directory must pass `terraform validate` (with the provider
// built from this tree through dev_overrides) without errors or warnings,
// and be `terraform fmt` clean.

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
	cli := acctest.RequireCLI(t)
	provider := acctest.DevProvider(t)
	t.Parallel()
	examples := filepath.Join(acctest.RepoRoot(t), "examples")
	rc := provider()
	env := acctest.TFEnv(rc)

	m := mocktest.New(t, mocktest.Fast())
	sb, err := m.Client(t).CreateSandbox(mocktest.WaitCtx(t), prime.CreateSandboxRequest{Name: "example-reads-me", DockerImage: "python:3.12-slim"})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Client(t).WaitForRunning(mocktest.WaitCtx(t), sb.ID, prime.WaitRunningOptions{}); err != nil {
		t.Fatal(err)
	}
	planEnv := acctest.TFEnv(rc, "PRIME_API_BASE_URL="+m.URL, "PRIME_API_KEY="+mocktest.Fast().APIKey,
		"TF_VAR_prime_api_key="+mocktest.Fast().APIKey, "TF_VAR_sandbox_id="+sb.ID,
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

			if out, err := acctest.WorkIn(t, cli, src, env).Try(ctx, "fmt", "-check", "-diff", "-recursive", "-no-color"); err != nil {
				t.Errorf("examples/%s is not terraform fmt clean (run `terraform fmt -recursive examples`): %v\n%s", rel, err, out)
			}

			work := filepath.Join(t.TempDir(), filepath.Base(src))
			acctest.CopyDir(t, src, work)
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
			out, err := acctest.WorkIn(t, cli, work, env).Try(ctx, "validate", "-json", "-no-color")
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
			if out, err := acctest.WorkIn(t, cli, work, planEnv).Try(ctx, "plan", "-input=false", "-no-color"); err != nil {
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
	examples := filepath.Join(acctest.RepoRoot(t), "examples")
	p := provider.New("test")()

	if !acctest.FileExists(filepath.Join(examples, "provider", "provider.tf")) {
		t.Error("examples/provider/provider.tf is missing")
	}
	for _, newResource := range p.Resources(ctx) {
		r := newResource()
		var md resource.MetadataResponse
		r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "prime"}, &md)
		dir := filepath.Join(examples, "resources", md.TypeName)
		if !acctest.FileExists(filepath.Join(dir, "resource.tf")) {
			t.Errorf("examples/resources/%s/resource.tf is missing", md.TypeName)
		}
		_, importable := r.(resource.ResourceWithImportState)
		for _, f := range []string{"import.sh", "import-by-string-id.tf"} {
			switch exists := acctest.FileExists(filepath.Join(dir, f)); {
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
		if !acctest.FileExists(filepath.Join(examples, "data-sources", md.TypeName, "data-source.tf")) {
			t.Errorf("examples/data-sources/%s/data-source.tf is missing", md.TypeName)
		}
	}
}
