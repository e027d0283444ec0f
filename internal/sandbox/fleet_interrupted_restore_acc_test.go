package sandbox_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// restoredFleetHCL is a template, its checkpoint and a fleet of three
// restored from it.
const restoredFleetHCL = `
provider "prime" {}

resource "prime_sandbox" "template" {
  name         = "template"
  docker_image = "python:3.12-slim"
}

resource "prime_sandbox_checkpoint" "setup" {
  sandbox_id = prime_sandbox.template.id
}

resource "prime_sandbox_fleet" "members" {
  name_prefix   = "member"
  size          = 3
  checkpoint_id = prime_sandbox_checkpoint.setup.id
}
`

// Ctrl-C while a fleet's members are being restored: one error, on the
// fleet's address, says how many members are in state and ready, that
// Terraform taints the fleet, and how to keep them (untaint, with the
// address shown), with no per-member "interrupted" line and no claim that
// 0 healthy members could be kept. Following it (untaint, apply) keeps the
// three members (nothing created again) and the plan after it is empty.
func TestAccSandboxFleet_interruptedRestoreSaysWhatIsLeft(t *testing.T) {
	cli := acctest.RequireCLI(t)
	provider := acctest.DevProvider(t)
	t.Parallel()
	o := mocktest.Fast()
	o.RestoreDelay = 20 * time.Second // the Ctrl-C lands while the members restore
	m := mocktest.New(t, o)
	w := acctest.NewMockWork(t, m, provider(), cli, restoredFleetHCL)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	w.DestroyAtEnd(ctx, m)

	r := w.Launch("apply", "-auto-approve", "-no-color")
	restores := 0
	if _, err := m.WaitForEvent(ctx, func(e primemock.Event) bool {
		if e.Type == primemock.EventSandboxRestored {
			restores++
		}
		return restores == 3
	}); err != nil {
		t.Fatal(err)
	}
	acctest.InterruptTF(ctx, t, r)
	out := r.Output()
	for _, want := range []string{"Fleet create interrupted", "with prime_sandbox_fleet.members",
		"restored from the checkpoint: 3 of the 3 members are in state, 0 of them ready",
		"run `terraform untaint` with this fleet's address (shown above)"} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
			t.Errorf("the interrupted apply's output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "was interrupted (last status") || strings.Contains(out, "0 are healthy") {
		t.Errorf("the interruption is said once, not per member:\n%s", out)
	}

	created := m.Stats().SandboxesCreated
	w.Must(ctx, "untaint", "prime_sandbox_fleet.members")
	w.Must(ctx, "apply", "-auto-approve", "-no-color")
	if now := m.Stats().SandboxesCreated; now != created {
		t.Errorf("%d sandboxes created after the untaint, want none (the restored members kept)", now-created)
	}
	if plan, code := w.Exec(ctx, "plan", "-detailed-exitcode", "-no-color"); code != 0 {
		t.Errorf("the plan after the apply is not empty (exit %d):\n%s", code, plan)
	}
}

// A create the platform refuses is said once, in the provider's words, on
// the attribute to change: a VM image that does not exist (not the raw
// "POST /sandbox: HTTP 400"), and restore_memory from a checkpoint without
// memory (not the platform's sentence followed by the provider's). In a
// fleet, the members that share the cause share one line.
func TestAccSandbox_createRefusalsSaidOnce(t *testing.T) {
	cli := acctest.RequireCLI(t)
	provider := acctest.DevProvider(t)
	t.Parallel()
	o := mocktest.Fast()
	o.ImagesWithoutVM = []string{"legacy/eval:1"}
	m := mocktest.New(t, o)
	w := acctest.NewMockWork(t, m, provider(), cli, `
provider "prime" {}

resource "prime_sandbox" "template" {
  name         = "template"
  docker_image = "python:3.12-slim"
}

resource "prime_sandbox_checkpoint" "setup" {
  sandbox_id = prime_sandbox.template.id
}

resource "prime_sandbox" "memory" {
  name           = "memory"
  checkpoint_id  = prime_sandbox_checkpoint.setup.id
  restore_memory = true
}

resource "prime_sandbox_fleet" "memory" {
  name_prefix    = "memory"
  size           = 3
  checkpoint_id  = prime_sandbox_checkpoint.setup.id
  restore_memory = true
}

resource "prime_sandbox" "legacy" {
  name         = "legacy"
  docker_image = "legacy/eval:1"
}

resource "prime_sandbox_fleet" "legacy" {
  name_prefix  = "legacy"
  size         = 3
  docker_image = "legacy/eval:1"
}
`)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	w.DestroyAtEnd(ctx, m)
	out, err := w.Try(ctx, "apply", "-auto-approve", "-no-color")
	if err == nil {
		t.Fatalf("the apply succeeded:\n%s", out)
	}
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{
		"Error: Checkpoint has no memory to restore", "with prime_sandbox.memory", "restore_memory: checkpoint",
		`Members "0", "1", "2" (3): cannot create the sandbox: restore_memory: checkpoint`,
		"Error: VM image not found", "with prime_sandbox.legacy", `docker_image: the platform has no VM image of "legacy/eval:1"`,
		`Members "0", "1", "2" (3): cannot create the sandbox: docker_image: the platform has no VM image`,
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	for _, never := range []string{"has no memory to restore (only a pause checkpoint has)", "POST /sandbox: HTTP", "untaint"} {
		if strings.Contains(flat, never) {
			t.Errorf("the output says %q:\n%s", never, out)
		}
	}
	if n := strings.Count(flat, "holds files only, no memory"); n != 2 {
		t.Errorf("the missing memory is said %d times, want twice (the sandbox and the fleet):\n%s", n, out)
	}
}

// Ctrl-C while a fleet restores its members in place from a new checkpoint
// (an update): nothing is tainted, and the one error says so and what the
// next apply does; that apply converges (every member from the new
// checkpoint), and the plan after it is empty.
func TestAccSandboxFleet_interruptedInPlaceRestore(t *testing.T) {
	cli := acctest.RequireCLI(t)
	provider := acctest.DevProvider(t)
	t.Parallel()
	o := mocktest.Fast()
	o.RestoreDelay = 10 * time.Second
	m := mocktest.New(t, o)
	hcl := func(v string) string {
		return strings.Replace(restoredFleetHCL, "sandbox_id = prime_sandbox.template.id",
			"sandbox_id = prime_sandbox.template.id\n  triggers   = { setup = \""+v+"\" }", 1)
	}
	w := acctest.NewMockWork(t, m, provider(), cli, hcl("v1"))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	w.DestroyAtEnd(ctx, m)
	w.Must(ctx, "apply", "-auto-approve", "-no-color")

	w.Write(hcl("v2"))
	restoresBefore := 0
	for _, e := range m.Events() {
		if e.Type == primemock.EventSandboxRestored {
			restoresBefore++
		}
	}
	r := w.Launch("apply", "-auto-approve", "-no-color")
	seen := 0
	if _, err := m.WaitForEvent(ctx, func(e primemock.Event) bool {
		if e.Type == primemock.EventSandboxRestored {
			seen++
		}
		return seen == restoresBefore+3
	}); err != nil {
		t.Fatal(err)
	}
	acctest.InterruptTF(ctx, t, r)
	out := strings.Join(strings.Fields(r.Output()), " ")
	for _, want := range []string{"Fleet update interrupted", "with prime_sandbox_fleet.members", "Nothing is tainted"} {
		if !strings.Contains(out, want) {
			t.Errorf("the interrupted apply's output lacks %q:\n%s", want, r.Output())
		}
	}
	if strings.Contains(out, "untaint") {
		t.Errorf("untaint advice although nothing is tainted:\n%s", r.Output())
	}
	w.Must(ctx, "apply", "-auto-approve", "-no-color")
	if plan, code := w.Exec(ctx, "plan", "-detailed-exitcode", "-no-color"); code != 0 {
		t.Errorf("the plan after the apply is not empty (exit %d):\n%s", code, plan)
	}
}
