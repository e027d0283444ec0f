package provider

import (
	"context"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// importedKey is the private-state key ImportState sets: while it is
// there, attributes the platform cannot report hold no real value in state,
// and the replaceUnlessImported* modifiers record a configured value
// instead of replacing.
//
// It must end at the first apply after the import, also when that apply
// plans nothing (an import whose configuration says only what the
// platform reports, such as `terraform query -generate-config-out`
// writes): otherwise it would exempt every later change of these
// attributes from replacement. An update clears it; a no-op stores nothing
// but the refresh, so the refreshes count it down: its value is how many
// Reads have seen it (importRefreshes). The import's own Read takes it to
// 1, which is what `terraform import` stores and what an import block's
// plan sees; the next refresh (the first plan after the import is in
// state) takes it to 2, still exempt; the one after that removes it. Only
// Reads that an apply (or a refresh) stores advance it, so however many
// plans run in between, the exemption lasts until the first apply after
// the import is in state, and no longer (an apply with -refresh=false
// does not advance it).
const importedKey = "imported"

// importRefreshes is the value of importedKey after the Read that removes
// it no longer exempts anything: the import's own Read and one refresh.
const importRefreshes = 2

// importedGuaranteed is guaranteed in an imported state, prime_sandbox's and
// a fleet's: the platform does not report it, so the import assumes the
// default, false. A configuration that leaves it unset then plans no
// change (an import can be a no-op); one that sets true records it in place
// (replaceUnlessImportedBool), with the warning of warnRecordedAfterImport.
func importedGuaranteed() types.Bool { return types.BoolValue(false) }

// privateGetter is what attribute plan modifier requests and resource
// requests offer to read private state.
type privateGetter interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
}

// privateSetter is what responses offer to write it.
type privateSetter interface {
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}

// wasImported reports whether the resource came from an import and the
// first apply after it has not ended the exemption yet.
func wasImported(ctx context.Context, p privateGetter) bool {
	if p == nil {
		return false
	}
	v, _ := p.GetKey(ctx, importedKey)
	return len(v) > 0
}

// markImported sets the flag (ImportState); clearImported removes it (an
// update, which records the configuration).
func markImported(ctx context.Context, p privateSetter) diag.Diagnostics {
	return p.SetKey(ctx, importedKey, []byte(`0`))
}

func clearImported(ctx context.Context, p privateSetter) diag.Diagnostics {
	return p.SetKey(ctx, importedKey, nil)
}

// advanceImported counts one Read against the flag (see importedKey);
// every importable resource's Read calls it first. A flag stored before
// the count existed (`true`, set by ImportState and seen by the import's
// Read) counts as 1.
func advanceImported(ctx context.Context, req privateGetter, resp privateSetter) diag.Diagnostics {
	v, diags := req.GetKey(ctx, importedKey)
	if len(v) == 0 || diags.HasError() {
		return diags
	}
	next, ok := nextImportRefresh(v)
	if !ok {
		return clearImported(ctx, resp)
	}
	return resp.SetKey(ctx, importedKey, []byte(strconv.Itoa(next)))
}

// nextImportRefresh is the flag's value after one more Read, false when
// that Read ends it.
func nextImportRefresh(v []byte) (int, bool) {
	seen, err := strconv.Atoi(string(v))
	if err != nil {
		seen = 1 // `true`: the earlier form, stored after the import's Read
	}
	if seen+1 > importRefreshes {
		return 0, false
	}
	return seen + 1, true
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
