package tfkit

import (
	"context"
	"reflect"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The models of this provider are structs of attr.Value fields (types.String,
// timeouts.Value, …) tagged `tfsdk:"name"`, possibly through embedded
// structs. The framework's Get and Set reflect over them on every call and
// compile a regular expression per field to check its tag: for prime_sandbox
// (35 attributes) about a tenth of the provider's CPU in a 200-sandbox apply.
// GetState, GetPlan, GetConfig, SetState and SetPlan do the same conversion with the fields of each
// model type looked up once; anything they do not handle exactly goes to the
// framework's own Get or Set, so the result is the same either way.

// modelField is one tagged field of a model: its attribute name and where
// it is in the struct.
type modelField struct {
	name  string
	index []int
}

var modelFieldsCache sync.Map // reflect.Type → []modelField (nil: not a model the codec handles)

// modelFields lists the tagged fields of struct type t, embedded structs
// included; nil when a field is not an attr.Value with a tag.
func modelFields(t reflect.Type) []modelField {
	if v, ok := modelFieldsCache.Load(t); ok {
		return v.([]modelField)
	}
	fields, ok := collectModelFields(t, nil)
	if !ok {
		fields = nil
	}
	modelFieldsCache.Store(t, fields)
	return fields
}

var attrValueType = reflect.TypeFor[attr.Value]()

func collectModelFields(t reflect.Type, prefix []int) ([]modelField, bool) {
	if t.Kind() != reflect.Struct {
		return nil, false
	}
	var out []modelField
	for i := range t.NumField() {
		f := t.Field(i)
		index := append(append([]int(nil), prefix...), i)
		tag, hasTag := f.Tag.Lookup("tfsdk")
		switch {
		case f.Anonymous && !hasTag:
			inner, ok := collectModelFields(f.Type, index)
			if !ok {
				return nil, false
			}
			out = append(out, inner...)
		case !f.IsExported():
		case tag == "-":
		case !hasTag || tag == "" || strings.Contains(tag, ","):
			return nil, false
		case !f.Type.Implements(attrValueType):
			return nil, false
		default:
			out = append(out, modelField{name: tag, index: index})
		}
	}
	return out, true
}

// decodeModel sets target's fields from raw, an object of type typ; false
// when the codec does not handle it (the caller uses the framework's Get).
func decodeModel(ctx context.Context, raw tftypes.Value, typ attr.Type, target any) bool {
	rv := reflect.ValueOf(target)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || raw.IsNull() || !raw.IsKnown() {
		return false
	}
	fields := modelFields(rv.Elem().Type())
	if fields == nil {
		return false
	}
	v, err := typ.ValueFromTerraform(ctx, raw)
	if err != nil {
		return false
	}
	obj, ok := v.(types.Object)
	if !ok {
		return false
	}
	attrs := obj.Attributes()
	if len(attrs) != len(fields) {
		return false
	}
	elem := rv.Elem()
	for _, f := range fields {
		a, ok := attrs[f.name]
		if !ok || a == nil || !reflect.TypeOf(a).AssignableTo(elem.FieldByIndex(f.index).Type()) {
			return false
		}
	}
	for _, f := range fields {
		elem.FieldByIndex(f.index).Set(reflect.ValueOf(attrs[f.name]))
	}
	return true
}

// encodeModel is src (a model or a pointer to one) as an object of type
// typ; false when the codec does not handle it (the caller uses the
// framework's Set).
func encodeModel(ctx context.Context, typ attr.Type, src any) (tftypes.Value, bool) {
	rv := reflect.ValueOf(src)
	if rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return tftypes.Value{}, false
		}
		rv = rv.Elem()
	}
	withAttrs, ok := typ.(attr.TypeWithAttributeTypes)
	if !ok {
		return tftypes.Value{}, false
	}
	fields := modelFields(rv.Type())
	if fields == nil {
		return tftypes.Value{}, false
	}
	attrs := make(map[string]attr.Value, len(fields))
	for _, f := range fields {
		v, ok := rv.FieldByIndex(f.index).Interface().(attr.Value)
		if !ok || v == nil {
			return tftypes.Value{}, false
		}
		attrs[f.name] = v
	}
	obj, d := types.ObjectValue(withAttrs.AttributeTypes(), attrs)
	if d.HasError() {
		return tftypes.Value{}, false
	}
	tv, err := obj.ToTerraformValue(ctx)
	if err != nil {
		return tftypes.Value{}, false
	}
	return tv, true
}

// CodecHandles reports whether the codec converts model (a pointer to a
// model struct) itself; false means its Get and Set pay for the framework's
// reflection.
func CodecHandles(model any) bool {
	t := reflect.TypeOf(model)
	if t == nil || t.Kind() != reflect.Pointer {
		return false
	}
	return modelFields(t.Elem()) != nil
}

// GetState, GetPlan and GetConfig are State.Get, Plan.Get and Config.Get.
func GetState(ctx context.Context, s tfsdk.State, target any) diag.Diagnostics {
	if s.Schema != nil && decodeModel(ctx, s.Raw, s.Schema.Type(), target) {
		return nil
	}
	return s.Get(ctx, target)
}

func GetPlan(ctx context.Context, p tfsdk.Plan, target any) diag.Diagnostics {
	if p.Schema != nil && decodeModel(ctx, p.Raw, p.Schema.Type(), target) {
		return nil
	}
	return p.Get(ctx, target)
}

func GetConfig(ctx context.Context, c tfsdk.Config, target any) diag.Diagnostics {
	if c.Schema != nil && decodeModel(ctx, c.Raw, c.Schema.Type(), target) {
		return nil
	}
	return c.Get(ctx, target)
}

// SetState and SetPlan are State.Set and Plan.Set.
func SetState(ctx context.Context, s *tfsdk.State, src any) diag.Diagnostics {
	if s.Schema != nil {
		if tv, ok := encodeModel(ctx, s.Schema.Type(), src); ok {
			return s.Set(ctx, tv) // a tftypes.Value: type-checked, stored as is
		}
	}
	return s.Set(ctx, src)
}

func SetPlan(ctx context.Context, p *tfsdk.Plan, src any) diag.Diagnostics {
	if p.Schema != nil {
		if tv, ok := encodeModel(ctx, p.Schema.Type(), src); ok {
			return p.Set(ctx, tv)
		}
	}
	return p.Set(ctx, src)
}

// SetStateAny is SetState for a state behind an interface (a *tfsdk.State
// takes the codec; anything else its own Set).
func SetStateAny(ctx context.Context, state interface {
	Set(context.Context, any) diag.Diagnostics
}, m any) diag.Diagnostics {
	if st, ok := state.(*tfsdk.State); ok {
		return SetState(ctx, st, m)
	}
	return state.Set(ctx, m)
}
