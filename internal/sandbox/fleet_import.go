package sandbox

// prime_sandbox_fleet's import: by a label, by sandbox IDs or by identity,
// and the state an import (or a list result) starts from.

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/egress"
	"github.com/primeintellect/terraform-provider-prime/internal/memberkit"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

// ImportState takes `label:<label>` (the running sandboxes carrying the
// label) or a comma-separated list of sandbox IDs, or an identity (its
// label, else its sandbox_ids). Keys and name_prefix come from the member
// names (`<prefix>-<key>`, distinct); the template is what every member
// reports (members that differ fail the import), and on VMs the egress
// block is the restriction every member holds. What the platform cannot
// report (secrets, guaranteed, …) is recorded from the configuration by the
// first apply, without replacement.
func (r *sandboxFleetResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	id, d := tfkit.ImportIDOf(ctx, req, fleetImportID)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	sbs, err := r.importMembers(ctx, id)
	if err != nil {
		resp.Diagnostics.AddError("Cannot import fleet", err.Error())
		return
	}
	f, ok := r.fleetOfMembers(ctx, sbs, &resp.Diagnostics)
	if !ok {
		return
	}
	if keep := fleetIDOfIdentity(ctx, req); keep != "" {
		f.ID = types.StringValue(keep)
	}
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &f)...)
	label, _ := strings.CutPrefix(id, "label:") // "" unless imported by a label
	if label == id {
		label = ""
	}
	resp.Diagnostics.Append(setFleetIdentity(ctx, resp.Identity, label, f)...)
	resp.Diagnostics.Append(tfkit.MarkImported(ctx, resp.Private)...)
}

// fleetOfMembers is the state an import of these sandboxes starts from, as
// ImportState and the prime_sandbox_fleet list resource build it. It fails
// (false, with an error) when they cannot be one fleet's members.
func (r *sandboxFleetResource) fleetOfMembers(ctx context.Context, sbs []prime.Sandbox, diags *diag.Diagnostics) (sandboxFleetModel, bool) {
	templates := make([]sandboxAttributes, len(sbs))
	for i := range sbs {
		var d diag.Diagnostics
		templates[i], d = importedTemplate(ctx, &sbs[i])
		diags.Append(d...)
	}
	if msg := differentTemplates(sbs, templates); msg != "" {
		diags.AddError("Cannot import fleet", msg)
		return sandboxFleetModel{}, false
	}
	prefix, keys := splitMemberNames(sbs)
	f := sandboxFleetModel{
		Size: types.Int64Null(), Members: types.SetNull(types.StringType), MemberTriggers: types.MapNull(types.StringType),
		sandboxSpec: templates[0].sandboxSpec, sandboxInputs: nullInputs(), // every member's spec, checked above
		Timeouts: timeouts.Value{Object: types.ObjectNull(tfkit.TimeoutsAttrTypes(sandboxTimeoutKeys("", "")))},
	}
	if ck := sharedCheckpoint(sbs); ck != "" {
		// As prime_sandbox records a reported checkpoint: a restore's
		// template holds the checkpoint, not the image it brought.
		f.CheckpointID, f.DockerImage = types.StringValue(ck), types.StringNull()
	}
	f.ID = types.StringValue("fleet-" + prime.NewIdempotencyKey()[:16])
	f.NamePrefix = types.StringValue(prefix)
	f.Arch = templateArch(f.Arch)
	members := map[string]fleetMember{}
	if isNumbered(keys) {
		f.Size = types.Int64Value(int64(len(keys)))
		f.Members = types.SetNull(types.StringType)
	} else {
		var d diag.Diagnostics
		f.Members, d = types.SetValueFrom(ctx, types.StringType, keys)
		diags.Append(d...)
	}
	for i := range sbs {
		members[keys[i]] = memberFromSandbox(&sbs[i], false)
	}
	r.importMemberEgress(ctx, &f, members, diags)
	setFleetMembers(&f, members)
	return f, !diags.HasError()
}

// sharedCheckpoint is the checkpoint every member reports it was restored
// from, or "" when the platform reports none (or they differ: the first
// apply then records the configuration's, see adoptsRestore).
func sharedCheckpoint(sbs []prime.Sandbox) string {
	var ck string
	for i, sb := range sbs {
		got := ""
		if sb.CheckpointID != nil {
			got = *sb.CheckpointID
		}
		if got == "" || (i > 0 && got != ck) {
			return ""
		}
		ck = got
	}
	return ck
}

