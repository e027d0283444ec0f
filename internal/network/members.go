package network

// prime_sandbox_network_member's `members` map: one entry per member key
// (a fleet's key, or the sandbox ID in the single-sandbox form) with the
// sandbox, its address and the tags the platform holds. Converted by hand,
// without reflection, like every fleet's member map.

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/memberkit"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

// memberEntry is one entry of `members`.
type memberEntry struct {
	SandboxID types.String
	Host      types.String
	Tags      types.Set
}

var memberEntryAttrTypes = map[string]attr.Type{
	"sandbox_id": types.StringType, "host": types.StringType, "tags": types.SetType{ElemType: types.StringType},
}

func memberEntryType() types.ObjectType { return types.ObjectType{AttrTypes: memberEntryAttrTypes} }

// entryOf is the entry of a sandbox holding tags.
func entryOf(sandboxID string, tags []string) memberEntry {
	return memberEntry{SandboxID: types.StringValue(sandboxID), Host: types.StringValue(prime.MemberHost(sandboxID)), Tags: tagsValue(tags)}
}

func (e memberEntry) object() types.Object {
	return types.ObjectValueMust(memberEntryAttrTypes, map[string]attr.Value{
		"sandbox_id": e.SandboxID, "host": e.Host, "tags": e.Tags,
	})
}

// memberEntriesValue is the `members` map.
func memberEntriesValue(entries map[string]memberEntry) types.Map {
	elems := make(map[string]attr.Value, len(entries))
	for k, e := range entries {
		elems[k] = e.object()
	}
	return types.MapValueMust(memberEntryType(), elems)
}

// memberEntriesOf reads `members` from state; nil when null or unknown.
func memberEntriesOf(v types.Map, diags *diag.Diagnostics) map[string]memberEntry {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	return memberkit.MembersOfMap(v, diags, func(_ string, a map[string]attr.Value) memberEntry {
		tags, _ := a["tags"].(types.Set)
		return memberEntry{SandboxID: tfkit.StringAttr(a, "sandbox_id"), Host: tfkit.StringAttr(a, "host"), Tags: tags}
	})
}

// heldWith reports whether entry e holds sandboxID with exactly tags.
func (e memberEntry) heldWith(sandboxID string, tags []string) bool {
	return e.SandboxID.ValueString() == sandboxID && e.Tags.Equal(tagsValue(tags))
}

// held gathers what concurrent member work left on the network.
type held struct {
	mu      sync.Mutex
	entries map[string]memberEntry
}

func (h *held) set(key string, e memberEntry) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.entries[key] = e
}

// joinProblem words a failed join of sandboxID: a sandbox that is not a
// running VM (the platform's 409) and one the network's owner does not have
// (404) get their reasons.
func joinProblem(networkID, sandboxID string, err error) string {
	switch {
	case errors.Is(err, prime.ErrConflict):
		return fmt.Sprintf("sandbox %s cannot join network %s: only a running VM sandbox can join a private network "+
			"(create the membership after the sandbox is RUNNING, and not while it is paused). The platform said: %s",
			sandboxID, networkID, err)
	case errors.Is(err, prime.ErrNotFound):
		return fmt.Sprintf("sandbox %s or network %s was not found: members must be existing sandboxes of the "+
			"network's owner (the same team, or both personal). The platform said: %s", sandboxID, networkID, err)
	}
	return fmt.Sprintf("sandbox %s: %s", sandboxID, err)
}

// converge makes the network hold wanted (member key → sandbox ID) with
// tags, starting from prior (the recorded members; nil on create). A
// sandbox no key wants any more leaves first; if one cannot, nothing else
// moves in this apply (every member stays as recorded, so no sandbox is
// left on the network untracked). Then every wanted member that does not
// already hold exactly these tags is put (a join, or a tag replacement).
// It returns what the network holds afterwards as far as this resource
// knows, the problems, and how many members were tried.
func converge(ctx context.Context, c *prime.Client, networkID string, wanted map[string]string, tags []string,
	prior map[string]memberEntry) (map[string]memberEntry, *memberkit.Problems, int) {
	out := &held{entries: map[string]memberEntry{}}
	problems := &memberkit.Problems{}
	wantedIDs := map[string]bool{}
	for _, id := range wanted {
		wantedIDs[id] = true
	}
	var leaving []string
	for k, p := range prior {
		if !wantedIDs[p.SandboxID.ValueString()] {
			leaving = append(leaving, k)
		}
	}
	left := map[string]bool{}
	var mu sync.Mutex
	memberkit.ForEachMember(ctx, leaving, memberkit.DefaultConcurrency, func(ctx context.Context, key string) {
		id := prior[key].SandboxID.ValueString()
		if err := c.RemoveNetworkMember(ctx, networkID, id); err != nil && !errors.Is(err, prime.ErrNotFound) {
			problems.Add(key, "sandbox %s could not leave network %s: %s", id, networkID, err)
			return
		}
		mu.Lock()
		left[key] = true
		mu.Unlock()
	})
	if problems.Len() > 0 {
		for k, p := range prior {
			if !left[k] {
				out.entries[k] = p
			}
		}
		return out.entries, problems, len(leaving)
	}
	heldBy := map[string]memberEntry{} // sandbox ID → its recorded entry
	for _, p := range prior {
		heldBy[p.SandboxID.ValueString()] = p
	}
	memberkit.ForEachMember(ctx, tfkit.SortedKeys(wanted), memberkit.DefaultConcurrency, func(ctx context.Context, key string) {
		id := wanted[key]
		if p, ok := heldBy[id]; ok && p.heldWith(id, tags) {
			out.set(key, p)
			return
		}
		if err := c.PutNetworkMember(ctx, networkID, id, tags); err != nil {
			problems.Add(key, "%s", joinProblem(networkID, id, err))
			if p, ok := prior[key]; ok && p.SandboxID.ValueString() == id {
				out.set(key, p) // still a member, with its old tags
			}
			return
		}
		out.set(key, entryOf(id, tags))
	})
	return out.entries, problems, len(wanted)
}
