package sandbox_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

const refreshProviders = `
terraform {
  required_providers {
    prime = {
      source = "primeintellect/prime"
    }
  }
}

provider "prime" {}
`

// refreshConfig holds one resource of every type the provider has, each
// on its own sandbox so that an out-of-band change is attributable.
var refreshConfig = `
resource "prime_sandbox" "box" {
  name         = "refresh"
  docker_image = "python:3.12-slim"
  egress {
    allow = ["pypi.org"]
  }
}
` + acctest.SandboxHCL("locked", "locked") + acctest.CommandHCL("setup", "prime_sandbox.locked.id", "echo set up", `require_open_egress = true`, `sensitive_output    = true`) + acctest.EgressPolicyHCL("lock", "prime_sandbox.locked.id", []string{"example.com"}, "after = [prime_sandbox_command.setup.id]") + acctest.SandboxFleetHCL("fleet", "refresh", 2) + `
resource "prime_fleet_command" "setup" {
  sandbox_ids = prime_sandbox_fleet.fleet.sandbox_ids
  commands    = ["echo one", "echo two"]
}

resource "prime_fleet_egress_policy" "lock" {
  sandbox_ids = prime_sandbox_fleet.fleet.sandbox_ids
  block       = ["example.org"]
  after       = [prime_fleet_command.setup.id]
}

data "prime_egress_policy" "lock" {
  sandbox_id = prime_egress_policy.lock.sandbox_id
}
`

// Drift detection CI can trust: `terraform plan -refresh-only
// -detailed-exitcode` exits 0 on an unchanged configuration of every
// resource type (Terraform < 1.15 exited 2 there while printing "No
// changes"; see NewProtocol6Server), and 2 once a sandbox or a policy was
// changed out of band.
//
// On the Terraform versions in dataResourceJSONBug the refresh-only plan
// exits 2 on any configuration with a data source, whatever the provider:
// the test checks that it still does (so the list stays true), then runs
// the plans on a compacted state file, on which the comparison is fair.
func TestAccRefreshOnlyDetailedExitCode(t *testing.T) {
	cli := acctest.RequireCLI(t)
	compactState := hasDataResourceJSONBug(t, cli)
	provider := acctest.DevProvider(t)
	t.Parallel()
	m := mocktest.New(t, mocktest.Fast())
	rc := provider()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	w := acctest.NewWork(t, cli, acctest.MockEnv(rc, m), map[string]string{"main.tf": refreshProviders + refreshConfig})
	if out, code := w.Exec(ctx, "apply", "-auto-approve", "-no-color"); code != 0 {
		t.Fatalf("apply exited %d:\n%s", code, out)
	}
	defer func() {
		if out, code := w.Exec(ctx, "destroy", "-auto-approve", "-no-color"); code != 0 {
			t.Errorf("destroy exited %d:\n%s", code, out)
		}
		if live := m.Stats().LiveSandboxes; live != 0 {
			t.Errorf("%d sandboxes live after destroy", live)
		}
	}()

	refreshPlan := func() (string, int) {
		t.Helper()
		if compactState {
			compactStateFile(t, w.Path("terraform.tfstate"))
		}
		return w.Exec(ctx, "plan", "-refresh-only", "-detailed-exitcode", "-no-color")
	}
	if compactState {
		if out, code := w.Exec(ctx, "plan", "-refresh-only", "-detailed-exitcode", "-no-color"); code != 2 {
			t.Fatalf("the CLI is listed in dataResourceJSONBug, yet its refresh-only plan of an unchanged state with a data source exited %d: take it off the list\n%s", code, out)
		}
	}

	// Several runs: the bug also had a random part (the order of
	// sensitive paths), which one run could miss.
	for range 3 {
		if out, code := refreshPlan(); code != 0 {
			t.Fatalf("plan -refresh-only -detailed-exitcode on an unchanged state exited %d, want 0:\n%s", code, out)
		}
	}

	// Out of band: a policy written from elsewhere, then a sandbox deleted.
	state, code := w.Exec(ctx, "state", "show", "-no-color", "prime_egress_policy.lock")
	if code != 0 {
		t.Fatalf("state show: %s", state)
	}
	c := m.Client(t)
	locked := stateAttr(t, state, "sandbox_id")
	if _, err := c.PutEgressPolicy(ctx, locked, prime.EgressPolicy{Allowlist: []string{"evil.example.net"}}); err != nil {
		t.Fatal(err)
	}
	if out, code := refreshPlan(); code != 2 {
		t.Fatalf("after an out-of-band policy change the refresh-only plan exited %d, want 2:\n%s", code, out)
	}
	if out, code := w.Exec(ctx, "apply", "-refresh-only", "-auto-approve", "-no-color"); code != 0 {
		t.Fatalf("apply -refresh-only exited %d:\n%s", code, out)
	}
	if out, code := refreshPlan(); code != 0 {
		t.Fatalf("after accepting the drift the refresh-only plan exited %d, want 0:\n%s", code, out)
	}
	box, code := w.Exec(ctx, "state", "show", "-no-color", "prime_sandbox.box")
	if code != 0 {
		t.Fatalf("state show: %s", box)
	}
	if err := c.DeleteSandbox(ctx, stateAttr(t, box, "id")); err != nil {
		t.Fatal(err)
	}
	if out, code := refreshPlan(); code != 2 {
		t.Fatalf("after an out-of-band delete the refresh-only plan exited %d, want 2:\n%s", code, out)
	}
}

// dataResourceJSONBug lists the Terraform versions whose refresh-only plan
// is "applyable" (plan -detailed-exitcode exits 2, "No changes" printed)
// whenever the state holds a data source. Terraform 1.15.0's
// State.ManagedResourcesEqual compares every resource in state, data
// resources included, by the bytes of their attribute JSON: a data
// resource's prior object keeps the indented JSON read from the state file,
// its fresh read is compact, so the two never match. Reproduced without
// this provider (a terraform_data resource and a terraform_remote_state
// data source), and gone once the same state file is compacted.
var dataResourceJSONBug = []string{"1.15.0"}

func hasDataResourceJSONBug(t *testing.T, cli string) bool {
	t.Helper()
	info, err := acctest.IdentifyCLI(cli)
	if err != nil {
		t.Fatal(err)
	}
	return info.IsTerraform() && slices.Contains(dataResourceJSONBug, info.Version().String())
}

// compactStateFile rewrites a state file without insignificant whitespace,
// as the CLI itself encodes a data source's fresh read.
func compactStateFile(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, data); err != nil {
		t.Fatalf("compacting %s: %v", path, err)
	}
	if err := os.WriteFile(path, compact.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// stateAttr reads `name = "value"` from terraform state show output.
func stateAttr(t *testing.T, show, name string) string {
	t.Helper()
	for _, line := range splitLines(show) {
		k, v, ok := cutAssign(line)
		if ok && k == name {
			return v
		}
	}
	t.Fatalf("%s not in:\n%s", name, show)
	return ""
}

func splitLines(s string) []string { return strings.Split(s, "\n") }

// cutAssign splits `  key = "value"` into key and the unquoted value.
func cutAssign(line string) (string, string, bool) {
	k, v, ok := strings.Cut(strings.TrimSpace(line), " = ")
	if !ok {
		return "", "", false
	}
	return strings.TrimSpace(k), strings.Trim(strings.TrimSpace(v), `"`), true
}
