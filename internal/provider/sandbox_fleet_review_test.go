package provider

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// A member create whose outcome is unknown (the platform made the sandbox,
// the answer was lost) keeps its create-journal key, released, so the next
// apply adopts that sandbox instead of creating a second one that nobody
// tracks.
func TestAccSandboxFleet_lostCreateAnswerIsAdoptedNextApply(t *testing.T) {
	m := newTestMock(t, fastMockOptions())
	var broken atomic.Bool
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if broken.Load() && r.Method == http.MethodPost && r.URL.Path == prime.APIPrefix+"/sandbox" {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"eval-b"`)) {
				m.Server.ServeHTTP(httptest.NewRecorder(), r) // the platform creates it ...
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusServiceUnavailable) // ... and the answer is lost
				_, _ = w.Write([]byte(`{"detail":"upstream timeout"}`))
				return
			}
		}
		m.Server.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	dir := t.TempDir()
	factories := map[string]func() (tfprotov6.ProviderServer, error){
		"prime": func() (tfprotov6.ProviderServer, error) {
			return NewProtocol6Server(&primeProvider{version: "test", journalDir: dir})(), nil
		},
	}
	provider := fmt.Sprintf("provider \"prime\" {\n  base_url = %q\n  api_key = \"test-key\"\n  max_retries = 1\n}\n", front.URL)
	liveB := func() int {
		list, err := m.client(t).ListSandboxes(waitCtx(t), prime.ListSandboxesOptions{Labels: []string{"fleet-test"}})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, sb := range list {
			if sb.Name == "eval-b" && !prime.IsTerminalStatus(sb.Status) {
				n++
			}
		}
		return n
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		CheckDestroy:             m.checkNoLiveSandboxes,
		Steps: []resource.TestStep{
			{Config: provider + fleetConfig(`members = ["a"]`, "")},
			{
				PreConfig:   func() { broken.Store(true) },
				Config:      provider + fleetConfig(`members = ["a", "b"]`, ""),
				ExpectError: expectErr(`Member "b": cannot create the sandbox`),
			},
			{
				PreConfig: func() {
					broken.Store(false)
					if left, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(left) != 1 {
						t.Errorf("journal holds %d entries after member b's create outcome was lost; want 1 (its key)", len(left))
					}
				},
				Config: provider + fleetConfig(`members = ["a", "b"]`, ""),
				Check: func(*terraform.State) error {
					if n := liveB(); n != 1 {
						return fmt.Errorf("%d live sandboxes named eval-b; the lost create's sandbox was not adopted", n)
					}
					return nil
				},
			},
		},
	})
}
