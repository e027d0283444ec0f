package sandbox

// Pausing and resuming: the `paused` argument of prime_sandbox and of a
// fleet (every member), one wait for both. Null is not managed: the
// provider neither pauses nor resumes, and a refresh reports no drift.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/memberkit"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

// defaultPauseTimeout bounds one pause or resume and its wait unless
// timeouts.update says otherwise: the platform reports the change "a few
// seconds later"; a resume then waits for the gateway as a create does.
const defaultPauseTimeout = 10 * time.Minute

// pausedStatus is the status a pause (true) or resume (false) ends in.
func pausedStatus(paused bool) string {
	if paused {
		return prime.StatusPaused
	}
	return prime.StatusRunning
}

// pauseChange is the pause or resume an apply makes: planned is the
// configuration's `paused`, recorded the state's (creating: there is none,
// and a new sandbox is RUNNING). It reports whether to act, and which way.
// A recorded null (not managed until now) acts: pausing or resuming a
// sandbox already there is a no-op after one status read.
func pauseChange(planned, recorded types.Bool, creating bool) (act, paused bool) {
	if planned.IsNull() || planned.IsUnknown() {
		return false, false
	}
	paused = planned.ValueBool()
	if creating {
		return paused, paused
	}
	return recorded.IsNull() || recorded.IsUnknown() || recorded.ValueBool() != paused, paused
}

// fleetPauseChange is pauseChange for a fleet that exists: it also acts
// when a member is out of line with the configured value (PAUSED when it
// says false, anything else when it says true). After a pause or resume
// that some members refused, no recorded value differs from both true and
// false (fleetPausedOnRefresh records false for a recorded true with a
// member running, and true for a recorded false with one paused), so the
// members are what tells the next plan to propose the change again.
func fleetPauseChange(planned, recorded types.Bool, members map[string]fleetMember) (act, paused bool) {
	if act, paused = pauseChange(planned, recorded, false); act || planned.IsNull() || planned.IsUnknown() {
		return act, paused
	}
	for _, m := range members {
		if (m.Status.ValueString() == prime.StatusPaused) != paused {
			return true, paused
		}
	}
	return false, paused
}

// pausedOnRefresh is what a refresh records for `paused`: null stays null
// (not managed), so a sandbox paused or resumed out of band is no drift;
// otherwise whether the sandbox is PAUSED, so a configured value it no
// longer matches plans a change.
func pausedOnRefresh(recorded types.Bool, status string) types.Bool {
	if recorded.IsNull() || recorded.IsUnknown() {
		return recorded
	}
	return types.BoolValue(status == prime.StatusPaused)
}

// setPaused pauses (waits for PAUSED) or resumes (waits for RUNNING and
// for the gateway, as a create does, so commands can start at once) one
// sandbox, within timeout. A pause records the checkpoint it took in pc
// (destroy deletes it); one whose checkpoint could not be listed is still
// a pause done, and pc keeps the sandbox for a warning.
func setPaused(ctx context.Context, c *prime.Client, id string, paused bool, timeout time.Duration, pc *pauseCheckpoints) error {
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("pause/resume wait (timeouts.update, %s) reached", timeout))
	defer cancel()
	if paused {
		ck, err := c.PauseTakingCheckpoint(ctx, id)
		if err != nil && !errors.Is(err, prime.ErrPauseCheckpointUnlisted) {
			return err
		}
		pc.record(id, ck, err)
		return nil
	}
	if err := c.ResumeAndWait(ctx, id); err != nil {
		return err
	}
	return awaitSandbox(ctx, c, id, timeout, timeout)
}

// setMembersPaused pauses or resumes every member concurrently; the
// members that fail go to problems, together, and keep their entries. The
// others' status is updated.
func setMembersPaused(ctx context.Context, c *prime.Client, members map[string]fleetMember, paused bool, timeout time.Duration, pc *pauseCheckpoints, problems *memberkit.Problems) {
	var mu sync.Mutex
	memberkit.ForEachMember(ctx, tfkit.SortedKeys(members), 0, func(ctx context.Context, k string) {
		mu.Lock()
		m := members[k]
		mu.Unlock()
		if err := setPaused(ctx, c, m.ID.ValueString(), paused, timeout, pc); err != nil {
			problems.Add(k, "%v", err)
			return
		}
		m.Status = types.StringValue(pausedStatus(paused))
		mu.Lock()
		members[k] = m
		mu.Unlock()
	})
}

// fleetPausedOnRefresh is pausedOnRefresh for a fleet: a fleet recorded
// paused stays so while every member is PAUSED; one recorded running
// becomes paused when any member is. Either way a member out of line plans
// the configured change again.
func fleetPausedOnRefresh(recorded types.Bool, members map[string]fleetMember) types.Bool {
	if recorded.IsNull() || recorded.IsUnknown() || len(members) == 0 {
		return recorded
	}
	all, anyPaused := true, false
	for _, m := range members {
		p := m.Status.ValueString() == prime.StatusPaused
		all, anyPaused = all && p, anyPaused || p
	}
	if recorded.ValueBool() {
		return types.BoolValue(all)
	}
	return types.BoolValue(anyPaused)
}
