package examples_test

// The eval-fleet module in setup_mode = "once", used from a root module and
// driven by the CLI through what terraform test cannot express: a new setup
// that fails, a checkpoint deleted out of band, a member ended out of band.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// onceRootHCL uses the module in once mode, the setup a variable.
const onceRootHCL = `
terraform {
  required_providers {
    prime = { source = "primeintellect/prime" }
  }
}

provider "prime" {}

variable "setup" {
  type    = string
  default = "mkdir -p /opt/setup && echo v1 > /opt/setup/marker"
}

module "fleet" {
  source = "./modules/eval-fleet"

  name_prefix    = "once"
  members        = ["a", "b"]
  image          = "python:3.12-slim"
  setup_mode     = "once"
  setup_commands = [var.setup]
  allow          = ["example.com"]
  agent = {
    commands = ["echo agent && cat /opt/setup/marker && mkdir -p /results && echo '{\"reward\": 1}' > /results/reward.json"]
  }
  reward_file = "/results/reward.json"
}

output "sandbox_ids" {
  value = module.fleet.sandbox_ids
}

output "checkpoint_id" {
  value = module.fleet.checkpoint_id
}

output "template_sandbox_id" {
  value = module.fleet.template_sandbox_id
}
`

// onceRootWork lays out onceRootHCL beside a copy of the module, installs
// it, and destroys everything at the end, checking that neither a sandbox
// nor a checkpoint is left.
func onceRootWork(t *testing.T) (m *mocktest.Mock, w *acctest.Work, ctx context.Context) {
	t.Helper()
	cli := acctest.RequireCLI(t)
	provider := acctest.DevProvider(t)
	t.Parallel()
	m = mocktest.New(t, mocktest.Fast())
	w = acctest.NewWork(t, cli, acctest.MockEnv(provider(), m), map[string]string{"main.tf": onceRootHCL})
	acctest.CopyDir(t, filepath.Join(acctest.RepoRoot(t), "examples", "modules", "eval-fleet"), w.Path("modules", "eval-fleet"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	w.Must(ctx, "get")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if out, err := w.Try(ctx, "destroy", "-auto-approve", "-input=false"); err != nil {
			t.Errorf("terraform destroy: %v\n%s", err, out)
		}
		if err := m.CheckNoCheckpoints(nil); err != nil {
			t.Error(err)
		}
	})
	return m, w, ctx
}

// outputJSONOf reads one root output as JSON into v.
func outputJSONOf(ctx context.Context, t *testing.T, w *acctest.Work, name string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(w.Must(ctx, "output", "-json", name)), v); err != nil {
		t.Fatalf("output %s: %v", name, err)
	}
}

// onceConverged checks what every apply of onceRootHCL must leave: the
// template deleted (not billed after its checkpoint), both members running,
// restored from the checkpoint in the outputs, and an empty plan.
func onceConverged(ctx context.Context, t *testing.T, m *mocktest.Mock, w *acctest.Work) (ids map[string]string, checkpoint string) {
	t.Helper()
	outputJSONOf(ctx, t, w, "sandbox_ids", &ids)
	outputJSONOf(ctx, t, w, "checkpoint_id", &checkpoint)
	var template string
	outputJSONOf(ctx, t, w, "template_sandbox_id", &template)
	if st := m.Status(t, template); !prime.IsTerminalStatus(st) {
		t.Errorf("the template %s is %s after its checkpoint, want it deleted", template, st)
	}
	for k, id := range ids {
		if st := m.Status(t, id); st != prime.StatusRunning {
			t.Errorf("member %s (%s) is %s, want RUNNING", k, id, st)
		}
	}
	if len(ids) != 2 {
		t.Errorf("sandbox_ids %v, want a and b", ids)
	}
	if plan, code := w.Exec(ctx, "plan", "-detailed-exitcode", "-input=false"); code != 0 {
		t.Errorf("the plan after the apply is not empty (exit %d):\n%s", code, plan)
	}
	return ids, checkpoint
}

