package sandbox

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/egress"
	"github.com/primeintellect/terraform-provider-prime/internal/journal"
	"github.com/primeintellect/terraform-provider-prime/internal/memberkit"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

// fleetApply is what creating or growing a fleet needs for one apply.
type fleetApply struct {
	client   *prime.Client
	journal  *journal.Creates
	recovery *Recovery
	// held are the sandboxes the fleet's state holds (an update's current
	// members, and those it deletes): never adopted as another member.
	held          map[string]bool
	prefix        string
	template      sandboxTemplate
	secretsWO     map[string]string
	born          *prime.EgressPolicy
	timeout       time.Duration
	buildTimeout  time.Duration
	egressTimeout time.Duration
	// pauseTimeout bounds each member's pause or resume (timeouts.update).
	pauseTimeout time.Duration
}

// createMembers creates the given keys and waits for them to be ready
// (and their born lists enforced). created receives every member that
// exists on the platform as soon as it does (so it reaches state even if
// waiting fails); failed members are deleted and reported. It returns the
// healthy members.
func (a fleetApply) createMembers(ctx context.Context, keys []string, problems *memberkit.Problems, saveIDs func(map[string]fleetMember)) map[string]fleetMember {
	var mu sync.Mutex
	created := map[string]fleetMember{}
	bornAtCreate := false // every member's create is the same template's
	var inflight []*journal.InflightCreate
	defer func() { journal.HandOverAll(inflight) }()

	postCtx, cancel := context.WithTimeoutCause(ctx, a.timeout, fmt.Errorf("create timeout (%s) reached", a.timeout))
	defer cancel()
	memberkit.ForEachMember(postCtx, keys, 0, func(ctx context.Context, key string) {
		var diags diag.Diagnostics
		req, _, d := createRequest(ctx, types.StringValue(memberName(a.prefix, key)), a.template, a.secretsWO)
		diags.Append(d...)
		sent := egress.SetBornLists(&req, a.born)
		if diags.HasError() {
			problems.Add(key, "%s", tfkit.DiagSummary(diags))
			return
		}
		sb, entry, err := createSandbox(ctx, creator{a.client, a.journal, a.recovery}, createKindFleet, a.held, req)
		mu.Lock()
		defer mu.Unlock()
		if sb == nil {
			// No entry to finish: createSandbox released a key whose create
			// may have reached the platform, for the next apply to adopt.
			if ctx.Err() == nil { // an interruption is reported once, by the caller
				_, _, why := createRefusal(req, err)
				problems.Add(key, "cannot create the sandbox: %s", why)
			}
			return
		}
		inflight = append(inflight, entry)
		bornAtCreate = sent
		created[key] = memberFromSandbox(sb, a.born != nil)
		if err != nil && ctx.Err() == nil {
			problems.Add(key, "%s", interruptedCreate(sb.ID, err))
		}
	})
	saveIDs(created)
	if ctx.Err() != nil {
		return created
	}

	ready := map[string]fleetMember{}
	memberkit.ForEachMember(ctx, tfkit.SortedKeys(created), 0, func(ctx context.Context, key string) {
		mu.Lock()
		m := created[key]
		mu.Unlock()
		if problems.Has(key) {
			return
		}
		id := m.ID.ValueString()
		if a.born == nil {
			if err := awaitSandbox(ctx, a.client, id, a.timeout, a.buildTimeout); err != nil {
				if ctx.Err() == nil {
					problems.Add(key, "%v", err)
				}
				return
			}
			m.Status = types.StringValue(prime.StatusRunning)
		} else {
			// Before the fleet's Create returns: every member is locked
			// before anything that depends on the fleet starts.
			gen, waitErr, lockErr := awaitSandboxLocked(ctx, a.client, id, a.timeout, a.buildTimeout,
				bornLock{Policy: *a.born, SentAtCreate: bornAtCreate, Timeout: a.egressTimeout})
			if gen != nil {
				m.EgressGeneration = types.Int64Value(*gen)
			}
			switch {
			case waitErr != nil:
				if ctx.Err() == nil {
					problems.Add(key, "%v", waitErr)
				}
				return
			case ctx.Err() != nil:
				return // reported once, by the caller
			case lockErr != nil:
				m.Status = types.StringValue(prime.StatusRunning)
				problems.Add(key, "%s", egress.FailClosedMessage(id, a.egressTimeout, "egress", lockErr))
				mu.Lock()
				created[key] = m
				mu.Unlock()
				return
			}
			m.Status = types.StringValue(prime.StatusRunning)
			m.EgressApplied = types.BoolValue(true)
		}
		mu.Lock()
		created[key], ready[key] = m, m
		mu.Unlock()
	})
	if ctx.Err() != nil {
		return created // interrupted: keep every member in state (tainted)
	}
	// Failed members are deleted: the state keeps the healthy ones, and the
	// next apply creates the failed ones again. One that cannot be deleted
	// stays in state rather than running untracked.
	var failed []string
	for k := range created {
		if _, ok := ready[k]; !ok {
			failed = append(failed, k)
		}
	}
	kept := deleteMembers(ctx, a.client, created, failed, a.timeout, problems)
	for k, m := range kept {
		ready[k] = m
	}
	return ready
}

