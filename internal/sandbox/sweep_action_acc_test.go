package sandbox_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// prime_sandbox_sweep from an action_trigger deletes exactly the running
// sandboxes that carry all its labels; its default dry run deletes none.
func TestAccSandboxSweepAction_actionTrigger(t *testing.T) {
	// Parallel before the context: a parallel test waits for the serial
	// ones, and a deadline taken before that wait can pass before it runs.
	t.Parallel()
	m := mocktest.New(t, mocktest.Fast())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // the whole test, destroy included
	t.Cleanup(cancel)
	c := m.Client(t)
	for i, labels := range [][]string{{"stale", "run-7"}, {"stale", "run-7"}, {"stale"}, {"keep"}} {
		if _, err := c.CreateSandbox(ctx, prime.CreateSandboxRequest{Name: fmt.Sprintf("left-%d", i), DockerImage: "img", Labels: labels}); err != nil {
			t.Fatal(err)
		}
	}
	sweep := func(name, dryRun string) string {
		return m.Config(fmt.Sprintf(`
resource "prime_sandbox" "marker" {
  name         = %[1]q
  docker_image = "python:3.12-slim"
  lifecycle {
    action_trigger {
      events  = [after_create]
      actions = [action.prime_sandbox_sweep.leftovers]
    }
  }
}

action "prime_sandbox_sweep" "leftovers" {
  config {
    labels = ["stale", "run-7"]
    %[2]s
  }
}
`, name, dryRun))
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		TerraformVersionChecks:   acctest.SkipBelow(acctest.Query),
		CheckDestroy: func(s *terraform.State) error {
			if _, err := c.BulkDeleteSandboxes(ctx, prime.BulkDeleteRequest{Labels: []string{"keep"}}); err != nil {
				return err
			}
			if _, err := c.BulkDeleteSandboxes(ctx, prime.BulkDeleteRequest{Labels: []string{"stale"}}); err != nil {
				return err
			}
			return m.CheckNoLiveSandboxes(s)
		},
		Steps: []resource.TestStep{
			{
				Config: sweep("marker-1", ""),
				Check: func(*terraform.State) error {
					if n := acctest.LiveLabelled(ctx, t, c, "stale"); n != 3 {
						return fmt.Errorf("after a dry run %d stale sandboxes live, want all 3", n)
					}
					return nil
				},
			},
			{
				Config: sweep("marker-2", "dry_run = false"),
				Check: func(*terraform.State) error {
					stale, run7, keep := acctest.LiveLabelled(ctx, t, c, "stale"), acctest.LiveLabelled(ctx, t, c, "run-7"), acctest.LiveLabelled(ctx, t, c, "keep")
					if run7 != 0 || stale != 1 || keep != 1 {
						return fmt.Errorf("after the sweep: %d run-7, %d stale, %d keep live; want 0, 1 (stale only), 1", run7, stale, keep)
					}
					return nil
				},
			},
		},
	})
}

// A sweep reports every sandbox the platform did not delete, with the
// platform's reason, and fails; the others are deleted.
func TestAccSandboxSweepAction_reportsFailedDeletes(t *testing.T) {
	// Parallel before the context: a parallel test waits for the serial
	// ones, and a deadline taken before that wait can pass before it runs.
	t.Parallel()
	var m *mocktest.Mock
	var refused atomic.Value // the sandbox ID whose delete the platform refuses
	refused.Store("")
	m = mocktest.NewHooked(t, mocktest.Fast(), func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		id, _ := refused.Load().(string)
		var req prime.BulkDeleteRequest
		if r.Method != http.MethodDelete || r.URL.Path != prime.APIPrefix+"/sandbox" ||
			json.Unmarshal(body, &req) != nil || !slices.Contains(req.SandboxIDs, id) {
			return false
		}
		// The mock deletes the others; the answer adds the refused one.
		req.SandboxIDs = slices.DeleteFunc(req.SandboxIDs, func(s string) bool { return s == id })
		rest, _ := json.Marshal(req)
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(rest)), int64(len(rest))
		rec := httptest.NewRecorder()
		m.Server.ServeHTTP(rec, r)
		var out prime.BulkDeleteResponse
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return true
		}
		out.Failed = append(out.Failed, prime.BulkDeleteFailure{SandboxID: id, Error: "sandbox is being migrated"})
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
		return true
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	c := m.Client(t)
	var ids []string
	for i := range 3 {
		sb, err := c.CreateSandbox(ctx, prime.CreateSandboxRequest{Name: fmt.Sprintf("left-%d", i), DockerImage: "img", Labels: []string{"stale"}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, sb.ID)
	}
	refused.Store(ids[1])
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		TerraformVersionChecks:   acctest.SkipBelow(acctest.Query),
		CheckDestroy: func(s *terraform.State) error {
			if n := acctest.LiveLabelled(ctx, t, c, "stale"); n != 1 {
				return fmt.Errorf("%d stale sandboxes live after the sweep, want only the refused one", n)
			}
			refused.Store("")
			if _, err := c.BulkDeleteSandboxes(ctx, prime.BulkDeleteRequest{Labels: []string{"stale"}}); err != nil {
				return err
			}
			return m.CheckNoLiveSandboxes(s)
		},
		Steps: []resource.TestStep{{
			Config: m.Config(`
resource "prime_sandbox" "marker" {
  name         = "marker"
  docker_image = "python:3.12-slim"
  lifecycle {
    action_trigger {
      events  = [after_create]
      actions = [action.prime_sandbox_sweep.stale]
    }
  }
}
action "prime_sandbox_sweep" "stale" {
  config {
    labels  = ["stale"]
    dry_run = false
  }
}
`),
			ExpectError: acctest.ExpectErr(fmt.Sprintf(`1 of the 3 sandboxes labelled stale were not deleted (keyed by sandbox ID): Member %q: the platform did not delete sandbox %s: sandbox is being migrated`, ids[1], ids[1])),
		}},
	})
}
