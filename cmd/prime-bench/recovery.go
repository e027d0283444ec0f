package main

// The recovery runs: what recovery after a lost runner costs (the labels
// and the lookup before a fleet's first create, the claim in each job's
// start command), at every RECOVERY_N, each run against its own mock:
//
//   - a normal apply of the fleet path's job (the fleet and its policy)
//     with platform_recovery off and on: the requests and time recovery
//     adds when nothing was lost;
//   - an apply after a lost runner: the same apply SIGKILLed (Terraform and
//     its provider) once half the members exist, then applied again from a
//     new HOME (an empty cache directory, so no journal), off and on: its
//     time and requests, what it adopted, what leaked;
//   - background agents after a lost runner: a fleet whose agent is a
//     background job, SIGKILLed once every agent started, applied again
//     from a new HOME: every agent must start once, and the apply waits
//     only for what is left of the jobs.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
	"github.com/primeintellect/terraform-provider-prime/internal/soak"
	"github.com/primeintellect/terraform-provider-prime/internal/tfcli"
)

// Routes the recovery figures count, as the mock's stats name them.
const (
	createRoute = "POST /api/v1/sandbox"
	listRoute   = "GET /api/v1/sandbox"
)

// recoveryOff is the provider setting of the "off" runs.
const recoveryOff = "platform_recovery = false"

// recoveryFigures are one N's recovery runs; index 0 is off, 1 on.
type recoveryFigures struct {
	n      int
	normal [2]phase
	lost   [2]*lostRunner
	jobs   *lostJobs
}

// lostRunner is an apply after a lost runner.
type lostRunner struct {
	// killedAt counts the sandboxes the platform had made when the kill
	// landed.
	killedAt int
	// lookGap is the time from the kill to the recovering apply's first
	// list request (its lookup; 0 with recovery off): how long a create
	// still in flight at the loss had to reach the platform before the new
	// runner looked. maxCreate is the longest create round trip of the lost
	// apply: the longest any create was in flight.
	lookGap, maxCreate time.Duration
	recover            phase
	// created counts the sandboxes made in all (both applies), live those
	// running after the recovering apply, left those running after its
	// destroy.
	created, live, left int
	planEmpty           bool
}

// adopted is how many sandboxes the recovering apply took over instead
// of creating: the members it did not create.
func (l *lostRunner) adopted(n int) int { return n - l.recover.requests[createRoute] }

// lostJobs is the background-agent run after a lost runner.
type lostJobs struct {
	jobWall time.Duration
	// killAfter is the time from the first agent start to the kill.
	killAfter time.Duration
	recover   phase
	// starts counts the agents started in all; results those the state
	// holds, with exit code 0, after the recovering apply.
	starts, results int
}

func runRecovery(c benchConfig, rep *report) error {
	for _, n := range c.recoveryNs {
		f := &recoveryFigures{n: n}
		for i, on := range []bool{false, true} {
			fmt.Printf("\n=== recovery N=%d, platform_recovery %t: a normal apply\n", n, on)
			ph, err := recoveryNormal(c, n, on)
			if err != nil {
				return fmt.Errorf("recovery N=%d normal apply (on %t): %w (work directory %s)", n, on, err, c.workdir)
			}
			f.normal[i] = ph
			fmt.Printf("\n=== recovery N=%d, platform_recovery %t: killed mid-create, then applied on a new runner\n", n, on)
			l, err := recoveryLost(c, n, on)
			if err != nil {
				return fmt.Errorf("recovery N=%d lost runner (on %t): %w (work directory %s)", n, on, err, c.workdir)
			}
			f.lost[i] = l
		}
		fmt.Printf("\n=== recovery N=%d: background agents, killed while they run, then applied on a new runner\n", n)
		j, err := recoveryJobs(c, n)
		if err != nil {
			return fmt.Errorf("recovery N=%d jobs: %w (work directory %s)", n, err, c.workdir)
		}
		f.jobs = j
		printRecovery(f)
		rep.recovery = append(rep.recovery, f)
	}
	return nil
}

// recoveryConfig is the fleet path's job, with recovery on or off.
func recoveryConfig(c benchConfig, base string, n int, on bool) string {
	extra := c.providerExtra
	if !on {
		extra = strings.TrimSpace(extra + "\n" + recoveryOff)
	}
	return soak.SandboxFleet{N: n, BaseURL: base, ProviderExtra: extra, Prefix: "bench"}.HCL()
}