// deleteMembers deletes the given members in bulk and waits until none
// remains; it returns the members it could not delete (to be kept in
// state).
func deleteMembers(ctx context.Context, c *prime.Client, members map[string]fleetMember, keys []string, timeout time.Duration, problems *memberkit.Problems) map[string]fleetMember {
	kept := map[string]fleetMember{}
	if len(keys) == 0 {
		return kept
	}
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("delete timeout (%s) reached", timeout))
	defer cancel()
	byID := map[string]string{}
	ids := make([]string, 0, len(keys))
	for _, k := range keys {
		id := members[k].ID.ValueString()
		byID[id] = k
		ids = append(ids, id)
	}
	res, err := c.BulkDeleteSandboxes(ctx, prime.BulkDeleteRequest{SandboxIDs: ids})
	if err != nil {
		for _, k := range keys {
			kept[k] = members[k]
			problems.Add(k, "%sdeleting sandbox %s: %v", problems.Prefixed(k), members[k].ID.ValueString(), err)
		}
		return kept
	}
	gone := map[string]bool{}
	for _, id := range res.Succeeded {
		gone[id] = true
	}
	why := map[string]string{} // the platform's reason for a failed delete
	for _, f := range res.Failed {
		if !strings.Contains(strings.ToLower(f.Error), "not found") {
			why[f.SandboxID] = f.Error
			continue
		}
		gone[f.SandboxID] = true // already gone
	}
	var mu sync.Mutex
	memberkit.ForEachMember(ctx, keys, 0, func(ctx context.Context, k string) {
		id := members[k].ID.ValueString()
		if !gone[id] {
			mu.Lock()
			kept[k] = members[k]
			mu.Unlock()
			reason := ""
			if why[id] != "" {
				reason = ": " + why[id]
			}
			problems.Add(k, "%sthe platform did not delete sandbox %s%s", problems.Prefixed(k), id, reason)
			return
		}
		if err := c.WaitForGone(ctx, id); err != nil {
			mu.Lock()
			kept[k] = members[k]
			mu.Unlock()
			problems.Add(k, "%ssandbox %s was not terminated: %v", problems.Prefixed(k), id, err)
		}
	})
	return kept
}

