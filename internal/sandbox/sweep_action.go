package sandbox

// prime_sandbox_sweep (Terraform 1.14+ action): deletes the running
// sandboxes that carry labels and are older than a duration — what a lost
// state or a crashed CI run leaves behind — with a dry run by default.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/action"
	actionschema "github.com/hashicorp/terraform-plugin-framework/action/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/memberkit"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

var (
	_ action.ActionWithConfigure      = (*sandboxSweepAction)(nil)
	_ action.ActionWithValidateConfig = (*sandboxSweepAction)(nil)
)

// NewSweepAction is the prime_sandbox_sweep constructor.
func NewSweepAction() action.Action { return &sandboxSweepAction{} }

type sandboxSweepAction struct {
	client *prime.Client
	now    func() time.Time // time.Now; tests pin it
}

type sandboxSweepModel struct {
	Labels    types.Set    `tfsdk:"labels"`
	OlderThan types.String `tfsdk:"older_than"`
	DryRun    types.Bool   `tfsdk:"dry_run"`
	TeamID    types.String `tfsdk:"team_id"`
}

func (a *sandboxSweepAction) Metadata(_ context.Context, req action.MetadataRequest, resp *action.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_sandbox_sweep"
}

func (a *sandboxSweepAction) Configure(_ context.Context, req action.ConfigureRequest, resp *action.ConfigureResponse) {
	a.client = tfkit.ClientFrom(req.ProviderData, &resp.Diagnostics)
}

func (a *sandboxSweepAction) Schema(_ context.Context, _ action.SchemaRequest, resp *action.SchemaResponse) {
	resp.Schema = actionschema.Schema{
		MarkdownDescription: "Deletes the sandboxes that carry every one of `labels` and are older than `older_than` " +
			"(Terraform 1.14+): the clean-up for what a lost state or a crashed run left running, with `terraform " +
			"apply -invoke=action.prime_sandbox_sweep.<name>`, or from a resource's `lifecycle { action_trigger { " +
			"... } }`.\n\n" +
			"`dry_run` defaults to `true`: the action then only lists, as progress, what it would delete. With " +
			"`dry_run = false` it deletes them in bulk (`DELETE /api/v1/sandbox`, 500 IDs per request), reports " +
			"each sandbox it deleted, waits until they are gone (up to 5 minutes), and fails naming every sandbox " +
			"the platform did not delete and why. Only sandboxes that are not in a terminal status are considered. " +
			"A sandbox that Terraform manages is deleted like any other: choose labels that only leftovers carry " +
			"(a run's label), and look at the dry run first. There is no filter-less sweep: `labels` needs at least " +
			"one label.\n\n" + tfkit.ActionsKeepNothing,
		Attributes: map[string]actionschema.Attribute{
			"labels": actionschema.SetAttribute{
				Required: true, ElementType: types.StringType,
				MarkdownDescription: "Delete only sandboxes that carry **all** of these labels. At least one: a " +
					"sweep without labels is refused.",
				Validators: []validator.Set{setvalidator.ValueStringsAre(stringvalidator.LengthAtLeast(1))},
			},
			"older_than": actionschema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Delete only sandboxes created more than this long ago, as a Go duration " +
					"(`90m`, `24h`, `168h`). Unset: any age.",
			},
			"dry_run": actionschema.BoolAttribute{
				Optional: true,
				MarkdownDescription: "List what would be deleted without deleting anything. Default `true`; set " +
					"`false` to delete.",
			},
			"team_id": actionschema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Team whose sandboxes to sweep. Unset: the provider's `team_id` (or the key's personal account).",
			},
		},
	}
}

func (a *sandboxSweepAction) ValidateConfig(ctx context.Context, req action.ValidateConfigRequest, resp *action.ValidateConfigResponse) {
	var m sandboxSweepModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if !resp.Diagnostics.HasError() {
		checkSweep(ctx, m, &resp.Diagnostics)
	}
}

