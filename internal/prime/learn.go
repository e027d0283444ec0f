package prime

import (
	"slices"
	"sync"
	"time"
)

// latencyEstimate remembers how long recent waits of one kind took in this
// process: sandbox boots, or data-plane applies of egress policies. A fleet's
// sandboxes and policies go through the same platform, so after a few of them
// a waiter can check close to the usual time instead of backing off past it.
//
// What is recorded is the last moment a wait saw the awaited state NOT yet
// reached: a lower bound of the true duration, so a schedule built on it
// starts checking just before the event. (Recording when the state was seen
// would include each wait's overshoot and keep the schedule late.)
type latencyEstimate struct {
	mu     sync.Mutex
	recent []time.Duration // ring of the last latencySamples
	next   int
}

const latencySamples = 32

func (a *latencyEstimate) record(d time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.recent) < latencySamples {
		a.recent = append(a.recent, d)
		return
	}
	a.recent[a.next] = d
	a.next = (a.next + 1) % latencySamples
}

// median is the typical duration (a lower bound), once three waits were
// recorded.
func (a *latencyEstimate) median() (time.Duration, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.recent) < 3 {
		return 0, false
	}
	s := slices.Clone(a.recent)
	slices.Sort(s)
	return s[len(s)/2], true
}

// schedule is base while nothing is known, else a learnedSchedule.
func (a *latencyEstimate) schedule(base Backoff, minStep time.Duration) Schedule {
	if expected, ok := a.median(); ok {
		return learnedSchedule{base: base, expected: expected, minStep: minStep}
	}
	return base
}

// learnedSchedule checks around an expected duration. The first check still
// comes after base.Delay(0), so a fast event is never waited on; the next at
// 90 % of the expected time; then every step = max(minStep, expected/20)
// until 150 % of it (about a dozen checks at most, whatever the scale); from
// there doubling from the step up to base.Max, so an event that became
// slower costs little more than the plain backoff would.
type learnedSchedule struct {
	base     Backoff
	expected time.Duration
	minStep  time.Duration
}

func (s learnedSchedule) Delay(n int) time.Duration {
	if s.expected <= 2*s.base.Initial {
		return s.base.Delay(n)
	}
	step := max(s.minStep, s.expected/20)
	fineSteps := int((s.expected*15/10 - s.expected*9/10) / step)
	switch {
	case n == 0:
		return s.base.Delay(0)
	case n == 1:
		return s.expected*9/10 - s.base.Initial
	case n <= 1+fineSteps:
		return step
	default:
		k := min(n-1-fineSteps, 16)
		return min(s.base.Max, step<<k)
	}
}