// sandboxFleetFailure is the error of an apply in which members failed.
// What it says became of them is read from the state the apply leaves
// (members, of the wanted keys), so it holds for every kind of failure: a
// member that never started is deleted, one whose egress change is not
// enforced is kept, one that cannot be deleted stays.
func sandboxFleetFailure(problems *memberkit.Problems, members map[string]fleetMember, want []string, create bool) string {
	wanted := map[string]bool{}
	for _, k := range want {
		wanted[k] = true
	}
	healthy := 0
	for k := range members {
		if !problems.Has(k) {
			healthy++
		}
	}
	var gone, egress, undeleted, kept []string
	for _, k := range problems.Keys() {
		m, inState := members[k]
		switch {
		case !inState:
			gone = append(gone, k)
		case !wanted[k]:
			undeleted = append(undeleted, k)
		case !m.EgressApplied.IsNull() && !m.EgressApplied.IsUnknown() && !m.EgressApplied.ValueBool():
			egress = append(egress, k)
		default:
			kept = append(kept, k)
		}
	}
	var fates []string
	if g := membersNamed(gone); g.any {
		fates = append(fates, fmt.Sprintf("%s %s not in state (deleted, or never created): the next apply creates %s again.",
			g.names, g.are, g.them))
	}
	if e := membersNamed(egress); e.any {
		fates = append(fates, fmt.Sprintf("%s %s in state with egress_applied = false; the next apply writes %s egress "+
			"policy again.", e.names, e.stay, e.their))
	}
	if u := membersNamed(undeleted); u.any {
		fates = append(fates, fmt.Sprintf("%s could not be deleted and %s in state; the next apply deletes %s again.",
			u.names, u.stay, u.them))
	}
	if k := membersNamed(kept); k.any {
		fates = append(fates, fmt.Sprintf("%s %s in state as %s %s (see the error above).", k.names, k.stay, k.they, k.are))
	}
	msg := fmt.Sprintf("%d member(s) failed; %d are healthy.\n\n%s\n\n%s", problems.Len(), healthy, problems,
		strings.Join(fates, " "))
	if create && healthy > 0 {
		msg += " " + untaintAdvice(healthy)
	}
	return msg
}

// untaintAdvice ends the error of a fleet's first create that keeps
// members in state: Terraform taints the fleet, and its replacement would
// delete them. A provider never learns a resource's address; Terraform
// prints it with the error.
func untaintAdvice(kept int) string {
	return fmt.Sprintf("Terraform records this fleet as tainted, so the next apply would replace it, deleting the "+
		"%d %s in state: to keep %s, run `terraform untaint` with this fleet's address (shown above) first; the "+
		"next apply then creates only the missing members.", kept, tfkit.PluralVerb(kept, "member", "members"),
		tfkit.PluralVerb(kept, "it", "them"))
}

// fleetInterrupted is the one error of an apply interrupted (Ctrl-C) while
// members were being created or restored: what is in state, and what the
// next apply does with it. Problems that came before the interruption
// follow it.
func fleetInterrupted(problems *memberkit.Problems, members map[string]fleetMember, want []string, create bool, restoring bool) string {
	ready := 0
	for _, m := range members {
		if m.Status.ValueString() == prime.StatusRunning && (m.EgressApplied.IsNull() || m.EgressApplied.ValueBool()) {
			ready++
		}
	}
	verb := "created"
	if restoring {
		verb = "restored from the checkpoint"
	}
	msg := fmt.Sprintf("The apply was interrupted while the fleet's members were being %s: %d of the %d members "+
		"are in state, %d of them ready (the others go on starting on the platform).", verb, len(members), len(want), ready)
	switch {
	case create && len(members) > 0:
		msg += " " + untaintAdvice(len(members))
	case create:
		msg += " None is in state: the next apply creates every member."
	default:
		msg += " Nothing is tainted: the next apply keeps the members in state (a refresh drops any that did not " +
			"start) and creates the missing ones."
	}
	if problems.Len() > 0 {
		msg += "\n\nBefore the interruption:\n\n" + problems.String()
	}
	return msg
}

// memberWords names members in a sentence, with the words that agree.
type memberWords struct {
	any                                 bool
	names, are, stay, them, their, they string
}

func membersNamed(keys []string) memberWords {
	quoted := make([]string, len(keys))
	for i, k := range keys {
		quoted[i] = strconv.Quote(k)
	}
	if len(keys) == 1 {
		return memberWords{any: true, names: "Member " + quoted[0], are: "is", stay: "stays", them: "it", their: "its", they: "it"}
	}
	return memberWords{any: len(keys) > 0, names: "Members " + strings.Join(quoted, ", "), are: "are", stay: "stay",
		them: "them", their: "their", they: "they"}
}

func timeoutOrDefault(v timeouts.Value, key string, def time.Duration) time.Duration {
	d, diags := tfkit.TimeoutOf(v, key, def)
	if diags.HasError() {
		return def
	}
	return d
}
