package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// importedKey is the private-state key ImportState sets and the first
// update after it clears: until then, attributes the platform cannot report
// hold no real value in state.
//
// The first plan after an import must therefore be an update: a no-op plan
// calls nothing that could clear the flag (Read cannot tell the refresh of
// that plan from later ones, and a no-op's planned private state is never
// stored), so it would stay and exempt every later change of these
// attributes from replacement. importedGuaranteed makes sure of it.
const importedKey = "imported"

// importedGuaranteed is guaranteed in an imported state, prime_sandbox's and
// a fleet's: null, since the platform does not report it. guaranteed has a
// default, so the first plan after an import always records a value for it
// (an update that clears importedKey, never a no-op), and shows that it
// does.
func importedGuaranteed() types.Bool { return types.BoolNull() }

// privateGetter is what attribute plan modifier requests and resource
// requests offer to read private state.
type privateGetter interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
}

// wasImported reports whether the resource came from an import and has not
// been applied since.
func wasImported(ctx context.Context, p privateGetter) bool {
	if p == nil {
		return false
	}
	v, _ := p.GetKey(ctx, importedKey)
	return len(v) > 0
}

// markImported and clearImported set and remove the flag.
func markImported(ctx context.Context, p interface {
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}) diag.Diagnostics {
	return p.SetKey(ctx, importedKey, []byte(`true`))
}

func clearImported(ctx context.Context, p interface {
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}) diag.Diagnostics {
	return p.SetKey(ctx, importedKey, nil)
}

const notReadBackDesc = "Changing it replaces the resource, except after an import: the platform cannot report " +
	"this value, so the first apply after an import records the configured value without replacing anything."

// The replaceUnlessImported* modifiers force replacement on a change like
// RequiresReplace, except while the resource is freshly imported: then the
// state holds no real value for an attribute the platform cannot report, and
// replacing would destroy what was just imported (the planned update only
// records the configuration).

func replaceUnlessImportedString() planmodifier.String {
	return stringplanmodifier.RequiresReplaceIf(func(ctx context.Context, req planmodifier.StringRequest, resp *stringplanmodifier.RequiresReplaceIfFuncResponse) {
		resp.RequiresReplace = !wasImported(ctx, req.Private)
	}, notReadBackDesc, notReadBackDesc)
}

func replaceUnlessImportedBool() planmodifier.Bool {
	return boolplanmodifier.RequiresReplaceIf(func(ctx context.Context, req planmodifier.BoolRequest, resp *boolplanmodifier.RequiresReplaceIfFuncResponse) {
		resp.RequiresReplace = !wasImported(ctx, req.Private)
	}, notReadBackDesc, notReadBackDesc)
}

func replaceUnlessImportedInt64() planmodifier.Int64 {
	return int64planmodifier.RequiresReplaceIf(func(ctx context.Context, req planmodifier.Int64Request, resp *int64planmodifier.RequiresReplaceIfFuncResponse) {
		resp.RequiresReplace = !wasImported(ctx, req.Private)
	}, notReadBackDesc, notReadBackDesc)
}

func replaceUnlessImportedMap() planmodifier.Map {
	return mapplanmodifier.RequiresReplaceIf(func(ctx context.Context, req planmodifier.MapRequest, resp *mapplanmodifier.RequiresReplaceIfFuncResponse) {
		resp.RequiresReplace = !wasImported(ctx, req.Private)
	}, notReadBackDesc, notReadBackDesc)
}

func replaceUnlessImportedList() planmodifier.List {
	return listplanmodifier.RequiresReplaceIf(func(ctx context.Context, req planmodifier.ListRequest, resp *listplanmodifier.RequiresReplaceIfFuncResponse) {
		resp.RequiresReplace = !wasImported(ctx, req.Private)
	}, notReadBackDesc, notReadBackDesc)
}

// sdkDefaultFloat64 and sdkDefaultInt64 plan an unset Optional+Computed
// argument: on create, the value the provider will send (the Prime SDK's
// default), so the plan is fully known; afterwards, the value in state (the
// platform's, read back), so an import or a platform-side default never
// shows as a diff.
type sdkDefaultFloat64 struct{ v float64 }

func (m sdkDefaultFloat64) Description(context.Context) string {
	return "Unset: the SDK default on create, then the value read back."
}
func (m sdkDefaultFloat64) MarkdownDescription(ctx context.Context) string { return m.Description(ctx) }
func (m sdkDefaultFloat64) PlanModifyFloat64(_ context.Context, req planmodifier.Float64Request, resp *planmodifier.Float64Response) {
	if !req.ConfigValue.IsNull() {
		return
	}
	if req.State.Raw.IsNull() {
		resp.PlanValue = types.Float64Value(m.v)
		return
	}
	if !req.StateValue.IsNull() {
		resp.PlanValue = req.StateValue
	}
}

type sdkDefaultInt64 struct{ v int64 }

func (m sdkDefaultInt64) Description(context.Context) string {
	return "Unset: the SDK default on create, then the value read back."
}
func (m sdkDefaultInt64) MarkdownDescription(ctx context.Context) string { return m.Description(ctx) }
func (m sdkDefaultInt64) PlanModifyInt64(_ context.Context, req planmodifier.Int64Request, resp *planmodifier.Int64Response) {
	if !req.ConfigValue.IsNull() {
		return
	}
	if req.State.Raw.IsNull() {
		resp.PlanValue = types.Int64Value(m.v)
		return
	}
	if !req.StateValue.IsNull() {
		resp.PlanValue = req.StateValue
	}
}
