package checkpoint_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// checkpointHCL is a template sandbox and its checkpoint; extra goes into
// the checkpoint block.
func checkpointHCL(sandboxName, extra string) string {
	return fmt.Sprintf(`
resource "prime_sandbox" "template" {
  name         = %q
  docker_image = "python:3.12-slim"
}
resource "prime_sandbox_checkpoint" "setup" {
  sandbox_id = prime_sandbox.template.id
  %s
}
`, sandboxName, extra)
}

// Create waits until DURABLE; the data source reads it; a second plan is
// empty; import by ID adopts it; deleting it
// out of band shows as drift (a new checkpoint planned); destroy deletes it.
func TestAccCheckpoint_durableImportDrift(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resourceOnly := m.Config(checkpointHCL("template", `ttl_seconds = 3600
  triggers    = { setup = "v1" }`))
	cfg := resourceOnly + `
data "prime_sandbox_checkpoint" "read" {
  id = prime_sandbox_checkpoint.setup.id
}
`
	var ckID string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoCheckpoints,
		Steps: []resource.TestStep{
			{
				Config: cfg,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("prime_sandbox_checkpoint.setup", tfjsonpath.New("state"), knownvalue.StringExact("DURABLE")),
					statecheck.ExpectKnownValue("prime_sandbox_checkpoint.setup", tfjsonpath.New("depth"), knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownValue("prime_sandbox_checkpoint.setup", tfjsonpath.New("docker_image"), knownvalue.StringExact("python:3.12-slim")),
					statecheck.ExpectKnownValue("prime_sandbox_checkpoint.setup", tfjsonpath.New("stored_bytes"), knownvalue.NotNull()),
					statecheck.ExpectKnownValue("prime_sandbox_checkpoint.setup", tfjsonpath.New("parent_id"), knownvalue.Null()),
					statecheck.ExpectKnownValue("data.prime_sandbox_checkpoint.read", tfjsonpath.New("state"), knownvalue.StringExact("DURABLE")),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttrPair("data.prime_sandbox_checkpoint.read", "sandbox_id", "prime_sandbox.template", "id"),
					func(s *terraform.State) error {
						id, err := acctest.StateID(s, "prime_sandbox_checkpoint.setup")
						ckID = id
						return err
					},
				),
			},
			{
				// ttl_seconds and triggers are not reported by the platform.
				ResourceName: "prime_sandbox_checkpoint.setup", ImportState: true, ImportStateVerify: true,
				ImportStateVerifyIgnore: []string{"ttl_seconds", "triggers", "triggers.%", "triggers.setup", "timeouts"},
			},
			{
				PreConfig: func() {
					if err := m.Client(t).DeleteCheckpoint(mocktest.WaitCtx(t), ckID); err != nil {
						t.Fatalf("out-of-band delete: %v", err)
					}
				},
				// (Without the data source, which would fail to read it.)
				Config:             resourceOnly,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox_checkpoint.setup", plancheck.ResourceActionCreate),
					plancheck.ExpectResourceAction("prime_sandbox.template", plancheck.ResourceActionNoop),
				}},
			},
			{
				// A changed trigger takes a new checkpoint.
				Config: m.Config(checkpointHCL("template", `ttl_seconds = 3600
  triggers    = { setup = "v2" }`)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox_checkpoint.setup", plancheck.ResourceActionCreate),
				}},
			},
		},
	})
	if body := lastCheckpointBody(t, m); body != `{"ttl_seconds":3600}` {
		t.Fatalf("checkpoint create body = %s, want the ttl", body)
	}
}

// The checkpoint's identity is its ID; importing by identity and by ID (an
// import block, which plans with the configuration) adopts it with no
// change. (With ttl_seconds or triggers configured, which the platform does
// not report, the import plans an update that records them, never a
// replacement: the harness's import steps insist on a no-op.)
func TestAccCheckpoint_identityImport(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cfg := m.Config(checkpointHCL("template", ""))
	recorded := resource.ImportPlanChecks{PreApply: []plancheck.PlanCheck{
		plancheck.ExpectResourceAction("prime_sandbox_checkpoint.setup", plancheck.ResourceActionNoop),
	}}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		TerraformVersionChecks:   acctest.SkipBelow(acctest.Identity),
		CheckDestroy:             m.CheckNoCheckpoints,
		Steps: []resource.TestStep{
			{
				Config: cfg,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectIdentityValueMatchesState("prime_sandbox_checkpoint.setup", tfjsonpath.New("id")),
				},
			},
			{Config: cfg, ResourceName: "prime_sandbox_checkpoint.setup", ImportState: true, ImportStateKind: resource.ImportBlockWithResourceIdentity, ImportPlanChecks: recorded},
			{Config: cfg, ResourceName: "prime_sandbox_checkpoint.setup", ImportState: true, ImportStateKind: resource.ImportBlockWithID, ImportPlanChecks: recorded},
		},
	})
}

