package prime

// What waits learn in this process: latencyEstimate, how long recent waits
// of one kind took (sandbox boots, gateway registrations, data-plane
// applies of egress policies), and cohort waits (cohortWait), where a few
// scouts ask early and the rest follow the expected time. The boot wait
// (ready.go) and egress_wait.go use them.

import (
	"slices"
	"sync"
	"time"
)

// latencyEstimate remembers how long recent waits of one kind took in this
// process. A fleet's sandboxes and policies go through the same platform, so
// after a few of them every other wait can check close to the usual time
// instead of backing off past it.
type latencyEstimate struct {
	mu sync.Mutex

	upper     []time.Duration // ring of the last upperSamples upper bounds
	nextUpper int
	scouts    int // cohort waits scouting now
	joined    int // cohort waits begun
	lastScout int // joined when the last scout began
	// soonerCh is closed when the expected time becomes known or drops,
	// which can make a sleeping follower due now (see sooner).
	soonerCh chan struct{}
}

// Cohort waits. Waits that start together before anything is known — a
// fleet's boots, created at once, or its policies, PUT at once — each
// polling on its own backoff either floods the API (a fine cadence times N)
// or sees its event late (a doubling backoff overshoots by up to the time
// already waited: a policy applied after 500 ms was seen at 1.2 s). A cohort
// wait shares the work instead:
//
//   - while nothing is known, at most cohortParams.scouts waits at a time are
//     scouts: they check on a fine cadence (first, then every
//     max(minStep, elapsed/20)), so a few concurrent waits — three policies of
//     a demo — each see their event within a step;
//   - the other waits are followers: they make no request until some wait has
//     seen its event and recorded when, then check once at that time after
//     their own start (their own slow safety backoff covers scouts that never
//     finish). It sleeps until its check is due or until what is known
//     changes so that it may be due sooner (Wake), at most a hop, and asks
//     the API only when due;
//   - once something is known, every wait is a follower but one in
//     cohortParams.every, which scouts from half the expected time, so a
//     platform that became faster is noticed.
//
// What a finished wait teaches is its upper bound — the elapsed time that
// showed the event — when its checks bracketed the event (a scout's, or a
// follower's that missed first): the expected time is the median of the last
// few, so a follower's single check comes just after the event. The caller
// says which time: a boot wait counts from its create's answer and gives
// the arrival of the status answer that said RUNNING; a policy wait gives
// the send time of the request that saw the policy applied (its start, the
// PUT's answer, is precise, and under load an answer took 50 ms that every
// follower would otherwise wait on top); a gateway wait the answer's time
// (see waitGateway).
type cohortParams struct {
	// first is a scout's first check without an estimate: a fast event is
	// never waited on.
	first time.Duration
	// minStep is the finest interval between a wait's checks.
	minStep time.Duration
	// max caps the interval between checks once the event is late.
	max time.Duration
	// hop is the longest a follower sleeps without looking again (a safety
	// net: Wake wakes it when what is known changes).
	hop time.Duration
	// safety paces a follower's own checks while nothing is known.
	safety Backoff
	// scouts is how many waits scout at once while nothing is known.
	scouts int
	// every: with an estimate, one wait in every scouts.
	every int
}

// cohortHop is the longest a follower sleeps without looking again. Wake
// ends its sleep when what is known changes, so this is only a safety net,
// kept short enough that a change nothing signals still costs little; at
// a follower's old 25-50 ms a thousand of them woke ~40 000 times a second.
const cohortHop = 250 * time.Millisecond

// upperSamples is how many upper bounds the expected time is the
// median of: few, so the estimate follows a platform that changed.
const upperSamples = 5

// joinCohort starts a cohort wait at start and decides its role.
func (a *latencyEstimate) joinCohort(p cohortParams, start time.Time) *cohortWait {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.joined++
	_, known := a.expectedLocked()
	scout := (!known && a.scouts < p.scouts) || (known && a.joined-a.lastScout >= p.every)
	if scout {
		a.scouts++
		a.lastScout = a.joined
	}
	return &cohortWait{est: a, p: p, start: start, now: time.Now, scout: scout}
}

// expected is the median of the recent upper bounds.
func (a *latencyEstimate) expected() (time.Duration, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.expectedLocked()
}

func (a *latencyEstimate) expectedLocked() (time.Duration, bool) {
	n := len(a.upper)
	if n == 0 {
		return 0, false
	}
	var s [upperSamples]time.Duration
	copy(s[:], a.upper)
	slices.Sort(s[:n])
	return s[n/2], true
}

