package examples_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
)

// onceSizedHCL is onceRootHCL with var.n members.
var onceSizedHCL = strings.Replace(strings.Replace(onceRootHCL,
	`members        = ["a", "b"]`, `members        = [for i in range(var.n) : "m${i}"]`, 1),
	`variable "setup" {`, "variable \"n\" {\n  type = number\n}\n\nvariable \"setup\" {", 1)

// onceSetupChangePlanLines applies onceSizedHCL with n members and returns
// how many lines the plan of a changed setup has.
func onceSetupChangePlanLines(t *testing.T, n int) int {
	t.Helper()
	cli := acctest.RequireCLI(t)
	provider := acctest.DevProvider(t)
	m := mocktest.New(t, mocktest.Fast())
	w := acctest.NewWork(t, cli, acctest.MockEnv(provider(), m), map[string]string{"main.tf": onceSizedHCL})
	acctest.CopyDir(t, filepath.Join(acctest.RepoRoot(t), "examples", "modules", "eval-fleet"), w.Path("modules", "eval-fleet"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	w.Must(ctx, "get")
	nVar := fmt.Sprintf("-var=n=%d", n)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if out, err := w.Try(ctx, "destroy", "-auto-approve", "-input=false", nVar); err != nil {
			t.Errorf("terraform destroy: %v\n%s", err, out)
		}
	})
	w.Must(ctx, "apply", "-auto-approve", "-input=false", nVar)
	plan := w.Must(ctx, "plan", "-input=false", "-no-color", nVar, "-var=setup=mkdir -p /opt/setup && echo v2 > /opt/setup/marker")
	return strings.Count(plan, "\n")
}

// How the plan of a changed setup in once mode grows with the members: a
// guard against growing further, not yet the target. Measured here: 340
// lines for 6 members, 1,906 for 60, 29 a member (305 and 1,655, 25 a
// member, before the run provenance), on Terraform 1.11 and OpenTofu alike. What each member costs: the replaced
// agent's results printed as removed (about 20 lines: a replaced
// resource's old nested values are all shown), the fleet's sandboxes map
// (8) and sandbox_ids (1) unknown during the in-place restore. About one
// line a member needs per-member values that a plan need not show at all
// (a schema question, left open).
func TestAccModule_onceSetupChangePlanGrowth(t *testing.T) {
	t.Parallel()
	small, large := onceSetupChangePlanLines(t, 6), onceSetupChangePlanLines(t, 60)
	perMember := float64(large-small) / 54
	t.Logf("a changed setup plans in %d lines for 6 members, %d for 60: %.1f a member", small, large, perMember)
	if perMember > 30 {
		t.Errorf("a changed setup plans %d lines for 60 members and %d for 6: %.1f more a member, want at most 30 (29 measured)", large, small, perMember)
	}
}
