package soak

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
	"github.com/primeintellect/terraform-provider-prime/internal/tfcli"
)

// Runner runs the soak scenarios against one mock, each in its own
// workspace under WorkRoot. The mock is reset before each scenario.
type Runner struct {
	Terraform   string
	ProviderDir string
	WorkRoot    string
	Mock        *Mock
	// Parallelism is terraform's -parallelism.
	Parallelism int
	// Knobs are applied to the mock before each scenario (a scenario may
	// add its own, such as never_apply).
	Knobs primemock.ConfigPatch
	// Logf reports progress (optional).
	Logf func(format string, args ...any)
	// ExtraEnv is added to terraform's environment.
	ExtraEnv []string
}

func (r *Runner) logf(format string, args ...any) {
	if r.Logf != nil {
		r.Logf(format, args...)
	}
}

func (r *Runner) tfArgs(cmd string, extra ...string) []string {
	args := []string{cmd}
	if cmd == "apply" || cmd == "destroy" {
		args = append(args, "-auto-approve")
	}
	if cmd != "show" {
		args = append(args, "-input=false")
	}
	if r.Parallelism > 0 && cmd != "show" {
		args = append(args, fmt.Sprintf("-parallelism=%d", r.Parallelism))
	}
	return append(args, extra...)
}

// prepare configures and resets the mock and creates the workspace.
func (r *Runner) prepare(ctx context.Context, name string, extra primemock.ConfigPatch, fleet Fleet) (*tfcli.Workspace, error) {
	knobs := r.Knobs
	knobs.NeverApply = Bool(false)
	if err := r.Mock.Configure(ctx, knobs); err != nil {
		return nil, err
	}
	if err := r.Mock.Configure(ctx, extra); err != nil {
		return nil, err
	}
	if err := r.Mock.Reset(ctx); err != nil {
		return nil, err
	}
	dir := filepath.Join(r.WorkRoot, name)
	_ = os.RemoveAll(dir)
	ws, err := NewWorkspace(dir, r.Terraform, r.ProviderDir, r.ExtraEnv...)
	if err != nil {
		return nil, err
	}
	fleet.BaseURL = r.Mock.URL
	return ws, ws.WriteConfig(fleet.HCL())
}

// knobsNote describes the mock's effective knobs.
func (r *Runner) knobsNote(ctx context.Context, rep *Report) {
	var c primemock.ConfigPatch
	if err := r.Mock.getJSON(ctx, "/_mock/config", &c); err != nil {
		return
	}
	d := func(p *primemock.Duration) string {
		if p == nil {
			return "?"
		}
		return time.Duration(*p).String()
	}
	f := func(p *float64) float64 {
		if p == nil {
			return 0
		}
		return *p
	}
	var seed int64
	if c.Seed != nil {
		seed = *c.Seed
	}
	rep.Note("mock knobs: boot %s, apply %s, latency %s + jitter [0,%s), fail rate %g, throttle rate %g, never_apply %t, seed %d",
		d(c.BootDelay), d(c.ApplyDelay), d(c.Latency), d(c.LatencyJitter), f(c.FailRate), f(c.ThrottleRate),
		c.NeverApply != nil && *c.NeverApply, seed)
}

// LiveSandboxes replays the event log: created minus deleted, failed,
// stopped (the start process exited) or ended by the platform (a lifetime
// or idle timeout, an OOM kill, a cancellation).
func LiveSandboxes(events []primemock.Event) map[string]bool {
	live := map[string]bool{}
	for _, e := range events {
		switch e.Type {
		case primemock.EventSandboxCreated:
			live[e.SandboxID] = true
		case primemock.EventSandboxDeleted, primemock.EventSandboxError, primemock.EventSandboxStopped, primemock.EventSandboxEnded:
			delete(live, e.SandboxID)
		}
	}
	return live
}

func (r *Runner) liveIDs(ctx context.Context) (map[string]bool, error) {
	evs, err := r.Mock.Events(ctx, 0)
	if err != nil {
		return nil, err
	}
	return LiveSandboxes(evs), nil
}

// cleanup destroys what a failed scenario left and deletes any sandbox the
// mock still runs, so the next scenario starts clean.
func (r *Runner) cleanup(ctx context.Context, ws *tfcli.Workspace, rep *Report) {
	if ws != nil {
		if res := ws.Run(ctx, r.tfArgs("destroy")...); !res.OK() {
			rep.Note("clean-up destroy failed: %s", res.Describe())
		}
	}
	r.deleteLive(ctx, rep)
}

// deleteLive deletes, through the API, every sandbox the mock still runs.
func (r *Runner) deleteLive(ctx context.Context, rep *Report) int {
	live, err := r.liveIDs(ctx)
	if err != nil || len(live) == 0 {
		return 0
	}
	c, err := r.Mock.Client()
	if err != nil {
		return 0
	}
	ids := minus(live, nil)
	errs := forEach(ids, 8, func(id string) error { return c.DeleteSandbox(ctx, id) })
	if len(errs) > 0 {
		rep.Note("deleting leftover sandboxes: %s", errSummary(errs))
	}
	return len(ids)
}

// ErrFailed is returned by callers that summarise reports.
var ErrFailed = errors.New("soak failed")
