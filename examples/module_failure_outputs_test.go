package examples_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
)

// evalFleetRecordHCL is evalFleetRootHCL's fleet with on_member_failure =
// "record", whose member two's agent exits with var.fail_two after writing
// its results; the root re-exports the outputs that say what is current.
const evalFleetRecordHCL = `
terraform {
  required_providers {
    prime = { source = "primeintellect/prime" }
  }
}

provider "prime" {}

variable "fail_two" {
  type    = string
  default = "0"
}

module "fleet" {
  source = "./modules/eval-fleet"

  name_prefix       = "record"
  members           = ["one", "two"]
  image             = "python:3.12-slim"
  setup_commands    = ["echo setup"]
  allow             = ["example.com"]
  on_member_failure = "record"
  agent = {
    commands   = ["echo agent && mkdir -p /results && echo '{\"reward\": 1}' > /results/reward.json && exit $FAIL"]
    member_env = { one = { FAIL = "0" }, two = { FAIL = var.fail_two } }
  }
  results_path      = "/results"
  results_local_dir = "${abspath(path.root)}/results"
  reward_file       = "/results/reward.json"
}

output "rewards" {
  value = module.fleet.rewards
}

output "runs" {
  value = module.fleet.runs
}

output "failures" {
  value = module.fleet.failures
}

output "results_local_paths" {
  value = module.fleet.results_local_paths
}
`

// With on_member_failure = "record" a member whose agent fails does not
// fail the apply, so every output is evaluated and current: its reward is
// gone (the earlier run's is not shown as its), failures names it, its
// run's record says it failed (in runs and in its run.json), its failed
// run's results are downloaded in place of the earlier ones; the other
// member's run stays. The next apply runs it again, alone.
func TestAccModule_evalFleetRecordedFailureKeepsOutputsCurrent(t *testing.T) {
	_, w, ctx := evalFleetRootWorkOf(t, mocktest.Fast(), evalFleetRecordHCL)
	w.Must(ctx, "apply", "-auto-approve", "-input=false")
	if got := w.OutputJSON(ctx, "rewards"); got != `{"one":1,"two":1}` {
		t.Fatalf("rewards %s after the first apply, want both", got)
	}
	type run struct {
		RunID     string `json:"run_id"`
		SandboxID string `json:"sandbox_id"`
		Failed    bool   `json:"failed"`
		Error     string `json:"error"`
	}
	runsOf := func() map[string]run {
		var runs map[string]run
		if err := json.Unmarshal([]byte(w.OutputJSON(ctx, "runs")), &runs); err != nil {
			t.Fatal(err)
		}
		return runs
	}
	first := runsOf()

	out := w.Must(ctx, "apply", "-auto-approve", "-input=false", "-var=fail_two=3")
	if !strings.Contains(out, "Warning: Fleet command failed on 1 member") {
		t.Errorf("the failure must be a warning naming it:\n%s", out)
	}
	if got := w.OutputJSON(ctx, "rewards"); got != `{"one":1}` {
		t.Errorf("rewards %s after two's agent failed, want one's alone (never two's earlier reward)", got)
	}
	runs := runsOf()
	if runs["one"].RunID != first["one"].RunID || runs["two"].RunID == first["two"].RunID || !runs["two"].Failed ||
		!strings.Contains(runs["two"].Error, "exited with a disallowed code") {
		t.Errorf("runs %+v (before: %+v): want one's run kept, two's new and failed", runs, first)
	}
	var failures map[string]struct {
		Phase, SandboxID, Error string
	}
	if err := json.Unmarshal([]byte(w.OutputJSON(ctx, "failures")), &failures); err != nil {
		t.Fatal(err)
	}
	if len(failures) != 1 || failures["two"].Phase != "agent" || !strings.Contains(failures["two"].Error, "exited with a disallowed code") {
		t.Errorf("failures %+v, want two's agent", failures)
	}
	var record run
	data, err := os.ReadFile(w.Path("results", "two", "run.json"))
	if err != nil || json.Unmarshal(data, &record) != nil || record.RunID != runs["two"].RunID || !record.Failed {
		t.Errorf("two's run.json %s (%v): want its failed run's record", data, err)
	}
	if paths := outputMap(ctx, t, w, "results_local_paths"); paths["two"] != w.Path("results", "two", "results") {
		t.Errorf("results_local_paths %v: want two's failed run's results downloaded", paths)
	}

	w.Must(ctx, "apply", "-auto-approve", "-input=false")
	if got := w.OutputJSON(ctx, "rewards"); got != `{"one":1,"two":1}` {
		t.Errorf("rewards %s after two's agent ran again, want both", got)
	}
	if again := runsOf(); again["one"].RunID != first["one"].RunID || again["two"].RunID == runs["two"].RunID || again["two"].Failed {
		t.Errorf("runs %+v: want two alone run again, and succeed", again)
	}
	if got := w.OutputJSON(ctx, "failures"); got != `{}` {
		t.Errorf("failures %s, want none", got)
	}
}
