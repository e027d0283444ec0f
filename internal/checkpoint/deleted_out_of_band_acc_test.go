package checkpoint_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// cliRoot starts a root module the CLI runs against the mock (its
// address and key come from the environment).
const cliRoot = acctest.CLIProviders + `
provider "prime" {}
`

// pausedTemplateHCL is a template, its checkpoint with source_after =
// "pause", and a sandbox restored from it.
func pausedTemplateHCL() string {
	return checkpointHCL("template", `source_after = "pause"`) + `
resource "prime_sandbox" "restored" {
  name          = "restored"
  checkpoint_id = prime_sandbox_checkpoint.setup.id
}
`
}

// A checkpoint taken with source_after = "pause" and deleted out of band
// is no dead end: the next plan replaces it and the sandbox restored from
// it; the apply resumes the template, deletes the checkpoint its pause
// took, checkpoints it again, pauses it again and restores anew; the plan
// after that is empty, and destroy leaves no checkpoint. (It was removed
// from state, so the apply destroyed the restored sandbox and then failed
// on every apply with a 409: the template was PAUSED, and the pause
// checkpoint, no longer recorded, leaked.)
func TestAccCheckpoint_deletedOutOfBandWithPausedSource(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cfg := m.Config(pausedTemplateHCL())
	var deleted, pauseCk, template string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoCheckpoints,
		Steps: []resource.TestStep{
			{Config: cfg, Check: func(s *terraform.State) (err error) {
				ck := s.RootModule().Resources["prime_sandbox_checkpoint.setup"].Primary
				deleted, pauseCk = ck.ID, ck.Attributes["pause_checkpoint_id"]
				template = ck.Attributes["sandbox_id"]
				if pauseCk == "" {
					return fmt.Errorf("no pause checkpoint recorded")
				}
				return nil
			}},
			{
				PreConfig: func() {
					if err := m.Client(t).DeleteCheckpoint(mocktest.WaitCtx(t), deleted); err != nil {
						t.Fatal(err)
					}
				},
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox_checkpoint.setup", plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectResourceAction("prime_sandbox.restored", plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectResourceAction("prime_sandbox.template", plancheck.ResourceActionNoop),
				}},
				Check: func(s *terraform.State) error {
					ck := s.RootModule().Resources["prime_sandbox_checkpoint.setup"].Primary
					want := []string{ck.ID, ck.Attributes["pause_checkpoint_id"]}
					slices.Sort(want)
					if got := m.CheckpointIDs(t); !slices.Equal(got, want) || slices.Contains(got, pauseCk) {
						return fmt.Errorf("the platform holds checkpoints %v, want the new one and its pause's %v (the old pause checkpoint %s deleted)", got, want, pauseCk)
					}
					if st := m.Status(t, template); st != prime.StatusPaused {
						return fmt.Errorf("the template is %s, want PAUSED again", st)
					}
					return nil
				},
			},
			{Config: cfg, PlanOnly: true},
		},
	})
}

// The way out users tried before: after the out-of-band delete, replace
// the template (-replace) and destroy. The pause checkpoint of the first
// template is deleted on the way, so destroy leaves no checkpoint.
func TestAccCheckpoint_deletedOutOfBandReplaceThenDestroy(t *testing.T) {
	cli := acctest.RequireCLI(t)
	m, env, ctx := acctest.MockCLITest(t)
	w := acctest.NewWork(t, cli, env, map[string]string{"main.tf": cliRoot + pausedTemplateHCL()})
	w.Must(ctx, "apply", "-auto-approve", "-input=false")
	if err := m.Client(t).DeleteCheckpoint(ctx, w.StateAttr(ctx, "prime_sandbox_checkpoint.setup", "id")); err != nil {
		t.Fatal(err)
	}
	plan := w.Must(ctx, "plan", "-input=false")
	if n := strings.Count(plan, "Checkpoint is gone"); n != 1 {
		t.Errorf("the plan must say once that the checkpoint is gone (%d):\n%s", n, plan)
	}
	w.Must(ctx, "apply", "-auto-approve", "-input=false", "-replace=prime_sandbox.template")
	w.Must(ctx, "destroy", "-auto-approve", "-input=false")
	if err := m.CheckNoCheckpoints(nil); err != nil {
		t.Fatal(err)
	}
}

// A checkpoint with source_after = "pause" whose record is lost (state rm,
// a restored backup) finds its source PAUSED on the next create: it
// resumes it, checkpoints it and pauses it again, instead of failing on a
// 409 on every apply. (Without the create journal, which would adopt the
// lost checkpoint instead of taking a new one.)
func TestAccCheckpoint_createResumesPausedSource(t *testing.T) {
	cli := acctest.RequireCLI(t)
	m, env, ctx := acctest.MockCLITest(t)
	w := acctest.NewWork(t, cli, env, map[string]string{"main.tf": strings.Replace(cliRoot, `provider "prime" {}`,
		`provider "prime" { create_journal = false }`, 1) + checkpointHCL("template", `source_after = "pause"`)})
	w.Must(ctx, "apply", "-auto-approve", "-input=false")
	lost := m.CheckpointIDs(t) // the checkpoint and its pause's, no longer tracked
	w.Must(ctx, "state", "rm", "prime_sandbox_checkpoint.setup")
	w.Must(ctx, "apply", "-auto-approve", "-input=false")
	template := w.StateAttr(ctx, "prime_sandbox.template", "id")
	if st := m.Status(t, template); st != prime.StatusPaused {
		t.Errorf("the template is %s, want PAUSED again", st)
	}
	if plan, code := w.Exec(ctx, "plan", "-detailed-exitcode", "-input=false"); code != 0 {
		t.Errorf("the plan after the apply is not empty (exit %d):\n%s", code, plan)
	}
	w.Must(ctx, "destroy", "-auto-approve", "-input=false")
	for _, id := range lost {
		if err := m.Client(t).DeleteCheckpoint(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.CheckNoCheckpoints(nil); err != nil {
		t.Fatal(err)
	}
}

// Destroy right after the out-of-band delete (no apply in between) does
// not fail on the missing checkpoint, and deletes the checkpoint the
// template's pause took.
func TestAccCheckpoint_destroyAfterDeletedOutOfBand(t *testing.T) {
	cli := acctest.RequireCLI(t)
	m, env, ctx := acctest.MockCLITest(t)
	w := acctest.NewWork(t, cli, env, map[string]string{"main.tf": cliRoot + pausedTemplateHCL()})
	w.Must(ctx, "apply", "-auto-approve", "-input=false")
	if err := m.Client(t).DeleteCheckpoint(ctx, w.StateAttr(ctx, "prime_sandbox_checkpoint.setup", "id")); err != nil {
		t.Fatal(err)
	}
	w.Must(ctx, "destroy", "-auto-approve", "-input=false")
	if err := m.CheckNoCheckpoints(nil); err != nil {
		t.Fatal(err)
	}
}
