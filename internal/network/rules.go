package network

// The plan-time checks of rules and tags. The rules themselves (selector
// and tag grammar, port bounds) are internal/prime's, which the client also
// applies before a request; here each problem is attached to the attribute
// and entry it is about.

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

// problem is one plan-time error: where, and what is wrong there.
type problem struct {
	Path   path.Path
	Detail string
}

// ruleProblems checks a `rules` list at p; parts not yet known are
// skipped (they are checked again at apply).
func ruleProblems(p path.Path, v types.List) []problem {
	var out []problem
	for i, e := range tfkit.ObjectsOf(v) {
		obj, ok := e.(types.Object)
		if !ok || obj.IsUnknown() || obj.IsNull() {
			continue
		}
		at := p.AtListIndex(i)
		a := obj.Attributes()
		for _, name := range []string{"from", "to"} {
			sel := tfkit.StringAttr(a, name)
			if sel.IsUnknown() || sel.IsNull() {
				continue
			}
			if err := prime.ValidateSelector(sel.ValueString()); err != nil {
				out = append(out, problem{at.AtName(name), fmt.Sprintf("%s: %s", at.AtName(name), err)})
			}
		}
		if ports, known := portsOf(a["ports"]); known {
			if err := prime.ValidateRulePorts(ports); err != nil {
				out = append(out, problem{at.AtName("ports"), fmt.Sprintf("%s: %s", at.AtName("ports"), err)})
			}
		}
	}
	return out
}

// tagProblems checks a set of tags at p; unknown tags are skipped.
func tagProblems(p path.Path, v types.Set) []problem {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	var out []problem
	for _, e := range v.Elements() {
		s, ok := e.(types.String)
		if !ok || s.IsUnknown() || s.IsNull() {
			continue
		}
		if err := prime.ValidateTag(s.ValueString()); err != nil {
			out = append(out, problem{p.AtSetValue(e), fmt.Sprintf("%s: %s", p, err)})
		}
	}
	return out
}

// addProblems reports problems as attribute errors under summary.
func addProblems(diags *diag.Diagnostics, summary string, problems []problem) {
	for _, pr := range problems {
		diags.AddAttributeError(pr.Path, summary, pr.Detail)
	}
}

// tagsOf reads a known set of tags, sorted; nil while unknown.
func tagsOf(v types.Set) []string {
	if v.IsUnknown() {
		return nil
	}
	out := []string{}
	for _, e := range v.Elements() {
		s, ok := e.(types.String)
		if !ok || s.IsUnknown() {
			return nil
		}
		out = append(out, s.ValueString())
	}
	return sortedUnique(out)
}

// tagsValue is tags as a set value.
func tagsValue(tags []string) types.Set {
	elems := make([]attr.Value, 0, len(tags))
	for _, t := range sortedUnique(tags) {
		elems = append(elems, types.StringValue(t))
	}
	return types.SetValueMust(types.StringType, elems)
}

func sortedUnique(ss []string) []string {
	set := tfkit.SetOf(ss)
	return tfkit.SortedKeys(set)
}
