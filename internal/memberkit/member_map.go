package memberkit

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// MemberField documents one field of a member map's entries.
type MemberField struct {
	Name, Description string
}

// MemberMapAttribute is a computed per-member map (member key → an object
// of fields), the form of every fleet resource's member report.
//
// It is a map of objects, not a map of nested attributes (the same value
// type to Terraform, to state and to configurations that read it): on every
// plan the framework visits a nested attribute's entries one by one and,
// for each, copies the whole map to look it up, so a plan of 3,000 members
// copied 9 million entries, and the second plan of a 3,000-member fleet
// took 3.7 times the CPU of a 1,000-member one. The fields, which a nested
// attribute would document one by one, are listed in the description.
// It panics when fields and types name different fields (a programming
// error that every schema test hits).
func MemberMapAttribute(description string, types_ map[string]attr.Type, fields []MemberField) schema.MapAttribute {
	names := make([]string, 0, len(fields))
	var b strings.Builder
	b.WriteString(description)
	b.WriteString(" Each entry holds:")
	for _, f := range fields {
		names = append(names, f.Name)
		fmt.Fprintf(&b, "\n  - `%s`: %s", f.Name, f.Description)
	}
	want := make([]string, 0, len(types_))
	for name := range types_ {
		want = append(want, name)
	}
	sort.Strings(names)
	sort.Strings(want)
	if strings.Join(names, ",") != strings.Join(want, ",") {
		panic(fmt.Sprintf("member map fields %v do not match its types %v", names, want))
	}
	return schema.MapAttribute{
		Computed:            true,
		ElementType:         types.ObjectType{AttrTypes: types_},
		MarkdownDescription: b.String(),
	}
}
