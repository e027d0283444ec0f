package main

// What a run's event log says: readiness, locks and their timing, per member and in total.

import (
	"fmt"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// refreshRuns is how many refresh-only plans a run makes; the median one is
// reported.
const refreshRuns = 3

type runFigures struct {
	runSpec
	apply, refresh, plan      phase
	destroy                   phase
	planEmpty, refreshEmpty   bool
	refreshWalls              []time.Duration // every refresh run, in order (f.refresh is the median)
	W, limit, chain           time.Duration
	Wd, destroyLimit          time.Duration
	span                      time.Duration // first sandbox_created → last policy_observed
	beforeFirst, afterLast    time.Duration
	obs                       durStats // policy_applied → policy_observed
	runToPut                  durStats // sandbox_running → policy_put
	putToObs                  durStats // policy_put → policy_observed
	runToReady                durStats // sandbox_running → gateway_ready (the mock's lag)
	readyToProbe              durStats // gateway_ready → the probe that ran
	runToSeen                 durStats // sandbox_running → running_observed (the status rounds)
	seenToProbe               durStats // running_observed → the probe that ran
	lastProbeToPut            time.Duration
	createdSpread             time.Duration
	liveAfterApply, appliedN  int
	liveAfterDestroy          int
	destroyObs                durStats
	trace                     string // -trace breakdown of the apply
	refreshRes, refreshMember float64
	// stateBytes is the size of terraform.tfstate after the apply.
	stateBytes int64
	// profiles summarise the provider's CPU profiles by phase (apply,
	// refresh, plan, destroy) in the profiled run.
	profiles map[string]cpuProfile
}

// eventTimes is what the analysis needs from a phase's mock events.
type eventTimes struct {
	created, running, ready, probed map[string]time.Time
	seenRunning                     map[string]time.Time
	firstPut                        map[string]time.Time
	obs, runToPut, putToObs         durStats
	firstCreated, lastCreated       time.Time
	lastObs, lastProbe, firstPutAt  time.Time
	appliedN                        int
}

// gatewayProbe is the command the readiness probes run (the SDK's).
const gatewayProbe = "echo 'sandbox ready'"

func analyse(evs []primemock.Event) eventTimes {
	type key struct {
		id  string
		gen int64
	}
	t := eventTimes{created: map[string]time.Time{}, running: map[string]time.Time{}, ready: map[string]time.Time{},
		probed: map[string]time.Time{}, firstPut: map[string]time.Time{}, seenRunning: map[string]time.Time{}}
	put, applied, observed := map[key]time.Time{}, map[key]time.Time{}, map[key]time.Time{}
	for _, e := range evs {
		k := key{e.SandboxID, e.Generation}
		switch e.Type {
		case primemock.EventSandboxCreated:
			t.created[e.SandboxID] = e.Time
			if t.firstCreated.IsZero() || e.Time.Before(t.firstCreated) {
				t.firstCreated = e.Time
			}
			if e.Time.After(t.lastCreated) {
				t.lastCreated = e.Time
			}
		case primemock.EventSandboxRunning:
			t.running[e.SandboxID] = e.Time
		case primemock.EventGatewayReady:
			t.ready[e.SandboxID] = e.Time
		case primemock.EventRunningObserved:
			t.seenRunning[e.SandboxID] = e.Time
		case primemock.EventCommandExecuted:
			if e.Command == gatewayProbe && e.ExitCode == 0 {
				if _, ok := t.probed[e.SandboxID]; !ok {
					t.probed[e.SandboxID] = e.Time
				}
				if e.Time.After(t.lastProbe) {
					t.lastProbe = e.Time
				}
			}
		case primemock.EventPolicyPut:
			put[k] = e.Time
			if _, ok := t.firstPut[e.SandboxID]; !ok {
				t.firstPut[e.SandboxID] = e.Time
			}
			if t.firstPutAt.IsZero() || e.Time.Before(t.firstPutAt) {
				t.firstPutAt = e.Time
			}
		case primemock.EventPolicyApplied:
			applied[k] = e.Time
			if e.Generation >= 1 {
				t.appliedN++
			}
		case primemock.EventPolicyObserved:
			observed[k] = e.Time
		}
	}
	var o, rp, po []time.Duration
	missing := 0
	for k, pt := range put {
		at, ok := applied[k]
		if !ok {
			continue // superseded or never applied
		}
		ot, ok := observed[k]
		if !ok {
			missing++
			continue
		}
		o = append(o, ot.Sub(at))
		po = append(po, ot.Sub(pt))
		if ot.After(t.lastObs) {
			t.lastObs = ot
		}
	}
	for id, rt := range t.running {
		if pt, ok := t.firstPut[id]; ok {
			rp = append(rp, pt.Sub(rt))
		}
	}
	t.obs, t.runToPut, t.putToObs = newDurStats(o, missing), newDurStats(rp, 0), newDurStats(po, 0)
	return t
}

// compute derives the figures from the phases.
func (f *runFigures) compute(c benchConfig) {
	f.W = chainW(c)
	f.chain = f.W
	f.limit = instanceLimit(c, f.n, f.p)
	f.Wd = destroyW(c)
	f.destroyLimit = max(time.Duration(float64(f.n)*float64(f.Wd)/float64(f.p)), f.Wd)
	if f.path == pathFleet {
		// One resource creates and waits for every member at once:
		// Terraform's parallelism does not bound it.
		f.limit, f.destroyLimit, f.chain = fleetLimit(c, f.n), f.Wd, fleetChain(c)
	}
	a := analyse(f.apply.events)
	f.obs, f.runToPut, f.putToObs, f.appliedN = a.obs, a.runToPut, a.putToObs, a.appliedN
	if !a.firstCreated.IsZero() && !a.lastObs.IsZero() {
		f.span = a.lastObs.Sub(a.firstCreated)
		f.beforeFirst = a.firstCreated.Sub(f.apply.res.Start)
		f.afterLast = f.apply.res.Start.Add(f.apply.res.Duration).Sub(a.lastObs)
		f.createdSpread = a.lastCreated.Sub(a.firstCreated)
	}
	f.runToReady, f.readyToProbe = runningThenProbe(a, a.ready)
	f.runToSeen, f.seenToProbe = runningThenProbe(a, a.seenRunning)
	if !a.lastProbe.IsZero() && !a.firstPutAt.IsZero() {
		f.lastProbeToPut = a.firstPutAt.Sub(a.lastProbe)
	}
	f.destroyObs = analyse(f.destroy.events).obs
	f.liveAfterApply = f.apply.stats.LiveSandboxes
	f.liveAfterDestroy = f.destroy.stats.LiveSandboxes
	resources := 2 * f.n
	if f.path == pathFleet {
		resources = 2
	}
	f.refreshRes = float64(f.refresh.apiTotal()) / float64(resources)
	f.refreshMember = float64(f.refresh.apiTotal()) / float64(f.n)
}

const statusRoute = "POST /api/v1/sandbox/status:batchGet"

func perMember(ph phase, route string, n int) float64 {
	if route == "" {
		return float64(ph.apiTotal()) / float64(n)
	}
	return float64(ph.requests[route]) / float64(n)
}

func (f *runFigures) ratio() float64 { return f.apply.res.Duration.Seconds() / f.limit.Seconds() }

// runningThenProbe is, for each sandbox that reached a mark (gateway
// ready, seen RUNNING), RUNNING → the mark and the mark → its probe.
func runningThenProbe(a eventTimes, mark map[string]time.Time) (toMark, markToProbe durStats) {
	var rm, mp []time.Duration
	for id, rt := range a.running {
		if mt, ok := mark[id]; ok {
			rm = append(rm, mt.Sub(rt))
			if pt, ok := a.probed[id]; ok {
				mp = append(mp, pt.Sub(mt))
			}
		}
	}
	return newDurStats(rm, 0), newDurStats(mp, 0)
}

func printRun(f *runFigures) {
	fmt.Printf("apply    %s wall; limit %s → ratio %.2f\n", secs(f.apply.res.Duration), secs(f.limit), f.ratio())
	fmt.Printf("         API span (first sandbox created → last policy seen applied) %s; before it %s, after it %s (Terraform plan/graph/state)\n",
		secs(f.span), secs(f.beforeFirst), secs(f.afterLast))
	fmt.Printf("         per member: %.2f API requests (%.2f status), %.2f gateway requests; peak in flight %d\n",
		perMember(f.apply, "", f.n), perMember(f.apply, statusRoute, f.n), float64(f.apply.gatewayTotal())/float64(f.n), f.apply.stats.PeakInFlight)
	fmt.Printf("         policy applied → seen: %s\n", f.obs)
	fmt.Printf("         gateway ready → probe answered: %s; sandbox RUNNING → policy PUT: %s\n", f.readyToProbe, f.runToPut)
	fmt.Printf("         sandbox RUNNING → seen RUNNING: %s; seen RUNNING → probe answered: %s\n", f.runToSeen, f.seenToProbe)
	fmt.Printf("         live sandboxes %d, policies applied %d, provider peak RSS %s (%d provider processes); CPU: %s\n",
		f.liveAfterApply, f.appliedN, kb(f.apply.maxRSS()), len(f.apply.rss), f.apply.cpuNote())
	fmt.Printf("refresh  %s (plan -refresh-only -detailed-exitcode: exit %d), %d API requests; plan %s (exit %d); provider peak RSS %s\n",
		secs(f.refresh.res.Duration), f.refresh.res.ExitCode, f.refresh.apiTotal(), secs(f.plan.res.Duration), f.plan.res.ExitCode, kb(f.refresh.maxRSS()))
	fmt.Printf("destroy  %s wall; limit %s; API requests/member %.2f; live after %d\n",
		secs(f.destroy.res.Duration), secs(f.destroyLimit), perMember(f.destroy, "", f.n), f.liveAfterDestroy)
}
