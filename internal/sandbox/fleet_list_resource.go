package sandbox

// The prime_sandbox_fleet list resource (Terraform 1.14+): sandboxes
// grouped into fleets by a label, one result per label, each importing the
// whole fleet as `prime_sandbox_fleet`'s import by that label would.

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

var _ list.ListResourceWithConfigure = (*fleetListResource)(nil)

// NewFleetListResource is the prime_sandbox_fleet list resource constructor.
func NewFleetListResource() list.ListResource { return &fleetListResource{} }

type fleetListResource struct{ client *prime.Client }

type fleetListModel struct {
	Label       types.String `tfsdk:"label"`
	LabelPrefix types.String `tfsdk:"label_prefix"`
	Labels      types.List   `tfsdk:"labels"`
	TeamID      types.String `tfsdk:"team_id"`
}

func (l *fleetListResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_sandbox_fleet"
}

func (l *fleetListResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	l.client = tfkit.ClientFrom(req.ProviderData, &resp.Diagnostics)
}

func (l *fleetListResource) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	oneOf := []validator.String{stringvalidator.LengthAtLeast(1),
		stringvalidator.ExactlyOneOf(path.MatchRoot("label"), path.MatchRoot("label_prefix"))}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Finds fleets for `terraform query` (Terraform 1.14+): running sandboxes grouped by a " +
			"label, **one result per label**, named `<label> (<n> members)`. Each result's identity is the label " +
			"and its members' IDs, so the `import` block `terraform query -generate-config-out=...` writes imports " +
			"the whole fleet, as `terraform import ... label:<label>` would, and with `include_resource = true` " +
			"the result carries what that import holds (the template every member reports, `size` or `members` " +
			"from the member names, the egress block they share), which the generated `prime_sandbox_fleet` " +
			"block says, so its import plans no other change. As on `prime_sandbox`, what the platform cannot " +
			"report (`secrets`, `secrets_wo`, `secrets_wo_version`), and the deprecated `vm`, are left out.\n\n" +
			"Sandboxes that cannot be one fleet (created from different templates, or two of one name) give a " +
			"warning naming the label and why, instead of a result. The list reads every matching sandbox (paged, " +
			"100 at a time) before grouping; `limit` (default 100) bounds the number of fleets.",
		Attributes: map[string]schema.Attribute{
			"label": schema.StringAttribute{
				Optional: true, Validators: oneOf,
				MarkdownDescription: "The fleet carrying exactly this label (at most one result). Exactly one of " +
					"`label` and `label_prefix`.",
			},
			"label_prefix": schema.StringAttribute{
				Optional: true, Validators: oneOf,
				MarkdownDescription: "Every label that starts with this names a fleet, e.g. `eval-run-` for " +
					"`eval-run-41` and `eval-run-42`; a sandbox carrying two such labels is a member of both. " +
					"Exactly one of `label` and `label_prefix`.",
			},
			"labels": schema.ListAttribute{
				Optional: true, ElementType: types.StringType,
				MarkdownDescription: "Only sandboxes that also carry **all** of these labels. Unset: no further filter.",
				Validators:          []validator.List{listvalidator.ValueStringsAre(stringvalidator.LengthAtLeast(1))},
			},
			"team_id": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Team to list. Unset: the provider's `team_id` (or the key's personal account).",
			},
		},
	}
}

// fleetGroups groups sandboxes by the labels that name fleets (label
// exactly, or every label with labelPrefix), each group in the order
// given; the labels come sorted.
func fleetGroups(sbs []prime.Sandbox, label, labelPrefix string) (labels []string, groups map[string][]prime.Sandbox) {
	groups = map[string][]prime.Sandbox{}
	for _, sb := range sbs {
		for _, l := range userLabels(sb.Labels) { // the provider's own labels name no fleet
			if (label != "" && l == label) || (label == "" && strings.HasPrefix(l, labelPrefix)) {
				groups[l] = append(groups[l], sb)
			}
		}
	}
	for l := range groups {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	return labels, groups
}

func (l *fleetListResource) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	var m fleetListModel
	diags := req.Config.Get(ctx, &m)
	labels, d := tfkit.StringList(ctx, m.Labels)
	diags.Append(d...)
	if !diags.HasError() && !tfkit.RequireClient(l.client, &diags) {
		return
	}
	if diags.HasError() {
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	label, prefix := m.Label.ValueString(), m.LabelPrefix.ValueString()
	filter := sandboxFilter{labels: labels, team: m.TeamID.ValueString()}
	if label != "" {
		filter.labels = append(filter.labels, label)
	}
	stream.Results = func(push func(list.ListResult) bool) {
		var sbs []prime.Sandbox
		if err := filter.walk(ctx, l.client, 0, func(sb *prime.Sandbox) bool { sbs = append(sbs, *sb); return true }); err != nil {
			push(list.ListResult{Diagnostics: diag.Diagnostics{diag.NewErrorDiagnostic("Cannot list sandboxes", err.Error())}})
			return
		}
		names, groups := fleetGroups(sbs, label, prefix)
		pushed := int64(0)
		for _, name := range names {
			if req.Limit > 0 && pushed >= req.Limit {
				return
			}
			result, isFleet := l.result(ctx, req, name, groups[name])
			if isFleet {
				pushed++
			}
			if !push(result) {
				return
			}
		}
	}
}

// result is one fleet's result, or (false) a warning that the sandboxes
// carrying label cannot be imported as one fleet.
func (l *fleetListResource) result(ctx context.Context, req list.ListRequest, label string, group []prime.Sandbox) (list.ListResult, bool) {
	notAFleet := func(why string) list.ListResult {
		return list.ListResult{Diagnostics: diag.Diagnostics{diag.NewWarningDiagnostic("Sandboxes are not one fleet",
			fmt.Sprintf("The sandboxes labelled %q cannot be imported as one prime_sandbox_fleet, so they are not "+
				"listed: %s", label, why))}}
	}
	members, err := orderFleetMembers("label:"+label, membersLabelled(group, label))
	if err != nil {
		return notAFleet(err.Error()), false
	}
	result := req.NewListResult(ctx)
	result.DisplayName = fmt.Sprintf("%s (%d members)", label, len(members))
	ids := make([]string, len(members))
	for i, sb := range members {
		ids[i] = sb.ID
	}
	identity, d := fleetIdentityValue(ctx, "", label, ids) // no id: the import gives the fleet one
	result.Diagnostics.Append(d...)
	result.Diagnostics.Append(result.Identity.Set(ctx, identity)...)
	if !req.IncludeResource {
		return result, true
	}
	var diags diag.Diagnostics
	f, ok := (&sandboxFleetResource{client: l.client}).fleetOfMembers(ctx, members, &diags)
	if !ok {
		return notAFleet(tfkit.DiagSummary(diags)), false
	}
	result.Diagnostics.Append(diags...) // warnings, such as members holding different egress policies
	f.VM = listedVM()
	result.Diagnostics.Append(result.Resource.Set(ctx, f)...)
	return result, true
}
