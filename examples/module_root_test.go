package examples_test

// The eval-fleet module used from a root module, driven by the CLI: fail closed, a failed member, twenty members, a member deleted out of band.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// evalFleetRootHCL uses the module the way its README does, with the agent
// in the module. policy_timeout is short for the fail-closed test.
const evalFleetRootHCL = `
terraform {
  required_providers {
    prime = {
      source  = "primeintellect/prime"
      version = ">= 0.1.0"
    }
  }
}

provider "prime" {}

variable "members" {
  type    = set(string)
  default = ["one", "two"]
}

module "fleet" {
  source = "./modules/eval-fleet"

  name_prefix    = "root"
  members        = var.members
  image          = "python:3.12-slim"
  setup_commands = ["echo setup && probe pypi.org"]
  allow          = ["example.com"]
  routes         = ["https://intercept.example.net/v1"]
  policy_timeout = "2s"
  task_dir       = "${path.module}/task"
  member_tasks   = { for k in var.members : k => { content = "task ${k}" } }
  agent = {
    commands = [
      "echo agent && mkdir -p /results && cat /task/member > /results/task.txt && echo '{\"reward\": 1}' > /results/reward.json && probe example.com",
      "echo agent pypi && probe pypi.org",
    ]
    allowed_exit_codes = [0, 7]
  }
  results_path      = "/results"
  results_local_dir = "${abspath(path.root)}/results"
  reward_file       = "/results/reward.json"
}

output "sandbox_ids" {
  value = module.fleet.sandbox_ids
}

output "ready_sandbox_ids" {
  value = module.fleet.ready_sandbox_ids
}

output "agent_exit_codes" {
  value = module.fleet.agent_exit_codes
}

output "rewards" {
  value = module.fleet.rewards
}

output "results_local_paths" {
  value = module.fleet.results_local_paths
}
`