// lastCheckpointBody is the body of the last checkpoint create.
func lastCheckpointBody(t *testing.T, m *mocktest.Mock) string {
	t.Helper()
	reqs := m.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		r := reqs[i]
		if r.Method == http.MethodPost && strings.HasSuffix(r.Path, "/checkpoints") {
			return string(r.Body)
		}
	}
	t.Fatal("no checkpoint create")
	return ""
}

// A checkpoint that goes FAILED fails the apply closed, is deleted, and
// nothing that depends on it is created.
func TestAccCheckpoint_failedFailsClosed(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cfg := m.Config(checkpointHCL("template-"+primemock.MagicCheckpointFailName, "") + acctest.SandboxHCL("restored", "member", `depends_on   = [prime_sandbox_checkpoint.setup]`))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoCheckpoints,
		Steps: []resource.TestStep{{
			Config:      cfg,
			ExpectError: acctest.ExpectErr("Checkpoint failed"),
		}, {
			Config:      cfg,
			ExpectError: acctest.ExpectErr("did not become DURABLE: checkpoint"),
		}},
	})
	if got := m.Stats().SandboxesCreated; got != 1 {
		t.Fatalf("sandboxes created = %d: nothing that depends on a failed checkpoint may be created", got)
	}
	deleted := 0
	for _, e := range m.Events() {
		if e.Type == primemock.EventCheckpointDeleted {
			deleted++
		}
	}
	if deleted != 2 {
		t.Fatalf("%d failed checkpoints deleted, want 2 (one per apply)", deleted)
	}
}

// A checkpoint whose sandbox is deleted before it is DURABLE is reported
// lost and not recorded.
func TestAccCheckpoint_lostWithItsSandbox(t *testing.T) {
	o := mocktest.Fast()
	o.CheckpointDurableDelay = 10 * time.Minute // never DURABLE within the test
	m := mocktest.New(t, o)
	// The sandbox is deleted as soon as its checkpoint is requested (not
	// on a clock: a loaded runner may take long to get there). No timeout
	// of its own: ParallelTest pauses this test until a slot frees, which
	// in a full run took longer than any fixed bound counted from here.
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		e, err := m.WaitForEvent(ctx, func(e primemock.Event) bool { return e.Type == primemock.EventCheckpointCreated })
		if err != nil {
			return
		}
		_ = m.Client(t).DeleteSandbox(ctx, e.SandboxID)
	}()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoCheckpoints,
		Steps: []resource.TestStep{{
			Config:      m.Config(checkpointHCL("template", "")),
			ExpectError: acctest.ExpectErr("Checkpoint lost"),
		}, {
			// Not recorded: the next plan takes a new checkpoint (of a new
			// sandbox, the template being gone too).
			Config:             m.Config(checkpointHCL("template", "")),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
			ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("prime_sandbox_checkpoint.setup", plancheck.ResourceActionCreate),
			}},
		}},
	})
	found := false
	for _, e := range m.Events() {
		found = found || e.Type == primemock.EventCheckpointDiscarded
	}
	if !found {
		t.Fatal("the mock did not discard the checkpoint with its sandbox")
	}
}

// A checkpoint still uploading when timeouts.create ends fails closed and
// is recorded tainted: the next plan replaces it, and destroy waits for the
// upload (the platform keeps pending checkpoints) before deleting it.
func TestAccCheckpoint_timeoutTaints(t *testing.T) {
	o := mocktest.Fast()
	// The upload outlasts timeouts.create however slow the machine, until
	// the test ends it for the destroy.
	o.CheckpointDurableDelay = time.Hour
	m := mocktest.New(t, o)
	cfg := m.Config(checkpointHCL("template", `timeouts {
    create = "1s"
  }`))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoCheckpoints,
		Steps: []resource.TestStep{{
			Config:      cfg,
			ExpectError: acctest.ExpectErr("was not DURABLE after 1s (timeouts.create)"),
		}, {
			PreConfig:          func() { m.FinishCheckpointUploads(0) },
			Config:             cfg,
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
			ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("prime_sandbox_checkpoint.setup", plancheck.ResourceActionDestroyBeforeCreate),
			}},
		}},
	})
}