// TestAccModule_onceFailedSetupKeepsMembers: in once mode, a new setup that
// fails stops the apply before any member is touched, and the error says
// so; the members (same sandboxes, running), their checkpoint and rewards
// are the previous setup's. The fixed setup then restores them anew, and
// no member was deleted before the new checkpoint was DURABLE. (The fleet
// used to be destroyed first: a failing setup left it with no members.)
func TestAccModule_onceFailedSetupKeepsMembers(t *testing.T) {
	m, w, ctx := onceRootWork(t)
	w.Must(ctx, "apply", "-auto-approve", "-input=false")
	before, ck := onceConverged(ctx, t, m, w)

	out, err := w.Try(ctx, "apply", "-auto-approve", "-input=false", "-var=setup=echo broken && exit 3")
	if err == nil {
		t.Fatalf("the apply with a failing setup succeeded:\n%s", out)
	}
	for _, want := range []string{"The setup failed in the new template", "no member was touched", "module.fleet.prime_sandbox_checkpoint.template[0]"} {
		if !strings.Contains(out, want) {
			t.Errorf("the failed apply does not say %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "Error: ") != 1 {
		t.Errorf("one error for one cause:\n%s", out)
	}
	if ids := fleetStateIDs(ctx, t, w); !maps.Equal(ids, before) {
		t.Errorf("the members after the failed setup: %v, want them untouched: %v", ids, before)
	}
	for k, id := range before {
		if st := m.Status(t, id); st != prime.StatusRunning {
			t.Errorf("member %s (%s) is %s after the failed setup, want RUNNING", k, id, st)
		}
	}
	if _, err := m.Client(t).GetCheckpoint(ctx, ck); err != nil {
		t.Errorf("the members' checkpoint %s is gone after the failed setup: %v", ck, err)
	}

	w.Must(ctx, "apply", "-auto-approve", "-input=false", "-var=setup=mkdir -p /opt/setup && echo v3 > /opt/setup/marker")
	var after map[string]string
	outputJSONOf(ctx, t, w, "sandbox_ids", &after)
	var newCk string
	outputJSONOf(ctx, t, w, "checkpoint_id", &newCk)
	for k, id := range after {
		if id == before[k] {
			t.Errorf("member %s was not restored from the fixed setup's checkpoint", k)
		}
	}
	if err := acctest.MembersDeletedAfterDurable(m.Events(), before, newCk); err != nil {
		t.Error(err)
	}
	if plan, code := w.Exec(ctx, "plan", "-detailed-exitcode", "-input=false", "-var=setup=mkdir -p /opt/setup && echo v3 > /opt/setup/marker"); code != 0 {
		t.Errorf("the plan after the fixed setup is not empty (exit %d):\n%s", code, plan)
	}
}

// TestAccModule_onceCheckpointDeletedOutOfBand: the template's checkpoint
// deleted through the API is no dead end: the next apply makes a new
// template, runs the setup there, checkpoints and deletes it, and restores
// the members from the new checkpoint; the plan after it is empty and
// destroy leaves nothing. (With the template paused, it destroyed every
// member and then failed on every apply with a 409.)
func TestAccModule_onceCheckpointDeletedOutOfBand(t *testing.T) {
	m, w, ctx := onceRootWork(t)
	w.Must(ctx, "apply", "-auto-approve", "-input=false")
	before, ck := onceConverged(ctx, t, m, w)
	if err := m.Client(t).DeleteCheckpoint(ctx, ck); err != nil {
		t.Fatal(err)
	}
	w.Must(ctx, "apply", "-auto-approve", "-input=false")
	after, newCk := onceConverged(ctx, t, m, w)
	if newCk == ck {
		t.Errorf("the checkpoint %s was not taken again", ck)
	}
	for k, id := range after {
		if id == before[k] {
			t.Errorf("member %s was not restored from the new checkpoint", k)
		}
	}
	setups := 0
	for _, e := range m.Events() {
		if e.Type == primemock.EventCommandStarted && strings.Contains(e.Command, "/opt/setup/marker") && !isAgentCommand(e.Command) {
			setups++
		}
	}
	if setups != 2 {
		t.Errorf("the setup ran %d times, want 2 (once per template)", setups)
	}
}

// TestAccModule_onceMemberEndedOutOfBand: a member that ends out of band
// (its lifetime) is restored again by the next apply, from the same
// checkpoint, with no new setup; the other member is untouched.
func TestAccModule_onceMemberEndedOutOfBand(t *testing.T) {
	m, w, ctx := onceRootWork(t)
	w.Must(ctx, "apply", "-auto-approve", "-input=false")
	before, ck := onceConverged(ctx, t, m, w)
	m.End(t, before["b"], "timeout")
	w.Must(ctx, "apply", "-auto-approve", "-input=false")
	after, sameCk := onceConverged(ctx, t, m, w)
	if sameCk != ck || after["a"] != before["a"] || after["b"] == before["b"] {
		t.Errorf("after the apply: members %v from %s, want a kept, b restored again from %s (was %v)", after, sameCk, ck, before)
	}
}

// checkOnceOrder follows setup once in the mock's log: every template is
// deleted, never before its checkpoint is DURABLE, and before any member is
// restored from that checkpoint (the checkpoint's create waits for the
// delete), so it is billed no longer than its checkpoint takes.
func checkOnceOrder(events []primemock.Event, templates map[string]bool) error {
	var problems []string
	durable := map[string]bool{}      // checkpoints DURABLE so far
	templateOf := map[string]string{} // checkpoint -> its template
	deleted := map[string]bool{}      // sandboxes deleted so far
	for _, e := range events {
		switch {
		case e.Type == primemock.EventCheckpointCreated && templates[e.SandboxID] && !e.Memory:
			templateOf[e.CheckpointID] = e.SandboxID
		case e.Type == primemock.EventCheckpointState && e.State == prime.CheckpointDurable:
			durable[e.CheckpointID] = true
		case e.Type == primemock.EventSandboxRestored:
			if tpl := templateOf[e.CheckpointID]; tpl != "" && !deleted[tpl] {
				problems = append(problems, fmt.Sprintf("member %s was restored from %s while its template %s still ran", e.SandboxID, e.CheckpointID, tpl))
			}
		case e.Type == primemock.EventSandboxDeleted && templates[e.SandboxID]:
			deleted[e.SandboxID] = true
			for ck, tpl := range templateOf {
				if tpl == e.SandboxID && !durable[ck] {
					problems = append(problems, fmt.Sprintf("template %s was deleted before its checkpoint %s was DURABLE", tpl, ck))
				}
			}
		}
	}
	for tpl := range templates {
		if !deleted[tpl] {
			problems = append(problems, fmt.Sprintf("template %s was never deleted", tpl))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("setup once order:\n  %s", strings.Join(problems, "\n  "))
	}
	return nil
}