// recoveryEnv is a run environment whose API requests go through the
// recording proxy (every run of the section, so they compare alike).
func recoveryEnv(c benchConfig, name string, mockFlags ...string) (*runEnv, *tracer, error) {
	env, err := newRunEnv(c, name, mockFlags...)
	if err != nil {
		return nil, nil, err
	}
	tr, err := startTracer(env.mock.URL, true)
	if err != nil {
		env.Close()
		return nil, nil, err
	}
	return env, tr, nil
}

func recoveryNormal(c benchConfig, n int, on bool) (phase, error) {
	ctx := context.Background()
	env, tr, err := recoveryEnv(c, fmt.Sprintf("recovery-normal-n%d-%t", n, on))
	if err != nil {
		return phase{}, err
	}
	defer env.Close()
	defer tr.Close()
	if err := env.ws.WriteConfig(recoveryConfig(c, tr.URL, n, on)); err != nil {
		return phase{}, err
	}
	if err := env.warmUp(ctx); err != nil {
		return phase{}, err
	}
	ph, err := env.run(ctx, "apply", "apply", "-auto-approve", "-input=false")
	if err != nil {
		return phase{}, err
	}
	if !ph.res.OK() {
		fmt.Println(ph.res.Tail(4000))
		return phase{}, fmt.Errorf("apply failed: %s", ph.res.Describe())
	}
	env.ws.Run(ctx, "destroy", "-auto-approve", "-input=false")
	return ph, nil
}

func recoveryLost(c benchConfig, n int, on bool) (*lostRunner, error) {
	ctx := context.Background()
	env, tr, err := recoveryEnv(c, fmt.Sprintf("recovery-lost-n%d-%t", n, on))
	if err != nil {
		return nil, err
	}
	defer env.Close()
	defer tr.Close()
	if err := env.ws.WriteConfig(recoveryConfig(c, tr.URL, n, on)); err != nil {
		return nil, err
	}
	if err := env.warmUp(ctx); err != nil {
		return nil, err
	}
	l := &lostRunner{}
	run, err := env.ws.Start("apply", "-auto-approve", "-input=false")
	if err != nil {
		return nil, err
	}
	started := time.Now()
	killed, err := killWhen(ctx, env.mock, run, func(st primemock.Stats, _ []primemock.Event) bool {
		return st.SandboxesCreated >= n/2
	})
	if err != nil {
		return nil, err
	}
	for _, r := range tr.since(started) {
		if r.Method+" "+r.Path == createRoute && r.Start.Before(killed) {
			l.maxCreate = max(l.maxCreate, r.End.Sub(r.Start))
		}
	}
	st, err := env.mock.Stats(ctx)
	if err != nil {
		return nil, err
	}
	l.killedAt = st.SandboxesCreated
	if err := newRunner(env.ws); err != nil {
		return nil, err
	}
	if l.recover, err = env.run(ctx, "recover", "apply", "-auto-approve", "-input=false"); err != nil {
		return nil, err
	}
	for _, r := range tr.since(killed) {
		if r.Method+" "+r.Path == listRoute {
			l.lookGap = r.Start.Sub(killed)
			break
		}
	}
	if !l.recover.res.OK() {
		fmt.Println(l.recover.res.Tail(4000))
		return nil, fmt.Errorf("the recovering apply failed: %s", l.recover.res.Describe())
	}
	l.created, l.live = l.recover.stats.SandboxesCreated, l.recover.stats.LiveSandboxes
	plan := env.ws.Run(ctx, "plan", "-detailed-exitcode", "-input=false")
	l.planEmpty = plan.OK()
	if res := env.ws.Run(ctx, "destroy", "-auto-approve", "-input=false"); !res.OK() {
		return nil, fmt.Errorf("destroy failed: %s", res.Describe())
	}
	if st, err = env.mock.Stats(ctx); err != nil {
		return nil, err
	}
	l.left = st.LiveSandboxes
	return l, nil
}

