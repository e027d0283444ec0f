package network

import (
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

func ruleObj(from, to attr.Value, ports attr.Value) attr.Value {
	return types.ObjectValueMust(ruleAttrTypes, map[string]attr.Value{"from": from, "to": to, "ports": ports})
}

func portList(ports ...int64) types.List {
	elems := make([]attr.Value, len(ports))
	for i, p := range ports {
		elems[i] = types.Int64Value(p)
	}
	return types.ListValueMust(types.Int64Type, elems)
}

func str(s string) types.String { return types.StringValue(s) }

// Each rule problem names the attribute path, the entry and the reason;
// unknown parts are left for apply.
func TestRuleProblems(t *testing.T) {
	for _, c := range []struct {
		name  string
		rules []attr.Value
		want  []string // "path: detail fragment"
	}{
		{"valid", []attr.Value{ruleObj(str("tag:agent"), str("tag:tools"), portList(8080)), ruleObj(str("*"), str("*"), portList(22, 443))}, nil},
		{"port too high", []attr.Value{ruleObj(str("*"), str("*"), portList(80, 70000))},
			[]string{`rules[0].ports|rules[0].ports: port 70000 is not between 1 and 65535`}},
		{"port zero", []attr.Value{ruleObj(str("*"), str("*"), portList(0))},
			[]string{`rules[0].ports|port 0 is not between 1 and 65535`}},
		{"no ports", []attr.Value{ruleObj(str("*"), str("*"), portList())},
			[]string{`rules[0].ports|ports must list at least one port`}},
		{"bare tag", []attr.Value{ruleObj(str("*"), str("*"), portList(1)), ruleObj(str("agent"), str("*"), portList(1))},
			[]string{`rules[1].from|rules[1].from: selector "agent": use "*" (every member) or "tag:<name>"`}},
		{"empty tag", []attr.Value{ruleObj(str("*"), str("tag:"), portList(1))},
			[]string{`rules[0].to|selector "tag:": tag "": use 1 to 63 letters`}},
		{"bad tag characters", []attr.Value{ruleObj(str("tag:a b"), str("*"), portList(1))},
			[]string{`rules[0].from|tag "a b"`}},
		{"unknown parts skipped", []attr.Value{
			ruleObj(types.StringUnknown(), str("*"), types.ListUnknown(types.Int64Type)),
			ruleObj(str("*"), str("*"), types.ListValueMust(types.Int64Type, []attr.Value{types.Int64Unknown()})),
			types.ObjectUnknown(ruleAttrTypes)}, nil},
		{"several problems", []attr.Value{ruleObj(str("x"), str("y"), portList(65536))},
			[]string{`rules[0].from|selector "x"`, `rules[0].to|selector "y"`, `rules[0].ports|port 65536`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := ruleProblems(path.Root("rules"), types.ListValueMust(ruleType(), c.rules))
			if len(got) != len(c.want) {
				t.Fatalf("got %d problems %v, want %d", len(got), got, len(c.want))
			}
			for i, w := range c.want {
				p, frag, _ := strings.Cut(w, "|")
				if got[i].Path.String() != p || !strings.Contains(got[i].Detail, frag) {
					t.Errorf("problem %d = %s: %q, want %s containing %q", i, got[i].Path, got[i].Detail, p, frag)
				}
			}
		})
	}
}

func TestTagProblems(t *testing.T) {
	set := types.SetValueMust(types.StringType, []attr.Value{str("agent"), str("bad tag"), str("-x"), types.StringUnknown()})
	got := tagProblems(path.Root("tags"), set)
	if len(got) != 2 {
		t.Fatalf("got %v, want 2 problems", got)
	}
	for _, p := range got {
		if !strings.HasPrefix(p.Detail, `tags: tag "`) || !strings.Contains(p.Detail, "use 1 to 63 letters") {
			t.Errorf("detail %q", p.Detail)
		}
	}
	if tagProblems(path.Root("tags"), types.SetNull(types.StringType)) != nil {
		t.Error("null tags have problems")
	}
}

// Conversions: rules round-trip; unknowns read as not known; the same
// rules in another order (and ports in another order) are the same.
func TestRuleConversions(t *testing.T) {
	rules := []prime.NetworkRule{{From: "tag:a", To: "tag:b", Ports: []int{80, 443}}, {From: "*", To: "*", Ports: []int{22}}}
	got, ok := rulesOf(rulesValue(rules))
	if !ok || !slices.EqualFunc(got, rules, func(a, b prime.NetworkRule) bool {
		return a.From == b.From && a.To == b.To && slices.Equal(a.Ports, b.Ports)
	}) {
		t.Fatalf("round trip: %v %v", got, ok)
	}
	if empty, ok := rulesOf(rulesValue(nil)); !ok || empty == nil || len(empty) != 0 {
		t.Errorf("no rules read as %v, %v; want an empty, non-nil list", empty, ok)
	}
	if _, ok := rulesOf(types.ListUnknown(ruleType())); ok {
		t.Error("an unknown list is known")
	}
	partly := types.ListValueMust(ruleType(), []attr.Value{ruleObj(str("*"), str("*"), types.ListUnknown(types.Int64Type))})
	if _, ok := rulesOf(partly); ok {
		t.Error("a rule with unknown ports is known")
	}
	for _, c := range []struct {
		name string
		a, b []prime.NetworkRule
		same bool
	}{
		{"reordered", rules, []prime.NetworkRule{rules[1], {From: "tag:a", To: "tag:b", Ports: []int{443, 80}}}, true},
		{"direction", []prime.NetworkRule{{From: "tag:a", To: "tag:b", Ports: []int{1}}}, []prime.NetworkRule{{From: "tag:b", To: "tag:a", Ports: []int{1}}}, false},
		{"port", []prime.NetworkRule{{From: "*", To: "*", Ports: []int{1}}}, []prime.NetworkRule{{From: "*", To: "*", Ports: []int{2}}}, false},
		{"count", rules, rules[:1], false},
		{"both empty", nil, []prime.NetworkRule{}, true},
	} {
		if got := sameRules(c.a, c.b); got != c.same {
			t.Errorf("%s: sameRules = %t, want %t", c.name, got, c.same)
		}
	}
}

// A fleet's keys, or the one sandbox under its own ID; unknown keys are not
// known, an unknown ID reads as "".
func TestWanted(t *testing.T) {
	single := memberModel{SandboxID: str("sb-1"), SandboxIDs: types.MapNull(types.StringType)}
	if got, ok := single.wanted(); !ok || len(got) != 1 || got["sb-1"] != "sb-1" {
		t.Errorf("single: %v %v", got, ok)
	}
	fleetIDs := types.MapValueMust(types.StringType, map[string]attr.Value{"0": str("sb-0"), "1": types.StringUnknown()})
	f := memberModel{SandboxID: types.StringNull(), SandboxIDs: fleetIDs}
	if got, ok := f.wanted(); !ok || got["0"] != "sb-0" || got["1"] != "" || len(got) != 2 {
		t.Errorf("fleet: %v %v", got, ok)
	}
	unknown := memberModel{SandboxID: types.StringNull(), SandboxIDs: types.MapUnknown(types.StringType)}
	if _, ok := unknown.wanted(); ok {
		t.Error("an unknown map is known")
	}
}
