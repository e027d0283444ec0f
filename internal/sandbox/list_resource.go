package sandbox

// The prime_sandbox list resource (Terraform 1.14+, `terraform query`):
// finds sandboxes by labels, status, name, team and age, each with its
// identity and, asked for, what an import of it holds, so that `terraform
// query -generate-config-out` writes configuration and import blocks that
// adopt them without any other change.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

var (
	_ list.ListResourceWithConfigure      = (*sandboxListResource)(nil)
	_ list.ListResourceWithValidateConfig = (*sandboxListResource)(nil)
)

// NewListResource is the prime_sandbox list resource constructor.
func NewListResource() list.ListResource { return &sandboxListResource{} }

type sandboxListResource struct{ client *prime.Client }

type sandboxListModel struct {
	Labels        types.List   `tfsdk:"labels"`
	Status        types.String `tfsdk:"status"`
	NamePrefix    types.String `tfsdk:"name_prefix"`
	TeamID        types.String `tfsdk:"team_id"`
	CreatedBefore types.String `tfsdk:"created_before"`
	CreatedAfter  types.String `tfsdk:"created_after"`
}

func (l *sandboxListResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_sandbox"
}

func (l *sandboxListResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	l.client = tfkit.ClientFrom(req.ProviderData, &resp.Diagnostics)
}

// sandboxStatuses are the lifecycle statuses a filter may name.
var sandboxStatuses = []string{prime.StatusPending, prime.StatusProvisioning, prime.StatusRunning, prime.StatusPaused,
	prime.StatusError, prime.StatusTerminated, prime.StatusTimeout}

func (l *sandboxListResource) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Finds sandboxes for `terraform query` (Terraform 1.14+), for example the ones a lost " +
			"state left running, so that `terraform query -generate-config-out=...` writes a `prime_sandbox` block " +
			"and an `import` block (by identity) for each. Results are named `<name> (<id>)`.\n\n" +
			"The list pages through `GET /api/v1/sandbox` (100 per page, the CLI's size) and stops as soon as it has " +
			"`limit` results (the `list` block's meta-argument, default 100). `labels`, `status` and `team_id` are " +
			"sent to the API; every filter is also applied to each sandbox, so filters the API does not take " +
			"(`name_prefix`, `created_before`, `created_after`) and ones it may not apply still hold.\n\n" +
			"With `include_resource = true` each result carries what an import of the sandbox holds after its first " +
			"read (its egress lists as an `egress` block: one more request per sandbox). Settings the platform " +
			"cannot report — `secrets` (returned masked), `secrets_wo` (write-only), `secrets_wo_version` — and " +
			"the deprecated `vm` are left out, so generated configuration does not carry " +
			"them and its import plans no change for them; add them afterwards, and the first apply records them " +
			"(see the resource's Import section).",
		Attributes: map[string]schema.Attribute{
			"labels": schema.ListAttribute{
				Optional: true, ElementType: types.StringType,
				MarkdownDescription: "Only sandboxes that carry **all** of these labels. Unset: any labels.",
				Validators:          []validator.List{listvalidator.ValueStringsAre(stringvalidator.LengthAtLeast(1))},
			},
			"status": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Only sandboxes in this status (`" + strings.Join(sandboxStatuses, "`, `") + "`). " +
					"Unset: every sandbox that is not in a terminal status (`ERROR`, `TERMINATED`, `TIMEOUT`), the " +
					"ones an import can adopt.",
				Validators: []validator.String{stringvalidator.OneOf(sandboxStatuses...)},
			},
			"name_prefix": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Only sandboxes whose name starts with this. Unset: any name.",
			},
			"team_id": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Team to list. Unset: the provider's `team_id` (or the key's personal account).",
			},
			"created_before": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Only sandboxes created before this time (RFC 3339, e.g. `2026-06-01T00:00:00Z`). Unset: no bound.",
			},
			"created_after": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Only sandboxes created at or after this time (RFC 3339). Unset: no bound.",
			},
		},
	}
}

func (l *sandboxListResource) ValidateListResourceConfig(ctx context.Context, req list.ValidateConfigRequest, resp *list.ValidateConfigResponse) {
	var m sandboxListModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	f, d := sandboxFilterOfList(ctx, m)
	resp.Diagnostics.Append(d...)
	if f.after != nil && f.before != nil && !f.after.Before(*f.before) {
		resp.Diagnostics.AddAttributeError(path.Root("created_after"), "Invalid sandbox filter",
			fmt.Sprintf("created_after (%s) must be before created_before (%s): no sandbox could match",
				f.after.Format(time.RFC3339), f.before.Format(time.RFC3339)))
	}
}

// sandboxFilter selects sandboxes: what the prime_sandbox list resource and
// prime_sandbox_sweep match with. The API is sent what it takes; matches
// checks everything again on each sandbox.
type sandboxFilter struct {
	labels     []string
	status     string // "" for every non-terminal status
	namePrefix string
	team       string
	before     *time.Time // created strictly before
	after      *time.Time // created at or after
}