// evalFleetRootWork lays out a root module using eval-fleet in a temporary
// directory, installs the module (`terraform get`: the provider comes from
// dev_overrides) and destroys everything at the end, checking that no
// sandbox is left running.
//
// It also starts the test's mock with o and runs the test in parallel; ctx
// bounds the test's own terraform runs.
func evalFleetRootWork(t *testing.T, o primemock.Options) (m *mocktest.Mock, w *acctest.Work, ctx context.Context) {
	t.Helper()
	cli := acctest.RequireCLI(t)
	provider := acctest.DevProvider(t)
	t.Parallel()
	m = mocktest.New(t, o)
	w = acctest.NewWork(t, cli, acctest.MockEnv(provider(), m), map[string]string{"main.tf": evalFleetRootHCL})
	// 0644, as a task checked out of git would be: its mode is uploaded.
	if err := os.MkdirAll(w.Path("task"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(w.Path("task", "prompt.txt"), []byte("the shared task\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	acctest.CopyDir(t, filepath.Join(acctest.RepoRoot(t), "examples", "modules", "eval-fleet"), w.Path("modules", "eval-fleet"))
	getCtx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	w.Must(getCtx, "get")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if out, err := w.Try(ctx, "destroy", "-auto-approve", "-input=false"); err != nil {
			t.Errorf("terraform destroy: %v\n%s", err, out)
		}
		if live := m.Stats().LiveSandboxes; live != 0 {
			t.Errorf("%d sandboxes are still live after destroy", live)
		}
	})
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	return m, w, ctx
}

// outputMap reads a map(string) output of the root module.
func outputMap(ctx context.Context, t *testing.T, w *acctest.Work, name string) map[string]string {
	t.Helper()
	out, err := w.Try(ctx, "output", "-json", name)
	if err != nil {
		t.Fatalf("terraform output %s: %v\n%s", name, err, out)
	}
	var v map[string]string
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("terraform output %s: %v\n%s", name, err, out)
	}
	return v
}

// fleetStateIDs reads module.fleet.prime_sandbox_fleet.this's sandbox_ids
// from the state.
func fleetStateIDs(ctx context.Context, t *testing.T, w *acctest.Work) map[string]string {
	t.Helper()
	out, err := w.Try(ctx, "show", "-json")
	if err != nil {
		t.Fatalf("terraform show: %v\n%s", err, out)
	}
	var state struct {
		Values struct {
			RootModule struct {
				ChildModules []struct {
					Resources []struct {
						Address string `json:"address"`
						Values  struct {
							SandboxIDs map[string]string `json:"sandbox_ids"`
						} `json:"values"`
					} `json:"resources"`
				} `json:"child_modules"`
			} `json:"root_module"`
		} `json:"values"`
	}
	if err := json.Unmarshal([]byte(out), &state); err != nil {
		t.Fatalf("state JSON: %v\n%s", err, out)
	}
	for _, mod := range state.Values.RootModule.ChildModules {
		for _, r := range mod.Resources {
			if r.Address == "module.fleet.prime_sandbox_fleet.this" {
				return r.Values.SandboxIDs
			}
		}
	}
	t.Fatalf("no module.fleet.prime_sandbox_fleet.this in state:\n%s", out)
	return nil
}

// stateAddrs lists the resource addresses in state.
func stateAddrs(ctx context.Context, t *testing.T, w *acctest.Work) []string {
	t.Helper()
	out, err := w.Try(ctx, "state", "list")
	if err != nil {
		t.Fatalf("terraform state list: %v\n%s", err, out)
	}
	return strings.Fields(out)
}

// TestAccModule_evalFleetFailsClosed applies the module, with its agent,
// against a data plane that never enforces a policy: the apply must fail
// closed, and no agent step may ever run.
func TestAccModule_evalFleetFailsClosed(t *testing.T) {
	o := mocktest.Fast()
	o.NeverApply = true
	m, w, ctx := evalFleetRootWork(t, o)

	out, err := w.Try(ctx, "apply", "-auto-approve", "-input=false")
	if err == nil {
		t.Fatalf("the apply succeeded although no policy was ever enforced:\n%s", out)
	}
	if !strings.Contains(out, "Egress policy not enforced") {
		t.Fatalf("the apply failed, but not by failing closed:\n%s", out)
	}
	setups := 0
	for _, e := range m.Events() {
		if e.Type != primemock.EventCommandExecuted || !isStep(e) {
			continue
		}
		if isAgentCommand(e.Command) {
			t.Errorf("the agent ran in sandbox %s although its policy was never enforced", e.SandboxID)
		}
		setups++
	}
	if setups != 2 {
		t.Errorf("%d setup steps ran, want 2 (one per member)", setups)
	}
	for _, addr := range stateAddrs(ctx, t, w) {
		if strings.Contains(addr, "prime_fleet_egress_policy") || strings.Contains(addr, "agent") {
			t.Errorf("%s is in state after the policy failed closed", addr)
		}
	}
}

// TestAccModule_evalFleetMemberFails: a member that fails while booting
// (its key contains the mock's prime-mock-oom) fails the apply at the
// fleet, naming it; nothing runs on the healthy member, which stays in
// state. After `terraform untaint` (what the error says to do), an apply
// with the failed key replaced keeps the healthy member and runs the whole
// protocol on both.
func TestAccModule_evalFleetMemberFails(t *testing.T) {
	m, w, ctx := evalFleetRootWork(t, mocktest.Fast())

	out, err := w.Try(ctx, "apply", "-auto-approve", "-input=false", `-var=members=["ok","prime-mock-oom"]`)
	if err == nil {
		t.Fatalf("the apply succeeded although a member failed:\n%s", out)
	}
	for _, want := range []string{"Fleet members failed", `Member "prime-mock-oom"`, "OOM_KILLED", "module.fleet.prime_sandbox_fleet.this"} {
		if !strings.Contains(out, want) {
			t.Fatalf("the apply failed, but its error does not say %q:\n%s", want, out)
		}
	}
	for _, e := range m.Events() {
		if e.Type == primemock.EventCommandStarted && e.Command != acctest.GatewayProbe {
			t.Errorf("%q ran in sandbox %s although the fleet failed", e.Command, e.SandboxID)
		}
	}
	addrs := stateAddrs(ctx, t, w)
	if !slices.Equal(addrs, []string{"module.fleet.prime_sandbox_fleet.this"}) {
		t.Fatalf("state after the failed apply: %v; want only the fleet", addrs)
	}
	if st := m.Stats(); st.LiveSandboxes != 1 || st.SandboxesCreated != 2 {
		t.Fatalf("live %d of %d created; want the healthy member live and the failed one deleted", st.LiveSandboxes, st.SandboxesCreated)
	}
	// A failed apply records no outputs: read the fleet's own state.
	first := fleetStateIDs(ctx, t, w)
	if len(first) != 1 || first["ok"] == "" {
		t.Fatalf("the fleet's sandbox_ids after the failed apply: %v; want the healthy member alone", first)
	}

	if out, err := w.Try(ctx, "untaint", "module.fleet.prime_sandbox_fleet.this"); err != nil {
		t.Fatalf("terraform untaint: %v\n%s", err, out)
	}
	if out, err := w.Try(ctx, "apply", "-auto-approve", "-input=false", `-var=members=["ok","b"]`); err != nil {
		t.Fatalf("the apply after the failure: %v\n%s", err, out)
	}
	ids := outputMap(ctx, t, w, "ready_sandbox_ids")
	if len(ids) != 2 || ids["ok"] != first["ok"] || ids["b"] == "" {
		t.Fatalf("ready_sandbox_ids %v; want the healthy member %s kept and b new", ids, first["ok"])
	}
	if st := m.Stats(); st.SandboxesCreated != 3 {
		t.Errorf("%d sandboxes created; want 3 (the failed one, the healthy one kept, b)", st.SandboxesCreated)
	}
	if err := checkFleetProtocol(fleetTraces(m.Events()), true); err != nil {
		t.Error(err)
	}
}

// TestAccModule_evalFleet20 is #13's protocol check at fleet scale: 20
// members through the eval-fleet module with setup, policy and agent.
// Every setup step must run with egress open and every agent step under its
// member's enforced lock (the mock's events, checkFleetProtocol); the
// second plan must be empty, and the destroy (evalFleetRootWork's clean-up)
// must leave nothing running.
func TestAccModule_evalFleet20(t *testing.T) {
	m, w, ctx := evalFleetRootWork(t, mocktest.Fast())

	keys := make([]string, 20)
	for i := range keys {
		keys[i] = fmt.Sprintf("%q", fmt.Sprintf("m%02d", i))
	}
	members := "-var=members=[" + strings.Join(keys, ",") + "]"
	if out, err := w.Try(ctx, "apply", "-auto-approve", "-input=false", members); err != nil {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	if ids := outputMap(ctx, t, w, "ready_sandbox_ids"); len(ids) != 20 {
		t.Fatalf("%d ready members, want 20: %v", len(ids), ids)
	}
	traces := fleetTraces(m.Events())
	if len(traces) != 20 {
		t.Fatalf("events of %d sandboxes, want 20", len(traces))
	}
	if err := checkFleetProtocol(traces, true); err != nil {
		t.Fatal(err)
	}
	// Every member's reward back, and its results (its own task) on disk.
	var rewards map[string]*float64
	if err := json.Unmarshal([]byte(outputJSON(ctx, t, w, "rewards")), &rewards); err != nil || len(rewards) != 20 {
		t.Fatalf("rewards %v (%v); want 20", rewards, err)
	}
	paths := outputMap(ctx, t, w, "results_local_paths")
	for k, r := range rewards {
		if r == nil || *r != 1 {
			t.Errorf("reward of %s: %v, want 1", k, r)
		}
		got, err := os.ReadFile(filepath.Join(paths[k], "task.txt"))
		if err != nil || string(got) != "task "+k {
			t.Errorf("results of %s on disk: %q (%v), want its own task", k, got, err)
		}
	}
	if out, err := w.Try(ctx, "plan", "-detailed-exitcode", "-input=false", members); err != nil {
		t.Fatalf("the second plan is not empty (%v):\n%s", err, out)
	}
}

// TestAccModule_evalFleetMemberDeletedOutOfBand deletes one member's
// sandbox behind Terraform's back. The plan must update the fleet, the
// setup, the policy and the agent in place (no replacement); the apply
// creates the member again and runs setup (open), lock and agent on it
// alone, leaving the other member untouched. Removing the key afterwards
// deletes just that member.
func TestAccModule_evalFleetMemberDeletedOutOfBand(t *testing.T) {
	m, w, ctx := evalFleetRootWork(t, mocktest.Fast())

	if out, err := w.Try(ctx, "apply", "-auto-approve", "-input=false"); err != nil {
		t.Fatalf("first apply: %v\n%s", err, out)
	}
	before := outputMap(ctx, t, w, "sandbox_ids")
	if len(before) != 2 {
		t.Fatalf("sandbox_ids %v; want two members", before)
	}
	if err := m.Client(t).DeleteSandbox(ctx, before["two"]); err != nil {
		t.Fatalf("deleting member two out of band: %v", err)
	}
	mark := int64(len(m.Events()))

	if out, err := w.Try(ctx, "plan", "-input=false", "-out=tfplan"); err != nil {
		t.Fatalf("plan after the deletion: %v\n%s", err, out)
	}
	show, err := w.Try(ctx, "show", "-json", "tfplan")
	if err != nil {
		t.Fatalf("terraform show: %v\n%s", err, show)
	}
	var plan struct {
		ResourceChanges []struct {
			Address string `json:"address"`
			Change  struct {
				Actions []string `json:"actions"`
			} `json:"change"`
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal([]byte(show), &plan); err != nil {
		t.Fatalf("plan JSON: %v\n%s", err, show)
	}
	actions := map[string]string{}
	for _, rc := range plan.ResourceChanges {
		actions[rc.Address] = strings.Join(rc.Change.Actions, ",")
	}
	for _, addr := range []string{
		"module.fleet.prime_sandbox_fleet.this", "module.fleet.prime_fleet_command.setup[0]",
		"module.fleet.prime_fleet_egress_policy.this[0]", "module.fleet.prime_fleet_command.agent[0]",
		"module.fleet.prime_fleet_file.task[0]", "module.fleet.prime_fleet_file.member_task[0]", "module.fleet.prime_fleet_artifact.results[0]",
	} {
		if actions[addr] != "update" {
			t.Errorf("plan after the deletion: %s %q, want update (in place); all: %v", addr, actions[addr], actions)
		}
	}
	if out, err := w.Try(ctx, "apply", "-auto-approve", "-input=false", "tfplan"); err != nil {
		t.Fatalf("apply after the deletion: %v\n%s", err, out)
	}
	after := outputMap(ctx, t, w, "ready_sandbox_ids")
	if after["one"] != before["one"] || after["two"] == "" || after["two"] == before["two"] {
		t.Fatalf("ready_sandbox_ids %v after the re-create (before: %v); want one kept and two new", after, before)
	}

	// Since the deletion: nothing on member one; the whole protocol on the
	// new member two.
	var since []primemock.Event
	for _, e := range m.Events() {
		if e.Seq > mark {
			since = append(since, e)
		}
	}
	for _, e := range since {
		// Reads of its reward are refreshes; an upload, a command or a
		// download of its results would be work done again.
		touched := e.Type == primemock.EventPolicyPut || e.Type == primemock.EventCommandStarted || e.Type == primemock.EventFileUploaded ||
			e.Type == primemock.EventFileDownloaded && e.Path != "/results/reward.json"
		if e.SandboxID == before["one"] && touched {
			t.Errorf("member one was touched after member two was deleted: %s %q %s (generation %d)", e.Type, e.Command, e.Path, e.Generation)
		}
	}
	var newTwo *sandboxTrace
	for _, tr := range fleetTraces(since) {
		if tr.id == after["two"] {
			newTwo = tr
		}
	}
	if newTwo == nil {
		t.Fatalf("no events for the new member two (%s)", after["two"])
	}
	if err := checkFleetProtocol([]*sandboxTrace{newTwo}, true); err != nil {
		t.Error(err)
	}
	if setups, agents := newTwo.count(); setups != 1 || agents != 2 {
		t.Errorf("on the new member two %d setup and %d agent steps ran, want 1 and 2", setups, agents)
	}
	if codes := outputJSON(ctx, t, w, "agent_exit_codes"); codes != `{"one":[0,7],"two":[0,7]}` {
		t.Errorf("agent_exit_codes %s; want example.com reachable and pypi.org not, on both members", codes)
	}

	// Removing the key deletes just that member.
	if out, err := w.Try(ctx, "apply", "-auto-approve", "-input=false", `-var=members=["one"]`); err != nil {
		t.Fatalf("apply without member two: %v\n%s", err, out)
	}
	if ids := outputMap(ctx, t, w, "ready_sandbox_ids"); len(ids) != 1 || ids["one"] != before["one"] {
		t.Errorf("ready_sandbox_ids %v after removing two; want one alone, kept", ids)
	}
	if live := m.Stats().LiveSandboxes; live != 1 {
		t.Errorf("%d sandboxes live after removing member two, want 1", live)
	}
}

// outputJSON is an output of the root module as compact JSON.
func outputJSON(ctx context.Context, t *testing.T, w *acctest.Work, name string) string {
	t.Helper()
	out, err := w.Try(ctx, "output", "-json", name)
	if err != nil {
		t.Fatalf("terraform output %s: %v\n%s", name, err, out)
	}
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("terraform output %s: %v\n%s", name, err, out)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
