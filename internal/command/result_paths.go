package command

// result_paths: the places a command writes its results to, removed right
// before each run, so that whatever is found there after the run (by the
// file data sources, by the artifacts) was written by that run, and a run
// that ends before writing leaves nothing behind rather than a previous
// run's result.

import (
	"context"
	"fmt"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// resultPathsAttribute is result_paths, the same on both command
// resources.
func resultPathsAttribute() schema.SetAttribute {
	return schema.SetAttribute{
		Optional: true, ElementType: types.StringType,
		MarkdownDescription: fmt.Sprintf("Absolute paths (files or directories) the command writes its results to — "+
			"say `[\"/results\"]` for an agent that writes `/results/reward.json` and a transcript. They are removed "+
			"(`rm -rf`) right before every run, in the same shell invocation as the command (foreground and background; "+
			"on a fleet, on every member before its first step), so nothing can write between the removal and the run: "+
			"a file data source or an artifact that reads them after the run finds only what this run wrote, and a run "+
			"that ends before writing leaves them missing instead of showing the previous run's result. If they cannot "+
			"be removed, the command does not run: the run exits with code `%d` and `%s` on stderr. Checked at plan "+
			"time: absolute, no `..` element, neither `/` nor `/tmp` (which holds the background jobs' logs). Unset, "+
			"nothing is removed. Changing it updates in place; the command does not run again.",
			prime.ResultPathsNotClearedCode, prime.ResultPathsNotClearedMessage),
		Validators: []validator.Set{setvalidator.ValueStringsAre(resultPathValidator{})},
	}
}

// resultPathValidator refuses a result path prime.CheckResultPath refuses.
type resultPathValidator struct{}

func (resultPathValidator) Description(context.Context) string {
	return "an absolute path without .. elements, neither / nor /tmp"
}

func (v resultPathValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (resultPathValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	p := req.ConfigValue.ValueString()
	if why := prime.CheckResultPath(p); why != "" {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid result path",
			fmt.Sprintf("result_paths: %q cannot be a result path: %s. A result path is an absolute file or directory the "+
				"command writes its results to, removed right before every run.", p, why))
	}
}

// resultPathsOf reads result_paths, sorted (nil when unset).
func resultPathsOf(ctx context.Context, v types.Set, diags *diag.Diagnostics) []string {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	var out []string
	diags.Append(v.ElementsAs(ctx, &out, false)...)
	slices.Sort(out)
	return out
}
