package egress

// A policy's destroy: restoring the baseline with the reuse guard, the
// teardown restores a later setup step may wait for, and the baseline's
// private-state codec.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

// teardownRestoreWait bounds how long a destroy waits for its restore to
// be enforced (timeouts.delete, when shorter, bounds it instead). A healthy
// data plane enforces a write well within it, so a kept sandbox is open
// again when the destroy returns. A stalled one would otherwise hold every
// destroy for the whole timeout, although the sandboxes of a teardown are
// deleted next whatever their policy: past this wait the destroy goes on,
// and a setup step that needs the restore waits for the rest (see
// pendingRestores).
const teardownRestoreWait = 10 * time.Second

// restoreResult is what a restore did, for its caller's warnings.
type restoreResult struct {
	// NewerGen, when set, is another writer's newer generation, left in
	// place (OwnGen is the generation this resource wrote).
	NewerGen, OwnGen int64
	// PendingGen, when set, is a teardown restore the platform accepted
	// but did not enforce within Waited.
	PendingGen int64
	Waited     time.Duration
	// What names the restored policy in messages.
	What string
}

// restoreEgress is a policy's destroy: unless a newer generation than ours
// holds the sandbox (someone else's policy: never undone, the reuse guard),
// write the baseline back and wait until it is enforced. ownGen < 0 means
// unknown (the guard then compares nothing).
//
// A teardown (a destroy, the policy's or a replacement's) waits at most
// teardownRestoreWait: a restore not enforced by then is reported in
// PendingGen, noted for the setup steps that need it, and the destroy goes
// on. Other restores (a member removed from a fleet policy, whose sandbox
// stays) wait for the whole timeout and fail closed.
func restoreEgress(ctx context.Context, c *prime.Client, id string, ownGen int64, baseline prime.EgressPolicy, timeout time.Duration, teardown bool) (restoreResult, error) {
	res := restoreResult{What: "unrestricted egress"}
	if !baseline.IsOpen() {
		res.What = "its create-time egress lists (" + Describe(baseline) + ")"
	}
	st, gone, err := ReadStatus(ctx, c, id)
	switch {
	case err != nil:
		return res, fmt.Errorf("reading the egress policy of sandbox %s: %w", id, err)
	case gone:
		return res, nil // nothing to restore on a sandbox that is gone
	}
	if ownGen >= 0 && st.Generation > ownGen {
		res.NewerGen, res.OwnGen = st.Generation, ownGen
		return res, nil
	}
	if prime.SamePolicy(st.Policy, baseline) && st.Enforces(st.Generation) {
		return res, nil
	}
	if !teardown {
		if _, _, err := Write(ctx, c, id, baseline, timeout, "delete"); err != nil {
			var notApplied *prime.EgressNotAppliedError
			if errors.As(err, &notApplied) {
				return res, fmt.Errorf("restoring %s on sandbox %s was accepted (generation %d) but is not enforced after "+
					"%s. The sandbox may still hold this policy, so the resource stays in state; run the apply again to "+
					"retry, or raise timeouts.delete", res.What, id, notApplied.Want, timeout)
			}
			return res, fmt.Errorf("restoring %s on sandbox %s: %w", res.What, id, err)
		}
		return res, nil
	}
	put, err := putEgress(ctx, c, id, baseline, timeout, "delete")
	if err != nil {
		return res, fmt.Errorf("restoring %s on sandbox %s: %w", res.What, id, err)
	}
	deadline := time.Now().Add(timeout)
	res.Waited = min(timeout, teardownRestoreWait)
	if _, err := waitEgress(ctx, c, id, put.Generation, put, res.Waited, "delete"); err != nil {
		var notApplied *prime.EgressNotAppliedError
		if !errors.As(err, &notApplied) {
			return res, fmt.Errorf("restoring %s on sandbox %s: %w", res.What, id, err)
		}
		// Teardown is never held hostage by a data plane that does not
		// converge: the restore is accepted, and a kept sandbox stays safe
		// because require_open_egress waits for it, then refuses every
		// setup step while the restriction holds.
		res.PendingGen = put.Generation
		pendingRestores.note(c, id, put.Generation, deadline)
	}
	return res, nil
}

// restoreNote is one sandbox's restore, for a warning: Key is the fleet
// member's key ("" for prime_egress_policy).
type restoreNote struct {
	Key, SandboxID string
	restoreResult
}

