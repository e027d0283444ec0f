package command

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/egress"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// A setup step that needs open egress (require_open_egress) waits for a
// restore that a destroy in the same run wrote and stopped waiting for,
// until the restore's own deadline: the data plane catching up while it
// waits lets it run. A pending open policy this process did not write as a
// teardown restore is refused at once, as before.
func TestSetupWaitsForPendingTeardownRestore(t *testing.T) {
	var armed atomic.Value // sandbox ID whose next policy read lifts the stall
	armed.Store("")
	var m *mocktest.Mock
	m = mocktest.NewHooked(t, mocktest.Fast(), func(_ http.ResponseWriter, r *http.Request, _ []byte) bool {
		if id := armed.Load().(string); id != "" && r.Method == http.MethodGet && r.URL.Path == prime.APIPrefix+"/sandbox/"+id+"/egress-policy" {
			armed.Store("")
			m.SetNeverApply(false) // the data plane catches up while the step waits
		}
		return false
	})
	c := m.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id := m.RunningVM(t, "pending-restore")
	if _, _, err := egress.Write(ctx, c, id, prime.EgressPolicy{Allowlist: []string{"example.com"}}, 10*time.Second, "create"); err != nil {
		t.Fatal(err)
	}
	m.SetNeverApply(true)
	put, err := c.PutEgressPolicy(ctx, id, prime.OpenEgressPolicy())
	if err != nil {
		t.Fatal(err)
	}

	// Not noted as a teardown restore of this process: refused at once.
	if err := checkEgressOpen(ctx, c, id); err == nil || !strings.Contains(err.Error(), "is accepted and not yet enforced") {
		t.Fatalf("an unnoted pending restore: %v, want the refusal", err)
	}
	// Noted (as the egress restore notes it): the step waits, and runs once the
	// restore is enforced.
	egress.NotePendingRestore(c, id, put.Generation, time.Now().Add(time.Minute))
	armed.Store(id)
	if err := checkEgressOpen(ctx, c, id); err != nil {
		t.Fatalf("a noted pending restore, enforced while waiting: %v", err)
	}
	if egress.PendingRestoreNoted(c, id, put.Generation) {
		t.Error("the restore is still noted after it was waited for")
	}
}
