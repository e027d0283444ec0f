package network

// The values prime_sandbox_network and its data source share: a rule list
// and a member list as Terraform values, converted by hand (no
// reflection), and the models.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

var ruleAttrTypes = map[string]attr.Type{
	"from": types.StringType, "to": types.StringType, "ports": types.ListType{ElemType: types.Int64Type},
}

func ruleType() types.ObjectType { return types.ObjectType{AttrTypes: ruleAttrTypes} }

// rulesValue is rules as the `rules` list; an empty list when there are
// none (never null: the provider always sends rules).
func rulesValue(rules []prime.NetworkRule) types.List {
	elems := make([]attr.Value, 0, len(rules))
	for _, r := range rules {
		ports := make([]attr.Value, len(r.Ports))
		for i, p := range r.Ports {
			ports[i] = types.Int64Value(int64(p))
		}
		elems = append(elems, types.ObjectValueMust(ruleAttrTypes, map[string]attr.Value{
			"from": types.StringValue(r.From), "to": types.StringValue(r.To),
			"ports": types.ListValueMust(types.Int64Type, ports),
		}))
	}
	return types.ListValueMust(ruleType(), elems)
}

// rulesOf reads the `rules` list; ok is false while any part of it is
// unknown. A null list is no rules.
func rulesOf(v types.List) (rules []prime.NetworkRule, ok bool) {
	if v.IsUnknown() {
		return nil, false
	}
	rules = []prime.NetworkRule{}
	for _, e := range tfkit.ObjectsOf(v) {
		r, known := ruleOf(e)
		if !known {
			return nil, false
		}
		rules = append(rules, r)
	}
	return rules, true
}

// ruleOf reads one rule; known is false while any part of it is unknown.
func ruleOf(e attr.Value) (r prime.NetworkRule, known bool) {
	obj, ok := e.(types.Object)
	if !ok || obj.IsUnknown() || obj.IsNull() {
		return r, false
	}
	a := obj.Attributes()
	from, to := tfkit.StringAttr(a, "from"), tfkit.StringAttr(a, "to")
	ports, portsKnown := portsOf(a["ports"])
	if from.IsUnknown() || to.IsUnknown() || !portsKnown {
		return r, false
	}
	return prime.NetworkRule{From: from.ValueString(), To: to.ValueString(), Ports: ports}, true
}

// portsOf reads a rule's ports; known is false while the list or a port is
// unknown. Ports out of int range read as 0, which the rule check refuses.
func portsOf(v attr.Value) (ports []int, known bool) {
	l, ok := v.(types.List)
	if !ok || l.IsUnknown() {
		return nil, false
	}
	ports = []int{}
	for _, e := range l.Elements() {
		p, ok := e.(types.Int64)
		if !ok || p.IsUnknown() {
			return nil, false
		}
		n := p.ValueInt64()
		if n < 0 || n > 1<<20 {
			n = 0
		}
		ports = append(ports, int(n))
	}
	return ports, true
}

// sameRules reports whether a and b allow the same connections as written:
// the same rules, in any order, each with the same ports in any order.
// A refresh that finds the configured rules in another order keeps the
// configured order, so it is no diff.
func sameRules(a, b []prime.NetworkRule) bool {
	if len(a) != len(b) {
		return false
	}
	ka, kb := ruleKeys(a), ruleKeys(b)
	return slices.Equal(ka, kb)
}

func ruleKeys(rules []prime.NetworkRule) []string {
	out := make([]string, len(rules))
	for i, r := range rules {
		ports := slices.Clone(r.Ports)
		slices.Sort(ports)
		out[i] = fmt.Sprintf("%s>%s:%v", r.From, r.To, ports)
	}
	slices.Sort(out)
	return out
}

var memberAttrTypes = map[string]attr.Type{
	"sandbox_id": types.StringType, "host": types.StringType, "tags": types.ListType{ElemType: types.StringType},
}

func memberType() types.ObjectType { return types.ObjectType{AttrTypes: memberAttrTypes} }

// membersValue is a network's members as the data source's `members` list.
func membersValue(members []prime.NetworkMember) types.List {
	elems := make([]attr.Value, 0, len(members))
	for _, m := range members {
		elems = append(elems, types.ObjectValueMust(memberAttrTypes, map[string]attr.Value{
			"sandbox_id": types.StringValue(m.SandboxID), "host": types.StringValue(prime.MemberHost(m.SandboxID)),
			"tags": stringList(m.Tags),
		}))
	}
	return types.ListValueMust(memberType(), elems)
}

func stringList(ss []string) types.List {
	elems := make([]attr.Value, len(ss))
	for i, s := range ss {
		elems[i] = types.StringValue(s)
	}
	return types.ListValueMust(types.StringType, elems)
}

// teamValue is a team ID as an attribute: null for a personal network.
func teamValue(team *string) types.String {
	if team == nil || strings.TrimSpace(*team) == "" {
		return types.StringNull()
	}
	return types.StringValue(*team)
}

// networkModel is prime_sandbox_network's.
type networkModel struct {
	ID     types.String `tfsdk:"id"`
	Name   types.String `tfsdk:"name"`
	TeamID types.String `tfsdk:"team_id"`
	Rules  types.List   `tfsdk:"rules"`
}

// networkDataModel is the prime_sandbox_network data source's: the
// resource's attributes and the members.
type networkDataModel struct {
	ID      types.String `tfsdk:"id"`
	Name    types.String `tfsdk:"name"`
	TeamID  types.String `tfsdk:"team_id"`
	Rules   types.List   `tfsdk:"rules"`
	Members types.List   `tfsdk:"members"`
}

// fill sets the attributes both models have from a platform answer; the
// rules are kept as recorded when the platform holds the same ones.
func (m *networkModel) fill(n *prime.Network) {
	m.ID, m.Name, m.TeamID = types.StringValue(n.ID), types.StringValue(n.Name), teamValue(n.TeamID)
	if recorded, ok := rulesOf(m.Rules); !ok || m.Rules.IsNull() || !sameRules(recorded, n.Rules) {
		m.Rules = rulesValue(n.Rules)
	}
}