// checkSweep reads and checks a sweep's labels and age, at validation (when
// they may be unknown still) and again before it deletes anything.
func checkSweep(ctx context.Context, m sandboxSweepModel, diags *diag.Diagnostics) (labels []string, age time.Duration) {
	if !m.Labels.IsUnknown() && len(m.Labels.Elements()) == 0 {
		diags.AddAttributeError(path.Root("labels"), "Sweep without labels",
			"prime_sandbox_sweep needs at least one label: without one it would delete every sandbox of the team.")
	}
	labels, d := tfkit.StringSet(ctx, m.Labels)
	diags.Append(d...)
	age, err := olderThan(m.OlderThan)
	if err != nil {
		diags.AddAttributeError(path.Root("older_than"), "Invalid older_than", err.Error())
	}
	return labels, age
}

// olderThan reads older_than: 0 when unset (or unknown, at validation).
func olderThan(v types.String) (time.Duration, error) {
	if v.IsNull() || v.IsUnknown() {
		return 0, nil
	}
	d, err := time.ParseDuration(v.ValueString())
	switch {
	case err != nil:
		return 0, fmt.Errorf("older_than: %q is not a duration such as 90m or 24h", v.ValueString())
	case d < 0:
		return 0, fmt.Errorf("older_than: %q is negative", v.ValueString())
	}
	return d, nil
}

// sweepFilter is the sandboxes a sweep deletes: running (not terminal),
// every label, created before now - age.
func sweepFilter(labels []string, team string, age time.Duration, now time.Time) sandboxFilter {
	f := sandboxFilter{labels: labels, team: team}
	if age > 0 {
		before := now.Add(-age)
		f.before = &before
	}
	return f
}

func (a *sandboxSweepAction) Invoke(ctx context.Context, req action.InvokeRequest, resp *action.InvokeResponse) {
	if !tfkit.RequireClient(a.client, &resp.Diagnostics) {
		return
	}
	var m sandboxSweepModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	labels, age := checkSweep(ctx, m, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	now := time.Now
	if a.now != nil {
		now = a.now
	}
	filter := sweepFilter(labels, m.TeamID.ValueString(), age, now())
	progress := tfkit.ProgressTo(resp)
	members := map[string]fleetMember{}
	var found []*prime.Sandbox
	if err := filter.walk(ctx, a.client, 0, func(sb *prime.Sandbox) bool {
		found = append(found, sb)
		members[sb.ID] = fleetMember{ID: types.StringValue(sb.ID), Name: types.StringValue(sb.Name)}
		return true
	}); err != nil {
		resp.Diagnostics.AddError("Cannot list sandboxes", err.Error())
		return
	}
	what := sweepDescription(labels, age)
	dryRun := m.DryRun.IsNull() || m.DryRun.ValueBool()
	if dryRun {
		for _, sb := range found {
			progress("would delete " + sweptSandbox(sb))
		}
		progress(fmt.Sprintf("dry run: %d sandbox(es) %s would be deleted; set dry_run = false to delete them", len(found), what))
		return
	}
	if len(found) == 0 {
		progress(fmt.Sprintf("no sandbox %s: nothing to delete", what))
		return
	}
	progress(fmt.Sprintf("deleting %d sandbox(es) %s", len(found), what))
	// The fleet's bulk delete: chunks of 500, "not found" counts as gone,
	// every deleted sandbox waited for, every failure named.
	var problems memberkit.Problems
	kept := deleteMembers(ctx, a.client, members, tfkit.SortedKeys(members), defaultSandboxDeleteTimeout, &problems)
	for _, sb := range found {
		if _, failed := kept[sb.ID]; !failed && !problems.Has(sb.ID) {
			progress("deleted " + sweptSandbox(sb))
		}
	}
	if problems.Len() > 0 {
		resp.Diagnostics.AddError("Sandboxes not deleted",
			fmt.Sprintf("%d of the %d sandboxes %s were not deleted (keyed by sandbox ID):\n\n%s",
				problems.Len(), len(found), what, problems.String()))
	}
}

// sweepDescription says which sandboxes a sweep takes, for its messages.
func sweepDescription(labels []string, age time.Duration) string {
	s := "labelled " + strings.Join(labels, ", ")
	if age > 0 {
		s += " and older than " + age.String()
	}
	return s
}

// sweptSandbox names a sandbox in the sweep's progress.
func sweptSandbox(sb *prime.Sandbox) string {
	return fmt.Sprintf("%s, created %s", sandboxDisplayName(sb), sb.CreatedAt.UTC().Format(time.RFC3339))
}
