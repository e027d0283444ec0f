package mocktest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// CreateBodies returns the JSON bodies of POST /api/v1/sandbox.
func (m *Mock) CreateBodies(t testing.TB) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, r := range m.Requests() {
		if r.Method == http.MethodPost && r.Path == prime.APIPrefix+"/sandbox" {
			var body map[string]any
			if err := json.Unmarshal(r.Body, &body); err != nil {
				t.Fatalf("create body: %v", err)
			}
			out = append(out, body)
		}
	}
	return out
}

// NoAPICalls fails when the mock received any API request: plan-time
// validation must reject bad input before that.
func (m *Mock) NoAPICalls(t testing.TB) {
	t.Helper()
	if n := m.APIRequests(); n != 0 {
		t.Fatalf("the provider sent %d API requests; plan-time validation must reject the input first", n)
	}
}

// CheckNoLiveSandboxes is a CheckDestroy: nothing the test created is left
// running on the platform.
func (m *Mock) CheckNoLiveSandboxes(*terraform.State) error {
	if live := m.Stats().LiveSandboxes; live != 0 {
		return fmt.Errorf("%d sandboxes are still live after destroy", live)
	}
	return nil
}

// Reaches asks the mock whether a sandbox reaches host under its applied
// egress policy; an unknown sandbox fails the test.
func (m *Mock) Reaches(t testing.TB, id, host string) bool {
	t.Helper()
	ok, found := m.Reachable(id, host)
	if !found {
		t.Fatalf("sandbox %s unknown to the mock", id)
	}
	return ok
}

// CheckNoCheckpoints is a CheckDestroy: no sandbox and no checkpoint is
// left on the platform.
func (m *Mock) CheckNoCheckpoints(s *terraform.State) error {
	if err := m.CheckNoLiveSandboxes(s); err != nil {
		return err
	}
	c, err := prime.New(prime.Options{Config: prime.Config{APIKey: APIKey, BaseURL: m.URL}})
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

// DurableCheckpoints waits until every checkpoint the mock lists is
// DURABLE (so it outlives its sandbox: only a delete removes it) and
// checks their number; it returns them.
func (m *Mock) DurableCheckpoints(t testing.TB, want int) ([]prime.Checkpoint, error) {
	t.Helper()
	c := m.Client(t)
	cks, err := c.ListCheckpoints(WaitCtx(t), prime.ListCheckpointsOptions{})
	if err != nil {
		return nil, err
	}
	if len(cks) != want {
		return nil, fmt.Errorf("the platform lists %d checkpoints, want %d", len(cks), want)
	}
	for _, ck := range cks {
		if _, err := c.WaitForCheckpoint(WaitCtx(t), ck.ID, prime.WaitCheckpointOptions{}); err != nil {
			return nil, err
		}
	}
	return cks, nil
}
