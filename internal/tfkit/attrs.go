package tfkit

import (
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// StringAttr, Int64Attr and BoolAttr read one attribute of an object whose
// type the schema fixes; a missing one reads as null. They convert by hand,
// without the framework's reflection, which compiles a regular expression
// for every struct field it visits.
func StringAttr(a map[string]attr.Value, name string) types.String {
	if v, ok := a[name].(types.String); ok {
		return v
	}
	return types.StringNull()
}

func Int64Attr(a map[string]attr.Value, name string) types.Int64 {
	if v, ok := a[name].(types.Int64); ok {
		return v
	}
	return types.Int64Null()
}

func BoolAttr(a map[string]attr.Value, name string) types.Bool {
	if v, ok := a[name].(types.Bool); ok {
		return v
	}
	return types.BoolNull()
}

// ObjectsOf is the elements of a list value; none when it is null, unknown
// or not a list.
func ObjectsOf(v attr.Value) []attr.Value {
	l, ok := v.(types.List)
	if !ok || l.IsNull() || l.IsUnknown() {
		return nil
	}
	return l.Elements()
}
