package sandbox_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// A prime_egress_policy layered on a restored sandbox with an egress
// block: the restore is created open and locked to the block's lists right
// after it is RUNNING, so the policy's destroy must restore those lists,
// never an open policy.
//
// The mock's sandbox object mirrors every accepted policy write; whether
// the platform's does is not published, so this mock answers as a
// platform whose object shows only the lists a sandbox was created with
// (withoutObjectLists): a restore then shows none, however it is locked.
func TestAccRestore_layeredPolicyDestroyRestoresBlock(t *testing.T) {
	var m *mocktest.Mock
	m = mocktest.NewHooked(t, mocktest.Fast(), func(w http.ResponseWriter, r *http.Request, _ []byte) bool {
		return withoutObjectLists(m, w, r)
	})
	restored := setupOnceHCL(`
resource "prime_sandbox" "restored" {
  name          = "restored"
  checkpoint_id = prime_sandbox_checkpoint.setup.id
  egress {
    allow = ["pypi.org", "example.com"]
  }
}
`)
	var id string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoCheckpoints,
		Steps: []resource.TestStep{
			{
				Config: m.Config(restored + acctest.EgressPolicyHCL("narrow", "prime_sandbox.restored.id", []string{"example.com"})),
				Check: func(s *terraform.State) error {
					var err error
					if id, err = acctest.StateID(s, "prime_sandbox.restored"); err != nil {
						return err
					}
					if !m.Reaches(t, id, "example.com") || m.Reaches(t, id, "pypi.org") {
						return fmt.Errorf("the layered policy is not the one in force")
					}
					return nil
				},
			},
			{
				Config: m.Config(restored),
				Check: func(*terraform.State) error {
					st, err := m.Client(t).GetEgressPolicy(mocktest.WaitCtx(t), id)
					if err != nil {
						return err
					}
					want := prime.EgressPolicy{Allowlist: []string{"example.com", "pypi.org"}}
					if !prime.SamePolicy(st.Policy, want) || !st.Applied {
						return fmt.Errorf("after the layered policy's destroy the restored sandbox holds %+v (applied %t), "+
							"want its egress block's lists %v", st.Policy, st.Applied, want.Allowlist)
					}
					if m.Reaches(t, id, "google.com") {
						return fmt.Errorf("the restored sandbox reaches google.com after the layered policy's destroy")
					}
					return nil
				},
			},
		},
	})
}

// The same for a fleet restored from a checkpoint under an egress block,
// with the policy added by a later apply (whose provider process learns the
// members from the refresh alone): prime_fleet_egress_policy's destroy
// gives every member back the block's lists (the baseline rule is the one
// prime_egress_policy uses).
func TestAccRestore_fleetLayeredPolicyDestroyRestoresBlock(t *testing.T) {
	var m *mocktest.Mock
	m = mocktest.NewHooked(t, mocktest.Fast(), func(w http.ResponseWriter, r *http.Request, _ []byte) bool {
		return withoutObjectLists(m, w, r)
	})
	fleet := setupOnceHCL(`
resource "prime_sandbox_fleet" "agents" {
  name_prefix   = "eval"
  size          = 2
  checkpoint_id = prime_sandbox_checkpoint.setup.id
  egress {
    allow = ["pypi.org", "example.com"]
  }
}
`)
	var ids []string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoCheckpoints,
		Steps: []resource.TestStep{
			{Config: m.Config(fleet)},
			{
				Config: m.Config(fleet + `
resource "prime_fleet_egress_policy" "narrow" {
  sandbox_ids = prime_sandbox_fleet.agents.sandbox_ids
  allow       = ["example.com"]
}
`),
				Check: func(s *terraform.State) error {
					a := s.RootModule().Resources["prime_sandbox_fleet.agents"].Primary.Attributes
					ids = []string{a["sandbox_ids.0"], a["sandbox_ids.1"]}
					for _, id := range ids {
						if !m.Reaches(t, id, "example.com") || m.Reaches(t, id, "pypi.org") {
							return fmt.Errorf("member %s: the layered policy is not the one in force", id)
						}
					}
					return nil
				},
			},
			{
				Config: m.Config(fleet),
				Check: func(*terraform.State) error {
					want := prime.EgressPolicy{Allowlist: []string{"example.com", "pypi.org"}}
					for _, id := range ids {
						st, err := m.Client(t).GetEgressPolicy(mocktest.WaitCtx(t), id)
						if err != nil {
							return err
						}
						if !prime.SamePolicy(st.Policy, want) || !st.Applied {
							return fmt.Errorf("after the fleet policy's destroy member %s holds %+v (applied %t), want the "+
								"egress block's lists %v", id, st.Policy, st.Applied, want.Allowlist)
						}
					}
					return nil
				},
			},
		},
	})
}

// withoutObjectLists answers GET /sandbox and GET /sandbox/{id} with the
// egress lists taken out of the sandbox objects (networkAllowlist,
// networkDenylist, advancedConfigs.vmEgressPolicy): what a platform whose
// object shows only create-time lists answers for sandboxes created
// without lists, as every sandbox of the tests using it is.
func withoutObjectLists(m *mocktest.Mock, w http.ResponseWriter, r *http.Request) bool {
	return rewriteSandboxObjects(m, w, r, func(obj map[string]any) {
		delete(obj, "networkAllowlist")
		delete(obj, "networkDenylist")
		if ac, ok := obj["advancedConfigs"].(map[string]any); ok {
			delete(ac, "vmEgressPolicy")
		}
	})
}

// rewriteSandboxObjects answers GET /sandbox and GET /sandbox/{id} from the
// mock with edit applied to every sandbox object (one with an "id" and a
// "dockerImage"); other requests go to the mock as they are.
func rewriteSandboxObjects(m *mocktest.Mock, w http.ResponseWriter, r *http.Request, edit func(map[string]any)) bool {
	rest, ok := strings.CutPrefix(r.URL.Path, prime.APIPrefix+"/sandbox")
	if r.Method != http.MethodGet || !ok || strings.Count(rest, "/") > 1 {
		return false
	}
	rec := httptest.NewRecorder()
	m.Server.ServeHTTP(rec, r)
	var body any
	out := rec.Body.Bytes()
	if json.Unmarshal(out, &body) == nil {
		editObjects(body, edit)
		out, _ = json.Marshal(body)
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.Header().Del("Content-Length")
	w.WriteHeader(rec.Code)
	_, _ = w.Write(out)
	return true
}

func editObjects(v any, edit func(map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		_, id := v["id"]
		_, image := v["dockerImage"]
		if id && image {
			edit(v)
			return
		}
		for _, e := range v {
			editObjects(e, edit)
		}
	case []any:
		for _, e := range v {
			editObjects(e, edit)
		}
	}
}