// addRestoreWarnings reports what restores left: a newer policy of another
// writer in place, restores not yet enforced. Each is one warning for the
// whole resource, however many members it concerns, with the explanation
// once.
func addRestoreWarnings(diags *diag.Diagnostics, notes []restoreNote) {
	sort.Slice(notes, func(i, j int) bool { return notes[i].Key < notes[j].Key })
	var newer, pending []restoreNote
	for _, n := range notes {
		if n.NewerGen > 0 {
			newer = append(newer, n)
		}
		if n.PendingGen > 0 {
			pending = append(pending, n)
		}
	}
	if len(newer) == 1 && newer[0].Key == "" {
		n := newer[0]
		diags.AddWarning("Newer egress policy left in place", fmt.Sprintf("Sandbox %s holds egress policy generation %d, "+
			"newer than generation %d written by this resource; it belongs to another writer (a create_before_destroy "+
			"replacement, the CLI) and is left in place.", n.SandboxID, n.NewerGen, n.OwnGen))
	} else if len(newer) > 0 {
		items := make([]string, len(newer))
		for i, n := range newer {
			items[i] = fmt.Sprintf("member %q (sandbox %s holds generation %d, this resource wrote %d)", n.Key, n.SandboxID, n.NewerGen, n.OwnGen)
		}
		diags.AddWarning("Newer egress policy left in place", fmt.Sprintf("%d %s a newer egress policy than this "+
			"resource wrote; it belongs to another writer (a create_before_destroy replacement, the CLI) and is left in "+
			"place: %s.", len(newer), tfkit.PluralVerb(len(newer), "member's sandbox holds", "members' sandboxes hold"), strings.Join(items, ", ")))
	}
	if len(pending) == 0 {
		return
	}
	const rest = "The destroy does not wait longer, so that teardown completes: a sandbox destroyed next is deleted " +
		"whatever its policy. A sandbox that is kept holds its previous restriction until the data plane enforces the " +
		"restore; a setup step with require_open_egress = true waits for it during this apply (up to timeouts.delete " +
		"from the write) and refuses to run while it is pending, naming the generation."
	if len(pending) == 1 && pending[0].Key == "" {
		n := pending[0]
		diags.AddWarning("Egress restore not yet enforced", fmt.Sprintf("Restoring %s on sandbox %s was accepted "+
			"(generation %d) but is not enforced after %s. %s", n.What, n.SandboxID, n.PendingGen, n.Waited, rest))
		return
	}
	items := make([]string, len(pending))
	for i, n := range pending {
		items[i] = fmt.Sprintf("member %q (sandbox %s, generation %d: %s)", n.Key, n.SandboxID, n.PendingGen, n.What)
	}
	diags.AddWarning("Egress restore not yet enforced", fmt.Sprintf("Restoring what the sandboxes held before this "+
		"policy was accepted on %d %s but is not enforced after %s: %s. %s", len(pending),
		tfkit.PluralVerb(len(pending), "member", "members"), pending[0].Waited, strings.Join(items, ", "), rest))
}

// pendingRestores are the teardown restores this provider process wrote
// and stopped waiting for (restoreEgress). A setup step that needs open
// egress on such a sandbox in the same run — the new setup of a day-two
// re-lock, right after the old policy's destroy — waits for the restore
// until its own deadline (its write plus timeouts.delete) instead of
// refusing at once. Keyed by client, so that providers sharing a process
// (the acceptance tests) never see each other's.
var pendingRestores = &restoreWaits{deadlines: map[restoreWaitKey]time.Time{}}

type restoreWaitKey struct {
	client  *prime.Client
	sandbox string
	gen     int64
}

type restoreWaits struct {
	mu        sync.Mutex
	deadlines map[restoreWaitKey]time.Time
}

// note records a pending restore, dropping those whose deadline passed.
func (r *restoreWaits) note(c *prime.Client, id string, gen int64, deadline time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	for k, d := range r.deadlines {
		if now.After(d) {
			delete(r.deadlines, k)
		}
	}
	r.deadlines[restoreWaitKey{c, id, gen}] = deadline
}

// take returns and forgets a pending restore's deadline.
func (r *restoreWaits) take(c *prime.Client, id string, gen int64) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := restoreWaitKey{c, id, gen}
	d, ok := r.deadlines[k]
	delete(r.deadlines, k)
	return d, ok
}

// NotePendingRestore records a teardown restore of open egress that this
// process wrote and stopped waiting for, until deadline (restoreEgress
// notes its own; a reader's tests note one to stand for it).
func NotePendingRestore(c *prime.Client, id string, gen int64, deadline time.Time) {
	pendingRestores.note(c, id, gen, deadline)
}

// PendingRestoreNoted says whether a restore is still noted (one that
// AwaitPendingRestore waited for is not).
func PendingRestoreNoted(c *prime.Client, id string, gen int64) bool {
	pendingRestores.mu.Lock()
	defer pendingRestores.mu.Unlock()
	_, ok := pendingRestores.deadlines[restoreWaitKey{c, id, gen}]
	return ok
}

// AwaitPendingRestore is for a reader that needs open egress and found st:
// an open policy accepted but not enforced. When this process wrote it as
// a teardown restore, it waits for it until the restore's deadline and
// returns the latest status; otherwise (another process's restore, from an
// earlier run: the data plane has had its time) it returns st at once.
func AwaitPendingRestore(ctx context.Context, c *prime.Client, id string, st *prime.EgressPolicyStatus) *prime.EgressPolicyStatus {
	deadline, ok := pendingRestores.take(c, id, st.Generation)
	if !ok || !time.Now().Before(deadline) {
		return st
	}
	wctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	tflog.Info(ctx, "waiting for the pending restore of open egress before a setup step", map[string]any{
		"sandbox_id": id, "generation": st.Generation, "until": deadline.Format(time.RFC3339),
	})
	if final, _ := c.WaitForEgressApplied(wctx, id, st.Generation, st); final != nil {
		return final
	}
	return st
}

// Baselines travel in private state, as JSON.
const baselineKey = "baseline"

func encodeBaseline(p prime.EgressPolicy) []byte {
	b, _ := json.Marshal(p)
	return b
}

// decodeBaseline reads a stored baseline; absent (an import, a policy
// created before baselines were recorded) means open.
func decodeBaseline(b []byte) prime.EgressPolicy {
	var p prime.EgressPolicy
	if len(b) == 0 || json.Unmarshal(b, &p) != nil || (p.Allowlist == nil && p.Denylist == nil) {
		return prime.OpenEgressPolicy()
	}
	return p
}
