package tfkit

import (
	"bytes"
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// ImportedKey is the private-state key ImportState sets: while it is
// there, attributes the platform cannot report hold no real value in state,
// and the replaceUnlessImported* modifiers record a configured value
// instead of replacing (the plan warns, naming the attribute and
// `-replace`).
//
// ImportState writes importPending; the import's own Read turns it into
// importRead, and no Read changes it after that: a Read that rewrote
// private state would be a change to `terraform plan -refresh-only
// -detailed-exitcode` (exit 2 while printing "No changes"), so drift
// checks after an import or an adoption could never pass. The marker ends
// with the first Update, which records the configuration (ClearImported).
//
// What that leaves, knowingly: when the first apply after an import plans
// nothing (the configuration says only what the platform reports, as
// `terraform query -generate-config-out` writes it), no Update runs and the
// marker stays. The first later change of an attribute the platform cannot
// report is then recorded in place, with the warning, instead of replacing;
// that apply ends the marker. No scheme can do better without a Read that
// writes: after a no-op apply Terraform stores nothing but the refresh.
const ImportedKey = "imported"

// Values of ImportedKey. Earlier builds counted Reads in it ("0" … "2",
// or `true`); every non-empty value means imported, and only
// importPending means the import's own Read has yet to run.
var (
	importPending = []byte(`0`)
	importRead    = []byte(`1`)
)

// PrivateGetter is what attribute plan modifier requests and resource
// requests offer to read private state.
type PrivateGetter interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
}

// PrivateSetter is what responses offer to write it.
type PrivateSetter interface {
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}

// WasImported reports whether the resource came from an import and no
// Update has recorded its configuration since.
func WasImported(ctx context.Context, p PrivateGetter) bool {
	if p == nil {
		return false
	}
	v, _ := p.GetKey(ctx, ImportedKey)
	return len(v) > 0
}

// MarkImported sets the flag (ImportState); ClearImported removes it (an
// update, which records the configuration).
func MarkImported(ctx context.Context, p PrivateSetter) diag.Diagnostics {
	return p.SetKey(ctx, ImportedKey, importPending)
}

func ClearImported(ctx context.Context, p PrivateSetter) diag.Diagnostics {
	return p.SetKey(ctx, ImportedKey, nil)
}

// ReadAfterImport is what every importable resource's Read calls first:
// it reports whether this is the import's own Read (the one that may read
// what only an import reads), and marks that Read done. Later Reads leave
// private state as they found it.
func ReadAfterImport(ctx context.Context, req PrivateGetter, resp PrivateSetter) (bool, diag.Diagnostics) {
	v, diags := req.GetKey(ctx, ImportedKey)
	if diags.HasError() || !bytes.Equal(v, importPending) {
		return false, diags
	}
	return true, resp.SetKey(ctx, ImportedKey, importRead)
}

const notReadBackDesc = "Changing it replaces the resource, except after an import: the platform cannot report " +
	"this value, so the first apply after an import that changes anything records the configured value without " +
	"replacing (the plan warns)."

// The ReplaceUnlessImported* modifiers force replacement on a change like
// RequiresReplace, except while the resource is freshly imported: then the
// state holds no real value for an attribute the platform cannot report, and
// replacing would destroy what was just imported (the planned update only
// records the configuration).

func ReplaceUnlessImportedString() planmodifier.String {
	return stringplanmodifier.RequiresReplaceIf(func(ctx context.Context, req planmodifier.StringRequest, resp *stringplanmodifier.RequiresReplaceIfFuncResponse) {
		resp.RequiresReplace = !WasImported(ctx, req.Private)
	}, notReadBackDesc, notReadBackDesc)
}

func ReplaceUnlessImportedInt64() planmodifier.Int64 {
	return int64planmodifier.RequiresReplaceIf(func(ctx context.Context, req planmodifier.Int64Request, resp *int64planmodifier.RequiresReplaceIfFuncResponse) {
		resp.RequiresReplace = !WasImported(ctx, req.Private)
	}, notReadBackDesc, notReadBackDesc)
}

func ReplaceUnlessImportedMap() planmodifier.Map {
	return mapplanmodifier.RequiresReplaceIf(func(ctx context.Context, req planmodifier.MapRequest, resp *mapplanmodifier.RequiresReplaceIfFuncResponse) {
		resp.RequiresReplace = !WasImported(ctx, req.Private)
	}, notReadBackDesc, notReadBackDesc)
}

func ReplaceUnlessImportedList() planmodifier.List {
	return listplanmodifier.RequiresReplaceIf(func(ctx context.Context, req planmodifier.ListRequest, resp *listplanmodifier.RequiresReplaceIfFuncResponse) {
		resp.RequiresReplace = !WasImported(ctx, req.Private)
	}, notReadBackDesc, notReadBackDesc)
}

// SDKDefaultFloat64 and SDKDefaultInt64 plan an unset Optional+Computed
// argument: on create, v, the value the provider will send (the Prime SDK's
// default), so the plan is fully known; afterwards, the value in state (the
// platform's, read back), so an import or a platform-side default never
// shows as a diff.
func SDKDefaultFloat64(v float64) planmodifier.Float64 { return sdkDefaultFloat64{v} }

// SDKDefaultInt64 is SDKDefaultFloat64 for whole numbers.
func SDKDefaultInt64(v int64) planmodifier.Int64 { return sdkDefaultInt64{v} }

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
