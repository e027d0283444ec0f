package sandbox

// The checkpoints the provider's pauses took. Each pause makes the platform
// take a checkpoint of its own (disk and memory) that outlives the sandbox
// once DURABLE and is billed until deleted, so prime_sandbox and a fleet
// remember them in private state, by sandbox ID, and delete them once the
// sandbox is deleted (destroy, replacement, a member removed or redone).
// Only these: the user's own checkpoints of the same sandbox
// (prime_sandbox_checkpoint) are never touched, so the platform's "delete
// all of a sandbox's checkpoints" is not used.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/primeintellect/terraform-provider-prime/internal/memberkit"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

// pauseCheckpointsKey is the private-state key: a JSON object from sandbox
// ID to the IDs of the checkpoints its pauses took, oldest first.
const pauseCheckpointsKey = "pause_checkpoints"

// pauseCheckpoints are the recorded pause checkpoints, safe for concurrent
// members' pauses.
type pauseCheckpoints struct {
	mu        sync.Mutex
	bySandbox map[string][]string
	// unlisted are sandboxes paused whose pause checkpoint could not be
	// listed (and so is not recorded).
	unlisted []string
}

func readPauseCheckpoints(ctx context.Context, p tfkit.PrivateGetter) (*pauseCheckpoints, diag.Diagnostics) {
	pc := &pauseCheckpoints{bySandbox: map[string][]string{}}
	if p == nil {
		return pc, nil
	}
	raw, diags := p.GetKey(ctx, pauseCheckpointsKey)
	if len(raw) == 0 || diags.HasError() {
		return pc, diags
	}
	if err := json.Unmarshal(raw, &pc.bySandbox); err != nil {
		diags.AddError("Cannot read the recorded pause checkpoints", err.Error())
	}
	return pc, diags
}

func (pc *pauseCheckpoints) save(ctx context.Context, p tfkit.PrivateSetter) diag.Diagnostics {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	for id, cks := range pc.bySandbox {
		if len(cks) == 0 {
			delete(pc.bySandbox, id)
		}
	}
	if len(pc.bySandbox) == 0 {
		return p.SetKey(ctx, pauseCheckpointsKey, nil)
	}
	raw, err := json.Marshal(pc.bySandbox)
	if err != nil {
		var diags diag.Diagnostics
		diags.AddError("Cannot record the pause checkpoints", err.Error())
		return diags
	}
	return p.SetKey(ctx, pauseCheckpointsKey, raw)
}

// record keeps what one pause of sandboxID returned.
func (pc *pauseCheckpoints) record(sandboxID, checkpointID string, err error) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if checkpointID != "" && !slices.Contains(pc.bySandbox[sandboxID], checkpointID) {
		pc.bySandbox[sandboxID] = append(pc.bySandbox[sandboxID], checkpointID)
	}
	if err != nil {
		pc.unlisted = append(pc.unlisted, sandboxID)
	}
}

func (pc *pauseCheckpoints) of(sandboxID string) []string {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return slices.Clone(pc.bySandbox[sandboxID])
}

// sandboxes are the sandbox IDs with recorded pause checkpoints.
func (pc *pauseCheckpoints) sandboxes() []string {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return tfkit.SortedKeys(pc.bySandbox)
}

// unlistedWarning explains pauses whose checkpoint is not recorded: the
// sandboxes are paused, but destroy will not delete those checkpoints.
func (pc *pauseCheckpoints) unlistedWarning(diags *diag.Diagnostics) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if len(pc.unlisted) == 0 {
		return
	}
	sort.Strings(pc.unlisted)
	diags.AddWarning("Pause checkpoint not recorded", fmt.Sprintf("Sandboxes %s are paused, but the checkpoint "+
		"each pause took could not be listed (%v), so destroy will not delete it: delete it by hand after destroy "+
		"(it is listed under the sandbox's ID).", strings.Join(pc.unlisted, ", "), prime.ErrPauseCheckpointUnlisted))
	pc.unlisted = nil
}

// deleteOf deletes the recorded pause checkpoints of sandboxes that are
// deleted, concurrently; a checkpoint still uploading is waited for (at
// most timeout) and then deleted, one already gone (discarded with its
// sandbox before it was DURABLE) counts as deleted. Deleted ones are
// forgotten; those that fail stay recorded, so a later destroy or apply
// deletes them again, and are reported in one error naming them.
func (pc *pauseCheckpoints) deleteOf(ctx context.Context, c *prime.Client, sandboxIDs []string, timeout time.Duration, diags *diag.Diagnostics) {
	owner := map[string]string{}
	for _, sb := range sandboxIDs {
		for _, ck := range pc.of(sb) {
			owner[ck] = sb
		}
	}
	if len(owner) == 0 {
		return
	}
	var failed, why []string
	memberkit.ForEachMember(ctx, tfkit.SortedKeys(owner), 0, func(ctx context.Context, ck string) {
		err := c.DeleteCheckpointOnceUploaded(ctx, ck, timeout)
		pc.mu.Lock()
		defer pc.mu.Unlock()
		sb := owner[ck]
		if err != nil {
			failed = append(failed, ck)
			why = append(why, fmt.Sprintf("%s (of sandbox %s): %v", ck, sb, err))
			return
		}
		pc.bySandbox[sb] = slices.DeleteFunc(pc.bySandbox[sb], func(id string) bool { return id == ck })
	})
	if len(failed) > 0 {
		sort.Strings(failed)
		sort.Strings(why)
		diags.AddError("Pause checkpoints not deleted", fmt.Sprintf("The sandboxes are deleted, but these checkpoints "+
			"their pauses took are not, and stay billed until deleted: %s. They stay recorded, so the next apply "+
			"or destroy deletes them again; or delete them by hand (DELETE /sandbox/checkpoints/{id}).\n\n%s",
			strings.Join(failed, ", "), strings.Join(why, "\n")))
	}
}
