package tfkit

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// TimeoutsBlock is a `timeouts` block with the given keys (name →
// description). It has the timeouts package's value type, so the standard
// keys read with Value.Create/Delete, and adds keys of its own (egress) that
// TimeoutOf reads.
func TimeoutsBlock(keys map[string]string) schema.Block {
	attrs := make(map[string]schema.Attribute, len(keys))
	for k, d := range keys {
		attrs[k] = schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: d + " A duration such as `\"30s\"`, `\"20m\"` or `\"1h30m\"`.",
			Validators:          []validator.String{durationValidator{}},
		}
	}
	return schema.SingleNestedBlock{
		Attributes: attrs,
		CustomType: timeouts.Type{ObjectType: types.ObjectType{AttrTypes: TimeoutsAttrTypes(keys)}},
	}
}

// TimeoutsAttrTypes is the object type of a timeouts block with these keys.
func TimeoutsAttrTypes(keys map[string]string) map[string]attr.Type {
	out := make(map[string]attr.Type, len(keys))
	for k := range keys {
		out[k] = types.StringType
	}
	return out
}

// TimeoutOf reads one key of a timeouts block, or def when unset.
func TimeoutOf(v timeouts.Value, key string, def time.Duration) (time.Duration, diag.Diagnostics) {
	var diags diag.Diagnostics
	raw, ok := v.Attributes()[key]
	if !ok || raw.IsNull() || raw.IsUnknown() {
		return def, diags
	}
	s, ok := raw.(types.String)
	if !ok {
		return def, diags
	}
	d, err := time.ParseDuration(s.ValueString())
	if err != nil {
		diags.AddError("Timeout cannot be parsed", fmt.Sprintf("timeouts.%s: %v", key, err))
		return def, diags
	}
	return d, diags
}

// durationValidator accepts Go duration strings that are positive.
type durationValidator struct{}

func (durationValidator) Description(context.Context) string {
	return "must be a positive duration such as \"30s\" or \"20m\""
}
func (v durationValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }
func (durationValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	d, err := time.ParseDuration(req.ConfigValue.ValueString())
	if err != nil || d <= 0 {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid timeout",
			fmt.Sprintf("%s: %q is not a positive duration such as \"30s\", \"20m\" or \"1h30m\"", req.Path, req.ConfigValue.ValueString()))
	}
}
