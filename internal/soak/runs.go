package soak

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/devtools/tfcli"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
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

// LiveSandboxes replays the event log: created minus deleted or failed.
func LiveSandboxes(events []primemock.Event) map[string]bool {
	live := map[string]bool{}
	for _, e := range events {
		switch e.Type {
		case primemock.EventSandboxCreated:
			live[e.SandboxID] = true
		case primemock.EventSandboxDeleted, primemock.EventSandboxError:
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

func setOf(ids []string) map[string]bool {
	m := make(map[string]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// minus lists a − b, sorted.
func minus(a, b map[string]bool) []string {
	var out []string
	for k := range a {
		if !b[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func short(ids []string) string {
	if len(ids) <= 5 {
		return strings.Join(ids, ", ")
	}
	return strings.Join(ids[:5], ", ") + fmt.Sprintf(", … (%d in all)", len(ids))
}

// forEach runs fn for every id with a few workers and collects errors.
func forEach(ids []string, workers int, fn func(id string) error) []error {
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	ch := make(chan string)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range ch {
				if err := fn(id); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		}()
	}
	for _, id := range ids {
		ch <- id
	}
	close(ch)
	wg.Wait()
	return errs
}

func errSummary(errs []error) string {
	if len(errs) == 0 {
		return ""
	}
	s := errs[0].Error()
	if len(errs) > 1 {
		s += fmt.Sprintf(" (and %d more)", len(errs)-1)
	}
	return s
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

// NeverApplyRun applies sandbox → setup → policy (short create timeout) →
// agent on a mock whose data plane never applies policies, and checks that
// the apply fails closed: no policy in state, nothing applied on the
// platform, no agent command executed.
func (r *Runner) NeverApplyRun(ctx context.Context, n int, policyTimeout string) *Report {
	rep := &Report{Name: fmt.Sprintf("never-apply fleet: N=%d sandbox → setup → policy (timeouts.create = %s) → agent, -parallelism=%d",
		n, policyTimeout, r.Parallelism)}
	start := time.Now()
	defer func() { rep.Duration = time.Since(start) }()
	ws, err := r.prepare(ctx, "never-apply", primemock.ConfigPatch{NeverApply: Bool(true)},
		Fleet{N: n, Setup: true, Agent: true, PolicyCreateTimeout: policyTimeout})
	if !rep.CheckErr("prepare workspace and mock", err) {
		return rep
	}
	r.knobsNote(ctx, rep)

	r.logf("never-apply run: terraform apply (N=%d), expected to fail", n)
	apply := ws.Run(ctx, r.tfArgs("apply")...)
	rep.Check("terraform apply fails", apply.Err == nil && apply.ExitCode == 1, "%s", apply.Describe())
	notEnforced := strings.Count(apply.Output, "Error: Egress policy not enforced")
	allErrors := strings.Count(apply.Output, "Error: ")
	rep.Check("every policy failed with \"Egress policy not enforced\"", notEnforced == n,
		"%d such errors for N = %d (%d errors in all)", notEnforced, n, allErrors)
	if notEnforced != n {
		rep.Note("apply output: %s", apply.Tail(3000))
	}

	state, err := ws.State(ctx)
	if rep.CheckErr("read state (terraform show -json)", err) {
		count := map[string]int{}
		for _, res := range state {
			count[res.Type]++
		}
		agents := 0
		for _, res := range state {
			if res.Type == "prime_sandbox_command" && strings.HasPrefix(res.Name, "agent") {
				agents++
			}
		}
		rep.Check("no policy in state", count["prime_egress_policy"] == 0, "%d prime_egress_policy in state", count["prime_egress_policy"])
		rep.Check("no agent command in state", agents == 0, "%d agent commands in state", agents)
		rep.Check("every sandbox and setup command in state", count["prime_sandbox"] == n && count["prime_sandbox_command"]-agents == n,
			"%d sandboxes, %d setup commands, N = %d", count["prime_sandbox"], count["prime_sandbox_command"]-agents, n)
	}

	evs, err := r.Mock.Events(ctx, 0)
	if rep.CheckErr("read /_mock/events", err) {
		applied, puts, agentRuns, setupRuns := 0, map[string]bool{}, 0, 0
		agentCmds, setupCmds := map[string]bool{}, map[string]bool{}
		for i := 0; i < n; i++ {
			agentCmds[AgentCommand(i)] = true
			setupCmds[SetupCommand(i)] = true
		}
		for _, e := range evs {
			switch e.Type {
			case primemock.EventPolicyApplied:
				applied++
			case primemock.EventPolicyPut:
				puts[e.SandboxID] = true
			case primemock.EventCommandExecuted:
				if agentCmds[e.Command] {
					agentRuns++
				}
				if setupCmds[e.Command] {
					setupRuns++
				}
			}
		}
		rep.Check("every policy was requested (PUT accepted) but none applied", len(puts) == n && applied == 0,
			"%d sandboxes got a PUT, %d policy_applied events", len(puts), applied)
		rep.Check("no agent command executed", agentRuns == 0, "%d command_executed events for agent commands", agentRuns)
		rep.Check("every setup command executed (they precede the policy)", setupRuns == n, "%d setup executions, N = %d", setupRuns, n)
		live := LiveSandboxes(evs)
		var notMinus1 []string
		for id := range live {
			if re, err := r.Mock.Reachable(ctx, id, "example.com"); err != nil || re.AppliedGeneration != -1 {
				notMinus1 = append(notMinus1, id)
			}
		}
		rep.Check("no applied generation on any sandbox (applied_generation = -1)", len(notMinus1) == 0 && len(live) == n,
			"%d live sandboxes, %d with an applied generation", len(live), len(notMinus1))
	}

	r.logf("never-apply run: terraform destroy")
	r.destroyAndCheck(ctx, ws, rep, 0)
	r.faultNote(ctx, rep)
	return rep
}

// KillRun starts an apply, interrupts it once some sandboxes exist but not
// all are RUNNING — SIGKILL of terraform and its provider processes, or a
// graceful SIGINT to terraform — and checks that the next apply converges:
// the mock's live sandboxes are exactly the state's. With SIGKILL,
// sandboxes created but not yet persisted to the state file are leaked;
// they are counted, reported, and (unless strictLeaks) not a failure, then
// deleted through the API. With SIGINT no leak is tolerated.
func (r *Runner) KillRun(ctx context.Context, n int, sig syscall.Signal, strictLeaks bool) *Report {
	name := map[syscall.Signal]string{syscall.SIGKILL: "SIGKILL", syscall.SIGINT: "SIGINT"}[sig]
	rep := &Report{Name: fmt.Sprintf("%s mid-apply, then apply again: N=%d, -parallelism=%d", name, n, r.Parallelism)}
	start := time.Now()
	defer func() { rep.Duration = time.Since(start) }()
	ws, err := r.prepare(ctx, "kill-"+strings.ToLower(name), primemock.ConfigPatch{}, Fleet{N: n})
	if !rep.CheckErr("prepare workspace and mock", err) {
		return rep
	}
	r.knobsNote(ctx, rep)

	r.logf("%s run: terraform apply (N=%d), interrupted", name, n)
	run, err := ws.Start(r.tfArgs("apply")...)
	if !rep.CheckErr("start terraform apply", err) {
		return rep
	}
	threshold := max(1, n/4)
	var created, running int
	fired := false
	deadline := time.Now().Add(2 * time.Minute)
	for !fired && time.Now().Before(deadline) {
		select {
		case <-run.Done():
			deadline = time.Time{}
			continue
		case <-time.After(20 * time.Millisecond):
		}
		evs, err := r.Mock.Events(ctx, 0)
		if err != nil {
			continue
		}
		created, running = 0, 0
		for _, e := range evs {
			switch e.Type {
			case primemock.EventSandboxCreated:
				created++
			case primemock.EventSandboxRunning:
				running++
			}
		}
		if created >= threshold && running < created {
			fired = true
		}
	}
	if !rep.Check(fmt.Sprintf("%s sent while sandboxes were being created", name), fired,
		"created %d, RUNNING %d when signalled (threshold: ≥ %d created, not all RUNNING)", created, running, threshold) {
		run.KillAll()
		run.Wait()
		r.cleanup(ctx, ws, rep)
		return rep
	}
	signalled := time.Now()
	var killed []int
	if sig == syscall.SIGKILL {
		killed = run.KillAll()
	} else {
		_ = run.Signal(sig)
	}
	var res tfcli.Result
	select {
	case <-run.Done():
		res = run.Wait()
	case <-time.After(3 * time.Minute):
		run.KillAll()
		res = run.Wait()
		rep.Check("interrupted terraform exits within 3 minutes", false, "it did not; killed")
	}
	if sig == syscall.SIGKILL {
		rep.Note("killed pids %v (terraform and its provider processes) at %s into the apply: %d sandboxes created, %d RUNNING",
			killed, signalled.Sub(start).Round(time.Millisecond), created, running)
	} else {
		rep.Note("SIGINT at %s into the apply (%d created, %d RUNNING); terraform exited %d after %s",
			signalled.Sub(start).Round(time.Millisecond), created, running, res.ExitCode, time.Since(signalled).Round(time.Millisecond))
		// What the provider reported for the interrupted creates.
		out := strings.Join(strings.Fields(res.Output), " ")
		rep.Note("interrupted apply reported: %d \"Cannot create sandbox\" (%d of them \"context canceled (last error: …)\", i.e. "+
			"interrupted while retrying a create), %d \"Sandbox did not start\" (%d worded as a create timeout)",
			strings.Count(out, "Error: Cannot create sandbox"), strings.Count(out, "context canceled (last error:"),
			strings.Count(out, "Error: Sandbox did not start"), strings.Count(out, "was not RUNNING within the create timeout"))
	}
	// Let in-flight requests the killed client can no longer see land.
	time.Sleep(500 * time.Millisecond)

	lock := filepath.Join(ws.Dir, ".terraform.tfstate.lock.info")
	if _, err := os.Stat(lock); err == nil {
		_ = os.Remove(lock)
		rep.Note("removed the stale %s left by the killed terraform (the lock itself is an fcntl lock the kernel released)", filepath.Base(lock))
	} else {
		rep.Note("no stale .terraform.tfstate.lock.info was left; the next apply ran with locking on")
	}

	state, _ := ws.State(ctx)
	live, _ := r.liveIDs(ctx)
	stateIDs := setOf(tfcli.IDsOfType(state, "prime_sandbox"))
	tainted := 0
	for _, s := range state {
		if s.Type == "prime_sandbox" && s.Tainted {
			tainted++
		}
	}
	lostAtKill := minus(live, stateIDs)
	rep.Note("after the %s: %d sandboxes live on the mock, %d in the state file (%d tainted), %d live but not in state",
		name, len(live), len(stateIDs), tainted, len(lostAtKill))

	r.logf("%s run: terraform apply again", name)
	again := ws.Run(ctx, r.tfArgs("apply")...)
	if !rep.Check("the next terraform apply succeeds", again.OK(), "%s", again.Describe()) {
		rep.Note("apply output: %s", again.Tail(3000))
		r.cleanup(ctx, ws, rep)
		return rep
	}
	state, err = ws.State(ctx)
	if !rep.CheckErr("read state", err) {
		r.cleanup(ctx, ws, rep)
		return rep
	}
	live, _ = r.liveIDs(ctx)
	stateIDs = setOf(tfcli.IDsOfType(state, "prime_sandbox"))
	leaked, missing := minus(live, stateIDs), minus(stateIDs, live)
	rep.Check("every sandbox in state is live, N in all", len(missing) == 0 && len(stateIDs) == n,
		"%d sandboxes in state, N = %d; in state but not live: [%s]", len(stateIDs), n, short(missing))
	leakDetail := fmt.Sprintf("%d live sandboxes not in state: [%s]", len(leaked), short(leaked))
	if sig == syscall.SIGKILL && !strictLeaks {
		if len(leaked) > 0 {
			rep.Note("LEAK after SIGKILL (reported, not a failure without -strict-kill): %s. A sandbox's ID reaches "+
				"Terraform only when the provider's create call returns (at RUNNING, or early on a graceful interrupt), and "+
				"Terraform persists state at the end of the apply, on SIGINT, or every 20 s by default; under SIGKILL "+
				"every create still in flight, and any finished since the last snapshot, is lost to the next apply.", leakDetail)
		} else {
			rep.Note("no sandbox leaked after SIGKILL")
		}
	} else {
		rep.Check("no sandbox leaked (live sandboxes = state's sandboxes)", len(leaked) == 0, "%s", leakDetail)
	}
	plan := ws.Run(ctx, r.tfArgs("plan", "-detailed-exitcode")...)
	if !rep.Check("a further terraform plan -detailed-exitcode is empty", plan.OK(), "%s", plan.Describe()) {
		rep.Note("plan output: %s", plan.Tail(3000))
	}
	r.destroyAndCheck(ctx, ws, rep, len(leaked))
	if len(leaked) > 0 {
		deleted := r.deleteLive(ctx, rep)
		rep.Note("deleted %d leaked sandboxes through the API after the destroy", deleted)
	}
	r.faultNote(ctx, rep)
	return rep
}

// ErrFailed is returned by callers that summarise reports.
var ErrFailed = errors.New("soak failed")
