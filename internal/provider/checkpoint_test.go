package provider

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

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

// checkNoCheckpoints is a CheckDestroy: no sandbox and no checkpoint is
// left on the platform.
func (m *testMock) checkNoCheckpoints(s *terraform.State) error {
	if err := m.checkNoLiveSandboxes(s); err != nil {
		return err
	}
	c, err := prime.New(prime.Options{Config: prime.Config{APIKey: "test-key", BaseURL: m.URL}})
	if err != nil {
		return err
	}
	cks, err := c.ListCheckpoints(context.Background(), prime.ListCheckpointsOptions{})
	if err != nil {
		return err
	}
	if len(cks) != 0 {
		return fmt.Errorf("%d checkpoints left after destroy (first %s, %s)", len(cks), cks[0].ID, cks[0].State)
	}
	return nil
}

// Create waits until DURABLE; the data source reads it; a second plan is
// empty; import by ID adopts it; deleting it
// out of band shows as drift (a new checkpoint planned); destroy deletes it.
func TestAccCheckpoint_durableImportDrift(t *testing.T) {
	m := newTestMock(t, fastMockOptions())
	resourceOnly := m.config(checkpointHCL("template", `ttl_seconds = 3600
  triggers    = { setup = "v1" }`))
	cfg := resourceOnly + `
data "prime_sandbox_checkpoint" "read" {
  id = prime_sandbox_checkpoint.setup.id
}
`
	var ckID string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories(t),
		CheckDestroy:             m.checkNoCheckpoints,
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
						id, err := stateID(s, "prime_sandbox_checkpoint.setup")
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
					if err := m.client(t).DeleteCheckpoint(waitCtx(t), ckID); err != nil {
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
				Config: m.config(checkpointHCL("template", `ttl_seconds = 3600
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
	m := newTestMock(t, fastMockOptions())
	cfg := m.config(checkpointHCL("template", ""))
	recorded := resource.ImportPlanChecks{PreApply: []plancheck.PlanCheck{
		plancheck.ExpectResourceAction("prime_sandbox_checkpoint.setup", plancheck.ResourceActionNoop),
	}}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories(t),
		TerraformVersionChecks:   skipBelow(tfIdentity),
		CheckDestroy:             m.checkNoCheckpoints,
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
func lastCheckpointBody(t *testing.T, m *testMock) string {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := len(m.requests) - 1; i >= 0; i-- {
		r := m.requests[i]
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
	m := newTestMock(t, fastMockOptions())
	cfg := m.config(checkpointHCL("template-"+primemock.MagicCheckpointFailName, "") + `
resource "prime_sandbox" "restored" {
  name         = "member"
  docker_image = "python:3.12-slim"
  depends_on   = [prime_sandbox_checkpoint.setup]
}
`)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories(t),
		CheckDestroy:             m.checkNoCheckpoints,
		Steps: []resource.TestStep{{
			Config:      cfg,
			ExpectError: expectErr("Checkpoint failed"),
		}, {
			Config:      cfg,
			ExpectError: expectErr("did not become DURABLE: checkpoint"),
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
	o := fastMockOptions()
	o.CheckpointDurableDelay = 10 * time.Minute // never DURABLE within the test
	m := newTestMock(t, o)
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
		_ = m.client(t).DeleteSandbox(ctx, e.SandboxID)
	}()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories(t),
		CheckDestroy:             m.checkNoCheckpoints,
		Steps: []resource.TestStep{{
			Config:      m.config(checkpointHCL("template", "")),
			ExpectError: expectErr("Checkpoint lost"),
		}, {
			// Not recorded: the next plan takes a new checkpoint (of a new
			// sandbox, the template being gone too).
			Config:             m.config(checkpointHCL("template", "")),
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
	o := fastMockOptions()
	o.CheckpointDurableDelay = 3 * time.Second
	m := newTestMock(t, o)
	cfg := m.config(checkpointHCL("template", `timeouts {
    create = "1s"
  }`))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories(t),
		CheckDestroy:             m.checkNoCheckpoints,
		Steps: []resource.TestStep{{
			Config:      cfg,
			ExpectError: expectErr("was not DURABLE after 1s (timeouts.create)"),
		}, {
			Config:             cfg,
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
			ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("prime_sandbox_checkpoint.setup", plancheck.ResourceActionDestroyBeforeCreate),
			}},
		}},
	})
}

// source_after = "pause" pauses the template once its checkpoint is DURABLE
// (never before: the pause request follows the DURABLE state in the mock's
// log); prime_sandbox leaves the paused template alone, so the second plan
// is empty; destroy resumes the template, then deletes the checkpoint and
// the checkpoint the pause took (which would otherwise outlive the
// template), then the template.
func TestAccCheckpoint_sourceAfterPause(t *testing.T) {
	m := newTestMock(t, fastMockOptions())
	var templateID string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories(t),
		CheckDestroy:             m.checkNoCheckpoints,
		Steps: []resource.TestStep{{
			Config: m.config(checkpointHCL("template", `source_after = "pause"`)),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("prime_sandbox_checkpoint.setup", tfjsonpath.New("state"), knownvalue.StringExact("DURABLE")),
				statecheck.ExpectKnownValue("prime_sandbox_checkpoint.setup", tfjsonpath.New("source_after"), knownvalue.StringExact("pause")),
				// The checkpoint the pause took; CheckDestroy sees destroy delete it.
				statecheck.ExpectKnownValue("prime_sandbox_checkpoint.setup", tfjsonpath.New("pause_checkpoint_id"), knownvalue.NotNull()),
			},
			Check: func(s *terraform.State) error {
				id, err := stateID(s, "prime_sandbox.template")
				if err != nil {
					return err
				}
				templateID = id
				sb, err := m.client(t).GetSandbox(waitCtx(t), id)
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
			Config:   m.config(checkpointHCL("template", `source_after = "pause"`)),
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
