package soak

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
	"github.com/primeintellect/terraform-provider-prime/internal/tfcli"
)

// FaultRun applies a fleet of n sandboxes + policies while the mock injects
// faults, then checks: exactly n live sandboxes, none created twice, every
// policy applied and enforced, a second plan is empty, destroy leaves none.
func (r *Runner) FaultRun(ctx context.Context, n int) *Report {
	rep := &Report{Name: fmt.Sprintf("fault-injected fleet: N=%d sandboxes + %d policies, -parallelism=%d", n, n, r.Parallelism)}
	start := time.Now()
	defer func() { rep.Duration = time.Since(start) }()

	ws, err := r.prepare(ctx, "fault", primemock.ConfigPatch{}, Fleet{N: n})
	if !rep.CheckErr("prepare workspace and mock", err) {
		return rep
	}
	r.knobsNote(ctx, rep)

	r.logf("fault run: terraform apply (N=%d)", n)
	apply := ws.Run(ctx, r.tfArgs("apply")...)
	if !rep.Check("terraform apply succeeds despite injected faults", apply.OK(), "%s", apply.Describe()) {
		rep.Note("apply output: %s", apply.Tail(3000))
		r.cleanup(ctx, ws, rep)
		return rep
	}
	rep.Note("apply took %s", apply.Duration.Round(time.Millisecond))
	r.checkFleetApplied(ctx, ws, rep, n)

	r.logf("fault run: terraform plan -detailed-exitcode")
	plan := ws.Run(ctx, r.tfArgs("plan", "-detailed-exitcode")...)
	if !rep.Check("second terraform plan -detailed-exitcode is empty (exit 0)", plan.OK(), "%s", plan.Describe()) {
		rep.Note("plan output: %s", plan.Tail(3000))
	}

	r.logf("fault run: terraform destroy")
	r.destroyAndCheck(ctx, ws, rep, 0)
	r.faultNote(ctx, rep)
	return rep
}

// faultNote reports how many faults were injected and how many creates
// were idempotent replays.
func (r *Runner) faultNote(ctx context.Context, rep *Report) {
	st, err := r.Mock.Stats(ctx)
	if err != nil {
		return
	}
	total := 0
	for k, v := range st.Requests {
		if strings.Contains(k, "/api/v1") {
			total += v
		}
	}
	rep.Note("mock saw %d API requests: %d injected 503s, %d injected 429s, %d idempotent create replays, peak %d in flight",
		total, st.Injected503, st.Injected429, st.IdempotentReplays, st.PeakInFlight)
}

// checkFleetApplied checks the mock against the state after a successful
// apply of Fleet{N: n}.
func (r *Runner) checkFleetApplied(ctx context.Context, ws *tfcli.Workspace, rep *Report, n int) {
	st, err := r.Mock.Stats(ctx)
	if !rep.CheckErr("read /_mock/stats", err) {
		return
	}
	rep.Check("mock holds exactly N live sandboxes", st.LiveSandboxes == n, "live_sandboxes = %d, N = %d", st.LiveSandboxes, n)
	rep.Check("no sandbox created twice", st.SandboxesCreated == n,
		"sandboxes_created = %d, N = %d (idempotent replays: %d)", st.SandboxesCreated, n, st.IdempotentReplays)

	state, err := ws.State(ctx)
	if !rep.CheckErr("read state (terraform show -json)", err) {
		return
	}
	sandboxIDs := tfcli.IDsOfType(state, "prime_sandbox")
	live, err := r.liveIDs(ctx)
	if !rep.CheckErr("read /_mock/events", err) {
		return
	}
	inState := setOf(sandboxIDs)
	leaked, missing := minus(live, inState), minus(inState, live)
	rep.Check("live sandboxes are exactly the state's sandboxes", len(sandboxIDs) == n && len(leaked) == 0 && len(missing) == 0,
		"%d in state; live but not in state: [%s]; in state but not live: [%s]", len(sandboxIDs), short(leaked), short(missing))

	policies := map[string]tfcli.StateResource{}
	for _, res := range state {
		if res.Type == "prime_egress_policy" {
			id, _ := res.Values["sandbox_id"].(string)
			policies[id] = res
		}
	}
	rep.Check("every sandbox has its policy in state", len(policies) == n, "%d policies in state, N = %d", len(policies), n)
	r.checkPoliciesApplied(ctx, rep, sandboxIDs, policies)
}

// checkPoliciesApplied reads every sandbox's policy through the API (with
// retries, faults stay on) and the mock's reachability introspection.
func (r *Runner) checkPoliciesApplied(ctx context.Context, rep *Report, ids []string, policies map[string]tfcli.StateResource) {
	c, err := r.Mock.Client()
	if !rep.CheckErr("verification client", err) {
		return
	}
	want, _ := prime.ComposeEgressPolicy(prime.EgressPolicySpec{Allow: DefaultAllow, Routes: DefaultRoutes})
	errs := forEach(ids, 8, func(id string) error {
		st, err := c.GetEgressPolicy(ctx, id)
		if err != nil {
			return fmt.Errorf("sandbox %s: %w", id, err)
		}
		if !st.Applied || !st.Enforces(st.Generation) {
			return fmt.Errorf("sandbox %s: generation %d not applied (applied_generation %d)", id, st.Generation, st.AppliedGeneration)
		}
		if !prime.SamePolicy(st.Policy, want) {
			return fmt.Errorf("sandbox %s: platform policy %+v, want %+v", id, st.Policy, want)
		}
		if p, ok := policies[id]; ok {
			if g, _ := p.Values["generation"].(float64); int64(g) != st.Generation {
				return fmt.Errorf("sandbox %s: state generation %d, platform generation %d", id, int64(g), st.Generation)
			}
		}
		for _, h := range append(slices.Clone(AllowedHosts), BlockedHost) {
			re, err := r.Mock.Reachable(ctx, id, h)
			switch {
			case err != nil:
				return fmt.Errorf("sandbox %s: reachability of %s: %w", id, h, err)
			case re.Reachable != (h != BlockedHost):
				return fmt.Errorf("sandbox %s: %s reachable = %t under the applied policy", id, h, re.Reachable)
			}
		}
		return nil
	})
	rep.Check("every policy applied on the platform and enforced", len(errs) == 0 && len(ids) > 0,
		"%d sandboxes checked via GET egress-policy and /_mock reachability; %d problems %s", len(ids), len(errs), errSummary(errs))
}

// destroyAndCheck runs destroy and checks the mock ends with wantLive live
// sandboxes (the ones Terraform never knew about).
func (r *Runner) destroyAndCheck(ctx context.Context, ws *tfcli.Workspace, rep *Report, wantLive int) {
	destroy := ws.Run(ctx, r.tfArgs("destroy")...)
	if !rep.Check("terraform destroy succeeds", destroy.OK(), "%s", destroy.Describe()) {
		rep.Note("destroy output: %s", destroy.Tail(3000))
	} else {
		rep.Note("destroy took %s", destroy.Duration.Round(time.Millisecond))
	}
	st, err := r.Mock.Stats(ctx)
	if err == nil {
		what := "destroy leaves zero live sandboxes"
		if wantLive > 0 {
			what = "destroy leaves only the sandboxes Terraform never recorded"
		}
		rep.Check(what, st.LiveSandboxes == wantLive, "live_sandboxes = %d, want %d", st.LiveSandboxes, wantLive)
	}
	if state, err := ws.State(ctx); err == nil {
		rep.Check("state is empty after destroy", len(state) == 0, "%d resources left in state", len(state))
	}
}
