package soak

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
	"github.com/primeintellect/terraform-provider-prime/internal/tfcli"
)

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
