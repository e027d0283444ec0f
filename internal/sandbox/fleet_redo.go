package sandbox

// Redoing one member of a prime_sandbox_fleet by key: member_triggers.
// `terraform taint` cannot address a member (a fleet is one resource), and
// tainting the fleet replaces every member; a changed member_triggers entry
// deletes that one member's sandbox and creates it again, in place.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/memberkit"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

func memberTriggersAttribute() schema.MapAttribute {
	return schema.MapAttribute{
		Optional: true, ElementType: types.StringType,
		MarkdownDescription: "Per-member redo switch: member key → any string. A member whose entry is set to a value " +
			"other than the recorded one (a first value included) is redone: its sandbox is deleted and created " +
			"again from the template, **in place** " +
			"(an update of the fleet, same `id`), under the same name and with a new sandbox ID; the other members " +
			"are untouched. The plan shows exactly which: that member's `sandbox_ids` and `sandboxes` entries become " +
			"`(known after apply)`. Members of a `prime_fleet_command` that take `sandbox_ids` then run again, " +
			"because their sandbox ID changed, and only they. Keys must be member keys (`\"0\"` … with `size`). " +
			"Removing an entry redoes nothing (it is recorded), so a one-off `-var` that redoes a member does not redo " +
			"it again on the next apply without it. Default: none (no member is ever redone). Changing it never " +
			"replaces the fleet. The platform cannot report it, so after an import the configured values are recorded " +
			"without redoing anything. To redo member `7`, set `member_triggers = { \"7\" = \"retry-1\" }`; to redo " +
			"it again, set another value.",
	}
}

// membersToRedo are the keys of members, among those the fleet keeps
// (kept), whose planned member_triggers entry is set and differs from the
// recorded one; an entry not yet known counts as changed (the plan cannot
// promise the member stays). A removed entry redoes nothing: a redo
// deletes a sandbox, and dropping the switch that asked for one is no
// reason to do it again. None while an import's exemption lasts: the
// recorded map is not the platform's, so a difference says nothing.
func membersToRedo(planned, recorded types.Map, kept []string, imported bool) []string {
	if imported {
		return nil
	}
	var redo []string
	for _, k := range kept {
		p := memberkit.TriggerOf(planned, k)
		if p.IsUnknown() || (!p.IsNull() && !p.Equal(memberkit.TriggerOf(recorded, k))) {
			redo = append(redo, k)
		}
	}
	slices.Sort(redo)
	return redo
}

// triggersAfterRedo is the member_triggers an apply records: the planned
// map, except that a member whose redo did not happen (its sandbox could
// not be deleted) keeps its recorded entry, so the next plan redoes it.
func triggersAfterRedo(planned, recorded types.Map, notRedone []string) types.Map {
	if len(notRedone) == 0 || planned.IsUnknown() {
		return planned
	}
	out := map[string]attr.Value{}
	for k, v := range planned.Elements() {
		out[k] = v
	}
	for _, k := range notRedone {
		if v := memberkit.TriggerOf(recorded, k); v.IsNull() {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	if planned.IsNull() && len(out) == 0 {
		return planned
	}
	return types.MapValueMust(types.StringType, out)
}

// validateMemberTriggers refuses entries for keys the fleet does not have:
// a typo would otherwise redo nothing, silently.
func validateMemberTriggers(triggers types.Map, keys []string, diags *diag.Diagnostics) {
	if triggers.IsNull() || triggers.IsUnknown() {
		return
	}
	for _, k := range memberkit.StrayKeysOf(triggers.Elements(), tfkit.SetOf(keys)) {
		diags.AddAttributeError(path.Root("member_triggers").AtMapKey(k), "Not a member of the fleet",
			fmt.Sprintf("member_triggers names %q, but the fleet's member keys are %s. Use a member key, or remove "+
				"the entry (a removed member needs no entry).", k, describeKeys(keys)))
	}
}

// describeKeys names member keys in an error, at most ten of them.
func describeKeys(keys []string) string {
	const most = 10
	if len(keys) == 0 {
		return "none (the fleet has no members)"
	}
	quoted := make([]string, 0, most)
	for _, k := range keys[:min(len(keys), most)] {
		quoted = append(quoted, fmt.Sprintf("%q", k))
	}
	s := strings.Join(quoted, ", ")
	if len(keys) > most {
		s += fmt.Sprintf(" and %d more", len(keys)-most)
	}
	return s
}

// warnTriggersRecordedAfterImport says that an imported fleet's first
// apply records member_triggers without redoing members.
func warnTriggersRecordedAfterImport(planned, recorded types.Map, diags *diag.Diagnostics) {
	if planned.IsUnknown() || planned.Equal(recorded) || (planned.IsNull() && len(recorded.Elements()) == 0) {
		return
	}
	diags.AddAttributeWarning(path.Root("member_triggers"), "Imported fleet: recording member_triggers without redoing members",
		"The platform cannot report member_triggers, so this apply records the configured values and redoes no "+
			"member. From then on, a changed entry redoes its member. To redo a member now, change its entry after "+
			"this apply.")
}

// keptKeys are the wanted keys that have a member already.
func keptKeys(keys []string, have map[string]fleetMember) []string {
	var kept []string
	for _, k := range keys {
		if _, ok := have[k]; ok {
			kept = append(kept, k)
		}
	}
	return kept
}
