package sandbox_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
)

// importedRun is what gets imported: a born-restricted sandbox, a plain
// one, a policy layered on a sandbox, and a labelled fleet, each configured with just
// what an import reads back, so importing it plans no other change.
const importedRun = `
resource "prime_sandbox" "born" {
  name         = "imp-born"
  docker_image = "python:3.12-slim"
  egress {
    allow = ["pypi.org"]
  }
}

resource "prime_sandbox" "box" {
  name         = "imp-box"
  docker_image = "python:3.12-slim"
  cpu_cores    = 2
}

resource "prime_sandbox" "locked" {
  name         = "imp-locked"
  docker_image = "python:3.12-slim"
}

resource "prime_egress_policy" "lock" {
  sandbox_id = prime_sandbox.locked.id
  allow      = ["example.com"]
}

resource "prime_sandbox_fleet" "fleet" {
  name_prefix  = "imp"
  docker_image = "python:3.12-slim"
  labels       = ["imp-fleet"]
  size         = 2
}
`

// importBlocks imports importedRun's resources by ID, but for the locked
// sandbox.
func importBlocks(ids map[string]string) string {
	return fmt.Sprintf(`
import {
  to = prime_sandbox.born
  id = %q
}
import {
  to = prime_sandbox.box
  id = %q
}
import {
  to = prime_egress_policy.lock
  id = %q
}
import {
  to = prime_sandbox_fleet.fleet
  id = "label:imp-fleet"
}
`, ids["born"], ids["box"], ids["locked"])
}

// Drift checks CI can trust after an import: once resources are imported
// (import blocks, then an apply that changes nothing else), `terraform plan
// -refresh-only -detailed-exitcode` exits 0 on every CLI, again and again:
// the provider's Read never rewrites its private import marker after the
// import's own Read. Terraform 1.15 counted that rewrite as a change
// (exit 2, "No changes").
func TestAccRefreshOnlyAfterImport(t *testing.T) {
	cli := acctest.RequireCLI(t)
	m, env, ctx := acctest.MockCLITest(t)
	w := acctest.NewWork(t, cli, env, map[string]string{"main.tf": refreshProviders + importedRun})
	w.DestroyAtEnd(ctx, m)
	w.Must(ctx, "apply", "-auto-approve", "-input=false")
	ids := map[string]string{}
	statePath := filepath.Join(w.Dir, "terraform.tfstate")
	for _, name := range []string{"born", "box", "locked"} {
		ids[name] = stateInstanceOf(t, statePath, "prime_sandbox", name).Attributes["id"].(string)
	}
	// Forgotten, still running. The locked sandbox stays in state: imported
	// with its policy, it would read the policy's lists into its egress
	// block, and this configuration (none) would plan to reopen it (the
	// plan warns; see the import docs of prime_sandbox).
	w.Must(ctx, "state", "rm", "prime_sandbox.born", "prime_sandbox.box", "prime_egress_policy.lock", "prime_sandbox_fleet.fleet")

	w.Put("imports.tf", importBlocks(ids))
	w.Must(ctx, "apply", "-auto-approve", "-input=false")
	refreshOnlyUnchanged(ctx, t, w, "after the import")
	if out, code := w.Exec(ctx, "plan", "-detailed-exitcode", "-input=false"); code != 0 {
		t.Fatalf("the plan after the import exited %d, want 0:\n%s", code, out)
	}
	// An apply of nothing, and the drift check still exits 0.
	w.Must(ctx, "apply", "-auto-approve", "-input=false")
	if out, code := w.Exec(ctx, "plan", "-refresh-only", "-detailed-exitcode", "-input=false"); code != 0 {
		t.Fatalf("refresh-only plan after a second apply exited %d, want 0:\n%s", code, out)
	}

	// What that leaves, and says: no apply has recorded the configuration
	// since the import, so the first change of a value the platform cannot
	// report is recorded in place, with a warning that names it and how to
	// replace; from then on a change replaces.
	withSecret := func(v string) {
		t.Helper()
		cfg := strings.Replace(importedRun, `cpu_cores    = 2`, fmt.Sprintf("cpu_cores    = 2\n  secrets      = { T = %q }", v), 1)
		w.Put("main.tf", refreshProviders+cfg)
	}
	withSecret("one")
	plan := w.Must(ctx, "plan", "-input=false")
	for _, want := range []string{"prime_sandbox.box will be updated in-place", "Imported sandbox: recording settings",
		"secrets", "-replace"} {
		if !strings.Contains(plan, want) {
			t.Fatalf("the first change of secrets after the import: the plan lacks %q:\n%s", want, plan)
		}
	}
	w.Must(ctx, "apply", "-auto-approve", "-input=false")
	withSecret("two")
	if plan := w.Must(ctx, "plan", "-input=false"); !strings.Contains(plan, "prime_sandbox.box must be replaced") ||
		strings.Contains(plan, "Imported sandbox") {
		t.Fatalf("once recorded, a change of secrets must replace the sandbox, without the import warning:\n%s", plan)
	}
}
