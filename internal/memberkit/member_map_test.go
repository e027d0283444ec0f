package memberkit

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestMemberMapAttribute(t *testing.T) {
	typs := map[string]attr.Type{"id": types.StringType, "applied": types.BoolType}
	a := MemberMapAttribute("Member key → its state.", typs, []MemberField{
		{Name: "id", Description: "Sandbox ID."}, {Name: "applied", Description: "Whether it is enforced."},
	})
	if !a.Computed || a.Optional || a.Required {
		t.Fatalf("not computed only: %+v", a)
	}
	if want := (types.ObjectType{AttrTypes: typs}); !a.ElementType.Equal(want) {
		t.Fatalf("element type %s, want %s", a.ElementType, want)
	}
	for _, want := range []string{"Member key → its state.", "- `id`: Sandbox ID.", "- `applied`: Whether it is enforced."} {
		if !strings.Contains(a.MarkdownDescription, want) {
			t.Errorf("description lacks %q:\n%s", want, a.MarkdownDescription)
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("fields that do not match the types were accepted")
		}
	}()
	MemberMapAttribute("x", typs, []MemberField{{Name: "id", Description: "Sandbox ID."}})
}
