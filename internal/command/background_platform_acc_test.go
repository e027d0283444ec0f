package command_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// The platform ending a sandbox during a background job (its lifetime
// timeout, an OOM kill, a cancellation) is reported with the reason its
// error context gives, not as a lost job.
func TestAccBackground_platformEndsTheSandboxMidJob(t *testing.T) {
	for reason, want := range primemock.Terminations {
		t.Run(reason, func(t *testing.T) {
			m := mocktest.New(t, mocktest.Fast())
			onEvent(t, m, func(e primemock.Event) bool {
				return e.Type == primemock.EventCommandStarted && e.Transport == primemock.TransportBackground && strings.Contains(e.Command, "long-agent")
			}, func() {
				for _, id := range LiveSandboxIDs(m) {
					_ = m.TerminateSandbox(id, want)
				}
			})
			parts := []string{`Sandbox terminated mid-job`, want.Status}
			if want.ErrorType != "" {
				parts = append(parts, want.ErrorType)
			}
			parts = append(parts, want.ErrorMessage)
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: acctest.ProviderFactories(t),
				CheckDestroy:             m.CheckNoLiveSandboxes,
				Steps: []resource.TestStep{{
					Config:      m.Config(acctest.SandboxHCL("box", "files") + acctest.BackgroundCommandHCL("agent", "prime_sandbox.box.id", "echo long-agent; sleep 1000000", "timeout_seconds = 300")),
					ExpectError: acctest.ExpectInOrder(parts...),
				}},
			})
		})
	}
}

// A job that completed, but whose sandbox ended before its output was read,
// keeps its exit code: the result is recorded (output empty, with a
// warning), and the apply does not report a lost or terminated job.
func TestAccBackground_exitCodeKeptWhenTheOutputIsLost(t *testing.T) {
	var m *mocktest.Mock
	var ended atomic.Bool
	m = mocktest.NewHooked(t, mocktest.Fast(), func(w http.ResponseWriter, r *http.Request, _ []byte) bool {
		if r.URL.Path != prime.APIPrefix+"/sandbox/background-jobs/status:batchGet" || ended.Load() {
			return false
		}
		// Answer as the mock does; once it reports the job completed, the
		// platform ends the sandbox before anyone reads the output.
		rec := httptest.NewRecorder()
		m.Server.ServeHTTP(rec, r)
		var resp prime.BatchJobStatusResponse
		_ = json.Unmarshal(rec.Body.Bytes(), &resp)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
		for _, st := range resp.Statuses {
			if st.Completed && ended.CompareAndSwap(false, true) {
				_ = m.TerminateSandbox(st.SandboxID, primemock.Terminations["oom"])
			}
		}
		return true
	})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config: m.Config(acctest.SandboxHCL("box", "files") + acctest.BackgroundCommandHCL("agent", "prime_sandbox.box.id", "echo finished; exit 3", "allowed_exit_codes = [3]", "timeout_seconds = 300")),
			// The platform ended the sandbox: the next plan replaces it.
			ExpectNonEmptyPlan: true,
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("prime_sandbox_command.agent", "exit_code", "3"),
				resource.TestCheckResourceAttr("prime_sandbox_command.agent", "stdout", ""),
				func(*terraform.State) error {
					if !ended.Load() {
						return errors.New("the sandbox was not ended after the job completed")
					}
					return nil
				},
			),
		}},
	})
}
