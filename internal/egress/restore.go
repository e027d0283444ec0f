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

// A teardown (the destroy of a policy, or of a replaced one) writes its
// restore and does not wait for the data plane. The platform answers the
// write once the generation is persisted and applies it on its own, so a
// sandbox that outlives its policy is opened without anyone waiting, and a
// sandbox deleted next (the usual `terraform destroy` of a whole
// evaluation) never needed it: waiting would cost every destroy the data
// plane's apply time and a read per sandbox for nothing. What a kept
// sandbox relies on is that nothing runs on it as if it were open before
// it is: every require_open_egress setup step waits for a restore this
// process wrote (pendingRestores) and refuses to run while one is pending.

// restoreResult is what a restore did, for its caller's warnings.
type restoreResult struct {
	// NewerGen, when set, is another writer's newer generation, left in
	// place (OwnGen is the generation this resource wrote).
	NewerGen, OwnGen int64
	// What names the restored policy in messages.
	What string
}

// restoreEgress is a policy's destroy: unless a newer generation than ours
// holds the sandbox (someone else's policy: never undone, the reuse guard),
// write the baseline back. ownGen < 0 means unknown (the guard then
// compares nothing).
//
// A teardown (a destroy, the policy's or a replacement's) does not wait for
// the restore to be enforced: it notes it for the setup steps that need it
// (pendingRestores, until timeout from the write) and returns. Other
// restores (a member removed from a fleet policy, whose sandbox stays)
// wait for the whole timeout and fail closed.
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
	if !put.Enforces(put.Generation) {
		pendingRestores.note(c, id, put.Generation, time.Now().Add(timeout))
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
// writer in place. It is one warning for the whole resource, however many
// members it concerns.
func addRestoreWarnings(diags *diag.Diagnostics, notes []restoreNote) {
	sort.Slice(notes, func(i, j int) bool { return notes[i].Key < notes[j].Key })
	var newer []restoreNote
	for _, n := range notes {
		if n.NewerGen > 0 {
			newer = append(newer, n)
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
}

// pendingRestores are the teardown restores this provider process wrote
// and did not wait for (restoreEgress). A setup step that needs open
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
// process wrote and did not wait for, until deadline (restoreEgress
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