// recordUpper records an upper bound (a.mu held). When it makes the
// expected time known or earlier, sleeping followers are woken: their one
// check may be due now. A later expected time wakes nobody.
func (a *latencyEstimate) recordUpper(d time.Duration) {
	before, known := a.expectedLocked()
	if len(a.upper) < upperSamples {
		a.upper = append(a.upper, d)
	} else {
		a.upper[a.nextUpper] = d
		a.nextUpper = (a.nextUpper + 1) % upperSamples
	}
	if after, _ := a.expectedLocked(); (!known || after < before) && a.soonerCh != nil {
		close(a.soonerCh)
		a.soonerCh = nil
	}
}

// sooner returns a channel closed the next time the expected time becomes
// known or drops.
func (a *latencyEstimate) sooner() <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.soonerCh == nil {
		a.soonerCh = make(chan struct{})
	}
	return a.soonerCh
}

// cohortWait is one wait of a cohort and its Schedule. Its methods are
// called from the one goroutine that waits (Poll's).
type cohortWait struct {
	est   *latencyEstimate
	p     cohortParams
	start time.Time
	now   func() time.Time
	scout bool

	checks   int           // requests made
	last     time.Duration // elapsed when the last request was sent
	lastMiss time.Duration // elapsed when the last miss was sent (0: none)
	left     bool
}

func (w *cohortWait) elapsed() time.Duration { return w.now().Sub(w.start) }

// next is the elapsed time at which the next request is due.
func (w *cohortWait) next() time.Duration {
	expected, known := w.est.expected()
	// Beyond the expected window a wait checks every 10 % of the time
	// waited; a scout without an estimate every 5 %: its upper bound is
	// what every follower's one check waits for.
	grow := func(t time.Duration) time.Duration { return min(w.p.max, max(w.p.minStep, t/10)) }
	if w.scout && !known {
		grow = func(t time.Duration) time.Duration { return min(w.p.max, max(w.p.minStep, t/20)) }
	}
	if w.scout {
		switch {
		case w.checks == 0 && known && expected/2 > w.p.first:
			return expected / 2
		case w.checks == 0:
			return w.p.first
		case known && w.last < expected*9/10:
			return max(w.last+w.p.minStep, expected*9/10)
		case known && w.last < expected*15/10:
			return w.last + max(w.p.minStep, expected/20)
		}
		return w.last + grow(w.last)
	}
	if !known {
		due := w.p.safety.Delay(w.checks)
		if w.checks > 0 {
			due += w.last
		}
		return due
	}
	switch {
	case w.last < expected:
		// Nothing checked since the event was due (at most an early safety
		// check): the one check.
		return expected
	case w.last < expected*15/10:
		return w.last + max(w.p.minStep, expected/20)
	}
	return w.last + grow(w.last)
}

// Delay is the wait before the next round: until the next request is due,
// but at most a hop for a follower, which re-reads what is known.
func (w *cohortWait) Delay(int) time.Duration {
	d := w.untilDue()
	if !w.scout {
		d = min(d, w.p.hop)
	}
	return d
}

// untilDue is how long until the next request is due (0: now). A waiter
// whose poller wakes it when what is known changes (a boot wait) sleeps
// this long, without Delay's hop.
func (w *cohortWait) untilDue() time.Duration { return max(0, w.next()-w.elapsed()) }

// Wake is closed when what the wait knows changed so that its next request
// may be due sooner than its schedule said (Poll wakes on it). A follower
// that started before anything was known would otherwise notice a scout's
// answer only at its next hop.
func (w *cohortWait) Wake() <-chan struct{} { return w.est.sooner() }

// waitsForKnownLag reports a follower that joined with an estimate: it will
// not ask before the expected time.
func (w *cohortWait) waitsForKnownLag() bool {
	_, known := w.est.expected()
	return !w.scout && known
}

// due reports whether a round must ask (the next request is due).
func (w *cohortWait) due() bool { return w.elapsed() >= w.next() }

// asked records a request sent at elapsed time at, and whether it missed.
func (w *cohortWait) asked(at time.Duration, missed bool) {
	w.checks++
	w.last = at
	if missed {
		w.lastMiss = at
	}
}

// done ends the wait; seen > 0 is the elapsed time that showed the event
// (see above). It is recorded when it says something: a scout's (its checks
// are fine, or it explored early) or a follower's that missed first (the
// event came later than expected). A follower that saw the event at its one
// check only confirms the estimate, which would keep it from ever going
// down.
func (w *cohortWait) done(seen time.Duration) {
	if w.left {
		return
	}
	w.left = true
	a := w.est
	a.mu.Lock()
	defer a.mu.Unlock()
	if w.scout {
		a.scouts--
	}
	if seen > 0 && (w.scout || w.lastMiss > 0) {
		a.recordUpper(seen)
	}
}
