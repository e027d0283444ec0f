package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// TestAccModule_evalFleet runs the eval-fleet module's own tests
// (examples/modules/eval-fleet/tests/*.tftest.hcl) with `terraform test`
// against an in-process mock, using the provider built from this tree. The
// module is copied to a temporary directory first, so no state, lock or
// .terraform files land in the repository.
//
// Afterwards the mock's event log must show the protocol in every sandbox
// the tests created: every setup command ran with egress open, before the
// first egress policy write; and terraform test's clean-up left no sandbox
// running.
func TestAccModule_evalFleet(t *testing.T) {
	cli := requireCLI(t)
	provider := devProvider(t)
	t.Parallel()
	m := newTestMock(t, fastMockOptions())
	rc := provider()

	work := filepath.Join(t.TempDir(), "eval-fleet")
	copyDir(t, filepath.Join(repoRoot(t), "examples", "modules", "eval-fleet"), work)

	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	env := tfEnv(rc, "PRIME_API_BASE_URL="+m.URL, "PRIME_API_KEY="+fastMockOptions().APIKey)
	out, err := runTF(ctx, t, cli, work, env, "test", "-no-color")
	if err != nil {
		t.Fatalf("terraform test in examples/modules/eval-fleet failed: %v\n%s", err, out)
	}
	t.Logf("terraform test:\n%s", out)
	if !strings.Contains(out, "0 failed") {
		t.Fatalf("terraform test did not report success:\n%s", out)
	}

	stats := m.Stats()
	if stats.SandboxesCreated == 0 {
		t.Fatal("the module tests created no sandboxes; the apply runs did not reach the mock")
	}
	if stats.LiveSandboxes != 0 {
		t.Errorf("%d sandboxes are still live after terraform test cleaned up", stats.LiveSandboxes)
	}
	if err := checkSetupBeforePolicy(m.Events()); err != nil {
		t.Error(err)
	}
}

// checkSetupBeforePolicy checks, per sandbox, that every command ran before
// the sandbox's first egress policy write and while only the open
// generation 0 was in force, and that every sandbox with commands got a
// policy that was applied.
func checkSetupBeforePolicy(events []primemock.Event) error {
	type trace struct {
		lastCommand, firstPut, firstApplied int64
		restricted                          []string
	}
	traces := map[string]*trace{}
	get := func(id string) *trace {
		if traces[id] == nil {
			traces[id] = &trace{lastCommand: -1, firstPut: -1, firstApplied: -1}
		}
		return traces[id]
	}
	for _, e := range events {
		switch e.Type {
		case primemock.EventCommandExecuted:
			tr := get(e.SandboxID)
			tr.lastCommand = e.Seq
			if e.AppliedGeneration > 0 {
				tr.restricted = append(tr.restricted, e.Command)
			}
		case primemock.EventPolicyPut:
			if tr := get(e.SandboxID); tr.firstPut < 0 {
				tr.firstPut = e.Seq
			}
		case primemock.EventPolicyApplied:
			if tr := get(e.SandboxID); tr.firstApplied < 0 && e.Generation >= 1 {
				tr.firstApplied = e.Seq
			}
		}
	}
	var problems []string
	for id, tr := range traces {
		switch {
		case len(tr.restricted) > 0:
			problems = append(problems, fmt.Sprintf("sandbox %s: setup ran under an applied egress policy: %q", id, tr.restricted))
		case tr.firstPut >= 0 && tr.lastCommand > tr.firstPut:
			problems = append(problems, fmt.Sprintf("sandbox %s: a setup command (event %d) ran after the first policy write (event %d)", id, tr.lastCommand, tr.firstPut))
		case tr.firstPut >= 0 && tr.firstApplied < 0:
			problems = append(problems, fmt.Sprintf("sandbox %s: its egress policy was written but never applied", id))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("protocol violated:\n%s", strings.Join(problems, "\n"))
	}
	return nil
}

// evalFleetRootHCL uses the module the way its README does: an agent
// command per sandbox on ready_sandbox_ids.
const evalFleetRootHCL = `
terraform {
  required_providers {
    prime = {
      source = "primeintellect/prime"
    }
  }
}

provider "prime" {}

module "fleet" {
  source = "./modules/eval-fleet"

  sandbox_names  = ["one", "two"]
  image          = "python:3.12-slim"
  setup_commands = ["echo setup"]
  allow          = ["example.com"]
  routes         = ["https://intercept.example.net/v1"]
  policy_timeout = "2s"
}

resource "prime_sandbox_command" "agent" {
  for_each   = module.fleet.ready_sandbox_ids
  sandbox_id = each.value
  command    = "echo agent && probe example.com"
}
`

// TestAccModule_evalFleetFailsClosed applies the module, with an agent on
// ready_sandbox_ids, against a data plane that never enforces a policy: the
// apply must fail closed, and no agent command may ever run.
func TestAccModule_evalFleetFailsClosed(t *testing.T) {
	cli := requireCLI(t)
	provider := devProvider(t)
	t.Parallel()
	o := fastMockOptions()
	o.NeverApply = true
	m := newTestMock(t, o)
	rc := provider()

	work := t.TempDir()
	copyDir(t, filepath.Join(repoRoot(t), "examples", "modules", "eval-fleet"), filepath.Join(work, "modules", "eval-fleet"))
	if err := os.WriteFile(filepath.Join(work, "main.tf"), []byte(evalFleetRootHCL), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	env := tfEnv(rc, "PRIME_API_BASE_URL="+m.URL, "PRIME_API_KEY="+o.APIKey)
	// `get` installs the local module only; providers come from dev_overrides.
	if out, err := runTF(ctx, t, cli, work, env, "get", "-no-color"); err != nil {
		t.Fatalf("terraform get: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if out, err := runTF(ctx, t, cli, work, env, "destroy", "-auto-approve", "-input=false", "-no-color"); err != nil {
			t.Errorf("terraform destroy: %v\n%s", err, out)
		}
		if live := m.Stats().LiveSandboxes; live != 0 {
			t.Errorf("%d sandboxes are still live after destroy", live)
		}
	})

	out, err := runTF(ctx, t, cli, work, env, "apply", "-auto-approve", "-input=false", "-no-color")
	if err == nil {
		t.Fatalf("the apply succeeded although no policy was ever enforced:\n%s", out)
	}
	if !strings.Contains(out, "Egress policy not enforced") {
		t.Fatalf("the apply failed, but not by failing closed:\n%s", out)
	}
	setups := 0
	for _, e := range m.Events() {
		if e.Type != primemock.EventCommandExecuted {
			continue
		}
		if strings.Contains(e.Command, "agent") {
			t.Errorf("the agent ran in sandbox %s although its policy was never enforced", e.SandboxID)
		}
		setups++
	}
	if setups != 2 {
		t.Errorf("%d setup commands ran, want 2 (one per sandbox)", setups)
	}
	state, err := runTF(ctx, t, cli, work, env, "state", "list")
	if err != nil {
		t.Fatalf("terraform state list: %v\n%s", err, state)
	}
	for _, addr := range strings.Fields(state) {
		if strings.Contains(addr, "prime_egress_policy") || strings.Contains(addr, "agent") {
			t.Errorf("%s is in state after the policy failed closed", addr)
		}
	}
}
