package provider

import (
	"bytes"
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
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
// instead of replacing (the plan warns, naming the attribute and
// `-replace`).
//
// ImportState writes importPending; the import's own Read turns it into
// importRead, and no Read changes it after that: a Read that rewrote
// private state would be a change to `terraform plan -refresh-only
// -detailed-exitcode` (exit 2 while printing "No changes"), so drift
// checks after an import or an adoption could never pass. The marker ends
// with the first Update, which records the configuration (clearImported).
//
// What that leaves, knowingly: when the first apply after an import plans
// nothing (the configuration says only what the platform reports, as
// `terraform query -generate-config-out` writes it), no Update runs and the
// marker stays. The first later change of an attribute the platform cannot
// report is then recorded in place, with the warning, instead of replacing;
// that apply ends the marker. No scheme can do better without a Read that
// writes: after a no-op apply Terraform stores nothing but the refresh.
const importedKey = "imported"

// Values of importedKey. Earlier builds counted Reads in it ("0" … "2",
// or `true`); every non-empty value means imported, and only
// importPending means the import's own Read has yet to run.
var (
	importPending = []byte(`0`)
	importRead    = []byte(`1`)
)

// privateGetter is what attribute plan modifier requests and resource
// requests offer to read private state.
type privateGetter interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
}

// privateSetter is what responses offer to write it.
type privateSetter interface {
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}

// wasImported reports whether the resource came from an import and no
// Update has recorded its configuration since.
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
	return p.SetKey(ctx, importedKey, importPending)
}

func clearImported(ctx context.Context, p privateSetter) diag.Diagnostics {
	return p.SetKey(ctx, importedKey, nil)
}

// readAfterImport is what every importable resource's Read calls first:
// it reports whether this is the import's own Read (the one that may read
// what only an import reads), and marks that Read done. Later Reads leave
// private state as they found it.
func readAfterImport(ctx context.Context, req privateGetter, resp privateSetter) (bool, diag.Diagnostics) {
	v, diags := req.GetKey(ctx, importedKey)
	if diags.HasError() || !bytes.Equal(v, importPending) {
		return false, diags
	}
	return true, resp.SetKey(ctx, importedKey, importRead)
}

// warnAfterRecordedAfterImport is prime_egress_policy's form of
// warnRecordedAfterImport: after an import, a changed `after` is recorded
// in place (replaceUnlessImportedList) instead of replacing the policy, so
// the setup it names does not run again between a restore and a re-lock;
// the plan says so, and how to replace.
func warnAfterRecordedAfterImport(ctx context.Context, req resource.ModifyPlanRequest, diags *diag.Diagnostics) {
	if req.State.Raw.IsNull() || req.Plan.Raw.IsNull() || !wasImported(ctx, req.Private) {
		return
	}
	var planned, recorded types.List
	diags.Append(req.Plan.GetAttribute(ctx, path.Root("after"), &planned)...)
	diags.Append(req.State.GetAttribute(ctx, path.Root("after"), &recorded)...)
	if planned.Equal(recorded) {
		return
	}
	diags.AddAttributeWarning(path.Root("after"), "Imported policy: recording after without replacing",
		"The platform does not report after of an existing policy, so the imported state has none, and no apply "+
			"has recorded the configuration since the import. This apply records the configured after in state "+
			"without replacing the policy: the setup it names is not run again under open egress first. To "+
			"replace the policy (restore, setup, lock), run terraform apply -replace=<this policy's address>.")
}

const notReadBackDesc = "Changing it replaces the resource, except after an import: the platform cannot report " +
	"this value, so the first apply after an import that changes anything records the configured value without " +
	"replacing (the plan warns)."

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