// templateArch is a fleet template's arch for the architecture its members
// report: the platform's default reads as unset (the template's arch is
// Optional only, and a configuration that leaves it out then plans no
// change after an import).
func templateArch(reported types.String) types.String {
	if reported.ValueString() == prime.DefaultArch {
		return types.StringNull()
	}
	return reported
}

// importedTemplate is the template a sandbox was created from, as far as
// the platform reports it.
func importedTemplate(ctx context.Context, sb *prime.Sandbox) (sandboxAttributes, diag.Diagnostics) {
	var a sandboxAttributes
	a.EnvironmentVars, a.Labels = types.MapNull(types.StringType), types.SetNull(types.StringType)
	a.Arch = types.StringNull()
	d := applySandbox(ctx, &a, sb)
	return a, d
}

// reportedTemplate lists the fleet template's attributes that the platform
// reports for a member, by attribute name.
func reportedTemplate(a sandboxAttributes) []struct {
	name  string
	value attr.Value
} {
	return []struct {
		name  string
		value attr.Value
	}{
		{"docker_image", a.DockerImage}, {"arch", a.Arch}, {"start_argv", a.StartArgv},
		{"cpu_cores", a.CPUCores}, {"memory_gb", a.MemoryGB}, {"disk_size_gb", a.DiskSizeGB},
		{"gpu_count", a.GPUCount}, {"gpu_type", a.GPUType}, {"timeout_minutes", a.TimeoutMinutes},
		{"idle_timeout_minutes", a.IdleTimeoutMinutes}, {"environment_vars", a.EnvironmentVars}, {"labels", a.Labels},
		{"team_id", a.TeamID}, {"region", a.Region},
	}
}

// differentTemplates explains why sandboxes cannot be one fleet's members:
// the template attributes in which they differ from the first, naming the
// members and their values ("" when they share one template). A fleet
// stores one template, so importing them anyway would claim a template some
// members do not run, and no plan would ever show it.
func differentTemplates(sbs []prime.Sandbox, templates []sandboxAttributes) string {
	const perAttribute = 5
	var lines []string
	first := reportedTemplate(templates[0])
	for i, want := range first {
		var differ []string
		for j := 1; j < len(templates); j++ {
			if got := reportedTemplate(templates[j])[i].value; !got.Equal(want.value) {
				differ = append(differ, fmt.Sprintf("%s on %s (%s)", got, sbs[j].Name, sbs[j].ID))
			}
		}
		if len(differ) == 0 {
			continue
		}
		if len(differ) > perAttribute {
			differ = append(differ[:perAttribute], fmt.Sprintf("… and %d more", len(differ)-perAttribute))
		}
		lines = append(lines, fmt.Sprintf("%s: %s on %s (%s), but %s", want.name, want.value, sbs[0].Name, sbs[0].ID,
			strings.Join(differ, ", ")))
	}
	if len(lines) == 0 {
		return ""
	}
	return "The sandboxes were not created from one template, and a fleet's members share one:\n\n" +
		strings.Join(lines, "\n") + "\n\nImport the members that share a template (by a comma-separated list of " +
		"IDs), and replace or delete the others."
}

// importMemberEgress reads every member's egress policy, as prime_sandbox's
// first read after an import reads its own, and records the restriction
// they share as the egress block, with each member's generation. Members
// that disagree leave the block unset, with a warning naming them: an apply
// whose configuration has an egress block then writes it to every member.
func (r *sandboxFleetResource) importMemberEgress(ctx context.Context, f *sandboxFleetModel, members map[string]fleetMember, diags *diag.Diagnostics) {
	var mu sync.Mutex
	statuses := map[string]*prime.EgressPolicyStatus{}
	var failures memberkit.Problems
	// members is only read while the reads run; statuses is written.
	memberkit.ForEachMember(ctx, tfkit.SortedKeys(members), 0, func(ctx context.Context, k string) {
		st, gone, err := egress.ReadStatus(ctx, r.client, members[k].ID.ValueString())
		switch {
		case err != nil:
			failures.Add(k, "%v", err)
		case !gone:
			mu.Lock()
			statuses[k] = st
			mu.Unlock()
		}
	})
	if failures.Len() > 0 {
		diags.AddError("Cannot read the members' egress policies", failures.String())
		return
	}
	keys := tfkit.SortedKeys(statuses)
	if len(keys) == 0 {
		return
	}
	first := statuses[keys[0]]
	var differ []string
	for _, k := range keys[1:] {
		if !prime.SamePolicy(statuses[k].Policy, first.Policy) {
			differ = append(differ, fmt.Sprintf("%q (%s)", k, egress.Describe(statuses[k].Policy)))
		}
	}
	if len(differ) > 0 {
		diags.AddWarning("Fleet members hold different egress policies",
			fmt.Sprintf("Member %q holds %s, but these members differ: %s. The egress block is left unset; an apply "+
				"whose configuration has an egress block writes it to every member.",
				keys[0], egress.Describe(first.Policy), strings.Join(differ, ", ")))
		return
	}
	eg, d := egress.BlockFromImport(ctx, first)
	diags.Append(d...)
	if eg == nil {
		return // open: no egress block
	}
	f.Egress, d = egress.BlockValue(ctx, eg)
	diags.Append(d...)
	for k, st := range statuses {
		m := members[k]
		m.EgressGeneration = types.Int64Value(st.Generation)
		m.EgressApplied = types.BoolValue(st.AppliedGeneration >= st.Generation)
		members[k] = m
	}
}