// Ctrl-C while the checkpoint uploads: Terraform stops, the checkpoint is
// in state (tainted, not usable), the next plan replaces it, and destroy
// waits out its upload and deletes it: nothing is left untracked.
func TestAccCheckpoint_interruptedApplyKeepsItTracked(t *testing.T) {
	cli := acctest.RequireCLI(t)
	provider := acctest.DevProvider(t)
	t.Parallel()
	o := mocktest.Fast()
	// The upload lasts until the test ends it, so the Ctrl-C lands during
	// it however loaded the machine is.
	o.CheckpointDurableDelay = time.Hour
	m := mocktest.New(t, o)
	w := acctest.NewMockWork(t, m, provider(), cli, `
provider "prime" {}
`+checkpointHCL("template", ""))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	r := w.Launch("apply", "-auto-approve", "-no-color")
	if _, err := m.WaitForEvent(ctx, func(e primemock.Event) bool { return e.Type == primemock.EventCheckpointCreated }); err != nil {
		t.Fatal(err)
	}
	acctest.InterruptTF(ctx, t, r)
	state, code := w.Exec(ctx, "state", "show", "-no-color", "prime_sandbox_checkpoint.setup")
	if code != 0 || !strings.Contains(state, "tainted") {
		t.Fatalf("after Ctrl-C the checkpoint must be in state, tainted (exit %d):\n%s\n\napply output:\n%s", code, state, r.Output())
	}
	plan, code := w.Exec(ctx, "plan", "-detailed-exitcode", "-no-color")
	// Terraform says "is tainted, so must be replaced", OpenTofu "is
	// tainted, so it must be replaced".
	if code != 2 || !regexp.MustCompile(`is tainted, so (it )?must be replaced`).MatchString(plan) {
		t.Fatalf("the plan after Ctrl-C must replace the tainted checkpoint (exit %d):\n%s", code, plan)
	}
	// Destroy waits out the upload (the platform keeps pending
	// checkpoints), which ends now.
	m.FinishCheckpointUploads(0)
	if out, code := w.Exec(ctx, "destroy", "-auto-approve", "-no-color"); code != 0 {
		t.Fatalf("destroy exited %d:\n%s", code, out)
	}
	if err := m.CheckNoCheckpoints(nil); err != nil {
		t.Fatal(err)
	}
}

// source_after = "pause" pauses the template once its checkpoint is DURABLE
// (never before: the pause request follows the DURABLE state in the mock's
// log); prime_sandbox leaves the paused template alone, so the second plan
// is empty; destroy resumes the template, then deletes the checkpoint and
// the checkpoint the pause took (which would otherwise outlive the
// template), then the template.
func TestAccCheckpoint_sourceAfterPause(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	var templateID string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoCheckpoints,
		Steps: []resource.TestStep{{
			Config: m.Config(checkpointHCL("template", `source_after = "pause"`)),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("prime_sandbox_checkpoint.setup", tfjsonpath.New("state"), knownvalue.StringExact("DURABLE")),
				statecheck.ExpectKnownValue("prime_sandbox_checkpoint.setup", tfjsonpath.New("source_after"), knownvalue.StringExact("pause")),
				// The checkpoint the pause took; CheckDestroy sees destroy delete it.
				statecheck.ExpectKnownValue("prime_sandbox_checkpoint.setup", tfjsonpath.New("pause_checkpoint_id"), knownvalue.NotNull()),
			},
			Check: func(s *terraform.State) error {
				id, err := acctest.StateID(s, "prime_sandbox.template")
				if err != nil {
					return err
				}
				templateID = id
				sb, err := m.Client(t).GetSandbox(mocktest.WaitCtx(t), id)
				if err != nil {
					return err
				}
				if sb.Status != prime.StatusPaused {
					return fmt.Errorf("template %s is %s after the apply, want PAUSED", id, sb.Status)
				}
				return nil
			},
		}, {
			// The refresh reads the template PAUSED: no change planned.
			Config:   m.Config(checkpointHCL("template", `source_after = "pause"`)),
			PlanOnly: true,
		}},
	})
	durable, paused, resumed, deleted := int64(0), int64(0), int64(0), int64(0)
	for _, e := range m.Events() {
		switch {
		case e.Type == primemock.EventCheckpointState && e.State == prime.CheckpointDurable && durable == 0:
			durable = e.Seq
		case e.Type == primemock.EventPauseRequested && e.SandboxID == templateID:
			if paused != 0 {
				t.Errorf("template paused twice (events %d and %d)", paused, e.Seq)
			}
			paused = e.Seq
		case e.Type == primemock.EventResumeRequested && e.SandboxID == templateID:
			resumed = e.Seq
		case e.Type == primemock.EventCheckpointDeleted && deleted == 0:
			deleted = e.Seq
		}
	}
	if durable == 0 || paused == 0 || paused < durable {
		t.Fatalf("pause requested at event %d, checkpoint DURABLE at %d: the pause must follow DURABLE", paused, durable)
	}
	// Destroy leaves the template RUNNING, as the create found it, before
	// it deletes the checkpoint.
	if resumed == 0 || deleted == 0 || resumed > deleted {
		t.Fatalf("destroy resumed the template at event %d and deleted the checkpoint at %d: want the resume first", resumed, deleted)
	}
}