func recoveryJobs(c benchConfig, n int) (*lostJobs, error) {
	ctx := context.Background()
	env, tr, err := recoveryEnv(c, fmt.Sprintf("recovery-jobs-n%d", n), "-sleep-scale", strconv.FormatFloat(c.jobScale, 'g', -1, 64))
	if err != nil {
		return nil, err
	}
	defer env.Close()
	defer tr.Close()
	tf := soak.TaskFleet{N: n, BaseURL: tr.URL, ProviderExtra: c.providerExtra, Prefix: "bench",
		Command: jobCommand(c.jobSeconds), Background: true, MaxConcurrency: n}
	if err := env.ws.WriteConfig(tf.HCL()); err != nil {
		return nil, err
	}
	if err := env.warmUp(ctx); err != nil {
		return nil, err
	}
	j := &lostJobs{jobWall: time.Duration(float64(c.jobSeconds) * c.jobScale * float64(time.Second))}
	run, err := env.ws.Start("apply", "-auto-approve", "-input=false")
	if err != nil {
		return nil, err
	}
	var firstStart time.Time
	if _, err := killWhen(ctx, env.mock, run, func(_ primemock.Stats, evs []primemock.Event) bool {
		started := 0
		for _, e := range evs {
			if e.Type == primemock.EventCommandStarted && e.Transport == "background" && jobExitFile.MatchString(e.Command) {
				if firstStart.IsZero() {
					firstStart = e.Time
				}
				started++
			}
		}
		return started >= n
	}); err != nil {
		return nil, err
	}
	j.killAfter = time.Since(firstStart)
	if err := newRunner(env.ws); err != nil {
		return nil, err
	}
	if j.recover, err = env.run(ctx, "recover", "apply", "-auto-approve", "-input=false"); err != nil {
		return nil, err
	}
	if !j.recover.res.OK() {
		fmt.Println(j.recover.res.Tail(4000))
		return nil, fmt.Errorf("the recovering apply failed: %s", j.recover.res.Describe())
	}
	evs, err := env.mock.Events(ctx, 0)
	if err != nil {
		return nil, err
	}
	j.starts = len(jobEventsOf(evs).starts)
	state, err := env.ws.State(ctx)
	if err != nil {
		return nil, err
	}
	j.results = agentResults(state)
	env.ws.Run(ctx, "destroy", "-auto-approve", "-input=false")
	return j, nil
}

// killWhen SIGKILLs a running Terraform (and its provider processes) as
// soon as done holds for the mock's counters and events, and returns when
// the kill landed, once they are gone. A run that ends first, or two
// minutes without done, is an error.
func killWhen(ctx context.Context, mock *soak.Mock, run *tfcli.Running, done func(primemock.Stats, []primemock.Event) bool) (time.Time, error) {
	deadline := time.Now().Add(2 * time.Minute)
	var evs []primemock.Event
	var seq int64
	for time.Now().Before(deadline) {
		select {
		case <-run.Done():
			return time.Time{}, fmt.Errorf("the apply ended before the kill:\n%s", run.Output())
		case <-time.After(20 * time.Millisecond):
		}
		st, err := mock.Stats(ctx)
		if err != nil {
			continue
		}
		more, err := mock.Events(ctx, seq)
		if err != nil {
			continue
		}
		for _, e := range more {
			seq = max(seq, e.Seq)
		}
		evs = append(evs, more...)
		if done(st, evs) {
			at := time.Now()
			run.KillAll()
			<-run.Done()
			fmt.Printf("killed   terraform and its provider with %d sandboxes made\n", st.SandboxesCreated)
			return at, nil
		}
	}
	run.KillAll()
	<-run.Done()
	return time.Time{}, fmt.Errorf("the kill condition never held:\n%s", run.Output())
}

// newRunner gives a workspace a new HOME, as a new CI runner has: an empty
// cache directory, so none of the provider's journals.
func newRunner(ws *tfcli.Workspace) error {
	home, err := os.MkdirTemp(ws.Dir, ".home-")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(home, ".cache"), 0o700); err != nil {
		return err
	}
	env := make([]string, 0, len(ws.Env))
	for _, kv := range ws.Env {
		if k, _, _ := strings.Cut(kv, "="); k != "HOME" && k != "XDG_CACHE_HOME" {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+home, "XDG_CACHE_HOME="+filepath.Join(home, ".cache"))
	ws.Env = env
	ws.Home = home
	return nil
}

func printRecovery(f *recoveryFigures) {
	fmt.Printf("\nrecovery N=%d: normal apply off %s (%d API requests), on %s (%d, %d of them lists)\n", f.n,
		secs(f.normal[0].res.Duration), f.normal[0].apiTotal(), secs(f.normal[1].res.Duration), f.normal[1].apiTotal(),
		f.normal[1].requests[listRoute])
	for i, l := range f.lost {
		fmt.Printf("  after a lost runner (recovery %t): killed at %d made; recovering apply %s, %d API requests, "+
			"%d created in all, %d live (%d leaked), %d left after destroy\n", i == 1, l.killedAt, secs(l.recover.res.Duration),
			l.recover.apiTotal(), l.created, l.live, l.live-f.n, l.left)
	}
	fmt.Printf("  background agents: killed %s after the first start; recovering apply %s; %d starts for %d members; %d results\n",
		secs(f.jobs.killAfter), secs(f.jobs.recover.res.Duration), f.jobs.starts, f.n, f.jobs.results)
}