// importMembers finds the sandboxes an import ID names.
func (r *sandboxFleetResource) importMembers(ctx context.Context, id string) ([]prime.Sandbox, error) {
	var sbs []prime.Sandbox
	if label, ok := strings.CutPrefix(id, "label:"); ok {
		active := true
		list, err := r.client.ListSandboxes(ctx, prime.ListSandboxesOptions{Labels: []string{label}, IsActive: &active})
		if err != nil {
			return nil, err
		}
		sbs = membersLabelled(list, label)
	} else {
		seen := map[string]bool{}
		for _, sid := range strings.Split(id, ",") {
			sid = strings.TrimSpace(sid)
			if sid == "" || seen[sid] {
				continue // an ID listed twice is one member
			}
			seen[sid] = true
			sb, err := r.client.GetSandbox(ctx, sid)
			if err != nil {
				return nil, fmt.Errorf("sandbox %s: %w", sid, err)
			}
			sbs = append(sbs, *sb)
		}
	}
	return orderFleetMembers(id, sbs)
}

// membersLabelled are the sandboxes of list that a fleet known by label
// has as members: the running ones carrying it.
func membersLabelled(list []prime.Sandbox, label string) []prime.Sandbox {
	var out []prime.Sandbox
	for _, sb := range list {
		if !prime.IsTerminalStatus(sb.Status) && prime.HasAllLabels(sb.Labels, []string{label}) {
			out = append(out, sb)
		}
	}
	return out
}

// orderFleetMembers sorts the members an import ID found by name (then
// ID), refusing none and two of one name.
func orderFleetMembers(id string, sbs []prime.Sandbox) ([]prime.Sandbox, error) {
	if len(sbs) == 0 {
		return nil, fmt.Errorf("no running sandbox matches %q; import by label:<label> or by comma-separated sandbox IDs", id)
	}
	sbs = slices.Clone(sbs)
	sort.Slice(sbs, func(i, j int) bool {
		if sbs[i].Name != sbs[j].Name {
			return sbs[i].Name < sbs[j].Name
		}
		return sbs[i].ID < sbs[j].ID
	})
	// A member's name is its key: two sandboxes with one name would be one
	// member, and which of them is the user's call.
	for i := 1; i < len(sbs); i++ {
		if sbs[i].Name == sbs[i-1].Name {
			return nil, fmt.Errorf("sandboxes %s and %s are both named %q, and a fleet's members need distinct names "+
				"(the name is the member's key). Import by a comma-separated list of IDs that leaves one out, or "+
				"delete one", sbs[i-1].ID, sbs[i].ID, sbs[i].Name)
		}
	}
	return sbs, nil
}

// splitMemberNames finds the common "<prefix>-" of member names and the
// keys after it; without one, the names are the keys and the prefix is "".
func splitMemberNames(sbs []prime.Sandbox) (prefix string, keys []string) {
	names := make([]string, len(sbs))
	for i, sb := range sbs {
		names[i] = sb.Name
	}
	if i := strings.LastIndex(names[0], "-"); i > 0 {
		p := names[0][:i]
		ok := true
		for _, n := range names {
			if !strings.HasPrefix(n, p+"-") || len(n) == len(p)+1 {
				ok = false
				break
			}
		}
		if ok {
			for _, n := range names {
				keys = append(keys, strings.TrimPrefix(n, p+"-"))
			}
			return p, keys
		}
	}
	return "", names
}

// isNumbered reports keys "0" … "N-1" (a size-keyed fleet).
func isNumbered(keys []string) bool {
	seen := map[string]bool{}
	for _, k := range keys {
		seen[k] = true
	}
	for i := range keys {
		if !seen[strconv.Itoa(i)] {
			return false
		}
	}
	return len(seen) == len(keys)
}
