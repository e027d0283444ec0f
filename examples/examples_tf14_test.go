package examples_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	fwprovider "github.com/hashicorp/terraform-plugin-framework/provider"

	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/provider"
)

// Every action and list resource has the example tfplugindocs renders, and
// every resource with an identity an import-by-identity example.
func TestTerraform14ExamplesCoverEverySchema(t *testing.T) {
	ctx := context.Background()
	examples := filepath.Join(acctest.RepoRoot(t), "examples")
	p := provider.New("test")().(interface {
		fwprovider.ProviderWithActions
		fwprovider.ProviderWithListResources
	})
	for _, newAction := range p.Actions(ctx) {
		var md action.MetadataResponse
		newAction().Metadata(ctx, action.MetadataRequest{ProviderTypeName: "prime"}, &md)
		if !acctest.FileExists(filepath.Join(examples, "actions", md.TypeName, "action.tf")) {
			t.Errorf("examples/actions/%s/action.tf is missing", md.TypeName)
		}
	}
	for _, newList := range p.ListResources(ctx) {
		var md resource.MetadataResponse
		newList().Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "prime"}, &md)
		if !acctest.FileExists(filepath.Join(examples, "list-resources", md.TypeName, "list-resource.tfquery.hcl")) {
			t.Errorf("examples/list-resources/%s/list-resource.tfquery.hcl is missing", md.TypeName)
		}
	}
	for _, newResource := range p.Resources(ctx) {
		r := newResource()
		var md resource.MetadataResponse
		r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "prime"}, &md)
		_, identity := r.(resource.ResourceWithIdentity)
		if exists := acctest.FileExists(filepath.Join(examples, "resources", md.TypeName, "import-by-identity.tf")); identity != exists {
			t.Errorf("%s: identity %t, but examples/resources/%s/import-by-identity.tf exists: %t", md.TypeName, identity, md.TypeName, exists)
		}
	}
}

// The Terraform 1.12+ and 1.14+ examples — actions, list resources (query
// files) and imports by identity — are fmt clean and pass `terraform
// validate` (with -query) without errors or warnings, on a CLI that knows
// them. TestAccExamples leaves them out.
func TestAccTerraform14Examples(t *testing.T) {
	cli := acctest.RequireCLIAtLeast(t, acctest.Query)
	provider := acctest.DevProvider(t)
	t.Parallel()
	examples := filepath.Join(acctest.RepoRoot(t), "examples")
	env := acctest.TFEnv(provider())
	var dirs []string
	for _, group := range []string{"actions", "list-resources"} {
		entries, err := os.ReadDir(filepath.Join(examples, group))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			dirs = append(dirs, group+"/"+e.Name())
		}
	}
	identities, _ := filepath.Glob(filepath.Join(examples, "resources", "*", "import-by-identity.tf"))
	for _, f := range identities {
		rel, _ := filepath.Rel(examples, filepath.Dir(f))
		dirs = append(dirs, filepath.ToSlash(rel))
	}
	for _, rel := range dirs {
		t.Run(rel, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			src := filepath.Join(examples, filepath.FromSlash(rel))
			if out, err := acctest.WorkIn(t, cli, src, env).Try(ctx, "fmt", "-check", "-diff", "-recursive", "-no-color"); err != nil {
				t.Errorf("examples/%s is not terraform fmt clean: %v\n%s", rel, err, out)
			}
			work := filepath.Join(t.TempDir(), filepath.Base(src))
			acctest.CopyDir(t, src, work)
			// The import by ID names the same resource as the one by identity.
			_ = os.Remove(filepath.Join(work, "import-by-string-id.tf"))
			if err := os.WriteFile(filepath.Join(work, "zz_required_providers_test.tf"), []byte(requiredProvidersFile), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := acctest.WorkIn(t, cli, work, env).Try(ctx, "validate", "-query", "-json", "-no-color")
			var res validateJSON
			if jerr := json.Unmarshal([]byte(out), &res); jerr != nil {
				t.Fatalf("terraform validate in examples/%s: %v (%v)\n%s", rel, err, jerr, out)
			}
			var problems []string
			for _, d := range res.Diagnostics {
				if d.Severity == "warning" && d.Summary == "Provider development overrides are in effect" {
					continue
				}
				problems = append(problems, fmt.Sprintf("%s: %s: %s", d.Severity, d.Summary, d.Detail))
			}
			if err != nil || !res.Valid || len(problems) > 0 {
				t.Fatalf("terraform validate -query in examples/%s (valid %t, %v):\n%s", rel, res.Valid, err, strings.Join(problems, "\n"))
			}
		})
	}
}