// sandboxFilterOfList reads a list block's configuration. Unknown values
// (not yet known at validation) filter nothing.
func sandboxFilterOfList(ctx context.Context, m sandboxListModel) (sandboxFilter, diag.Diagnostics) {
	labels, diags := tfkit.StringList(ctx, m.Labels)
	f := sandboxFilter{labels: labels, status: m.Status.ValueString(), namePrefix: m.NamePrefix.ValueString(),
		team: m.TeamID.ValueString()}
	for _, b := range []struct {
		attr string
		v    types.String
		into **time.Time
	}{{"created_before", m.CreatedBefore, &f.before}, {"created_after", m.CreatedAfter, &f.after}} {
		if b.v.IsNull() || b.v.IsUnknown() {
			continue
		}
		t, err := time.Parse(time.RFC3339, b.v.ValueString())
		if err != nil {
			diags.AddAttributeError(path.Root(b.attr), "Invalid sandbox filter", fmt.Sprintf("%s: %v", b.attr, err))
			continue
		}
		*b.into = &t
	}
	return f, diags
}

// listOptions is the part of the filter the API takes.
func (f sandboxFilter) listOptions() prime.ListSandboxesOptions {
	opts := prime.ListSandboxesOptions{Labels: f.labels, Status: f.status, TeamID: f.team}
	// With a status the CLI sends is_active=false (do not hide terminal
	// sandboxes, or TERMINATED could never match); without, only the live.
	active := f.status == ""
	opts.IsActive = &active
	return opts
}

// matches applies the whole filter to one sandbox.
func (f sandboxFilter) matches(sb *prime.Sandbox) bool {
	switch {
	case f.status == "" && prime.IsTerminalStatus(sb.Status),
		f.status != "" && sb.Status != f.status,
		!prime.HasAllLabels(sb.Labels, f.labels),
		!strings.HasPrefix(sb.Name, f.namePrefix),
		f.team != "" && (sb.TeamID == nil || *sb.TeamID != f.team),
		f.before != nil && !sb.CreatedAt.Before(*f.before),
		f.after != nil && sb.CreatedAt.Before(*f.after):
		return false
	}
	return true
}

// walk visits the matching sandboxes in the platform's order, at most
// limit of them (<= 0: all), asking for no page past the last one needed.
func (f sandboxFilter) walk(ctx context.Context, c *prime.Client, limit int64, visit func(*prime.Sandbox) bool) error {
	opts := f.listOptions()
	found := int64(0)
	return c.WalkSandboxes(ctx, opts, func(sb prime.Sandbox) bool {
		if !f.matches(&sb) {
			return true
		}
		found++
		return visit(&sb) && (limit <= 0 || found < limit)
	})
}

func (l *sandboxListResource) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	var m sandboxListModel
	diags := req.Config.Get(ctx, &m)
	f, d := sandboxFilterOfList(ctx, m)
	diags.Append(d...)
	if !diags.HasError() && !tfkit.RequireClient(l.client, &diags) {
		return
	}
	if diags.HasError() {
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	stream.Results = func(push func(list.ListResult) bool) {
		err := f.walk(ctx, l.client, req.Limit, func(sb *prime.Sandbox) bool {
			result, keep := sandboxListResult(ctx, l.client, req, sb)
			return !keep || push(result)
		})
		if err != nil {
			push(list.ListResult{Diagnostics: diag.Diagnostics{diag.NewErrorDiagnostic("Cannot list sandboxes", err.Error())}})
		}
	}
}

// sandboxListResult is one result: the sandbox's identity, its display
// name, and with include_resource what an import of it holds (false when
// the sandbox turned out to be gone meanwhile).
func sandboxListResult(ctx context.Context, c *prime.Client, req list.ListRequest, sb *prime.Sandbox) (list.ListResult, bool) {
	result := req.NewListResult(ctx)
	result.DisplayName = sandboxDisplayName(sb)
	result.Diagnostics.Append(setSandboxIdentity(ctx, result.Identity, types.StringValue(sb.ID))...)
	if !req.IncludeResource {
		return result, true
	}
	st := tfsdk.State{Schema: req.ResourceSchema, Raw: tftypes.NewValue(req.ResourceSchema.Type().TerraformType(ctx), nil)}
	result.Diagnostics.Append(importedSandboxState(ctx, &st, sb.ID)...)
	var m sandboxModel
	result.Diagnostics.Append(st.Get(ctx, &m)...)
	if result.Diagnostics.HasError() {
		return result, true
	}
	if gone := refreshSandbox(ctx, c, &m, sb, true, &result.Diagnostics); gone {
		return result, false
	}
	m.VM = listedVM()
	result.Diagnostics.Append(result.Resource.Set(ctx, m)...)
	return result, true
}

// listedVM is vm in a list result (prime_sandbox's and a fleet's): the
// attribute is deprecated (every sandbox is a VM), so generated
// configuration must not carry it, or its every plan would warn. Its
// default, true, is what the import's state then holds.
func listedVM() types.Bool { return types.BoolNull() }

// sandboxDisplayName is a result's name in `terraform query` output.
func sandboxDisplayName(sb *prime.Sandbox) string {
	return fmt.Sprintf("%s (%s)", sb.Name, sb.ID)
}
