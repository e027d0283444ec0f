package sandbox

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/egress"
	"github.com/primeintellect/terraform-provider-prime/internal/journal"
	"github.com/primeintellect/terraform-provider-prime/internal/memberkit"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

var (
	_ resource.ResourceWithConfigure       = (*sandboxFleetResource)(nil)
	_ resource.ResourceWithValidateConfig  = (*sandboxFleetResource)(nil)
	_ resource.ResourceWithModifyPlan      = (*sandboxFleetResource)(nil)
	_ resource.ResourceWithImportState     = (*sandboxFleetResource)(nil)
	_ resource.ResourceWithIdentity        = (*sandboxFleetResource)(nil)
	_ resource.ResourceWithUpgradeIdentity = (*sandboxFleetResource)(nil)
	_ resource.ResourceWithUpgradeState    = (*sandboxFleetResource)(nil)
)

// NewFleetResource is the prime_sandbox_fleet constructor.
func NewFleetResource() resource.Resource { return &sandboxFleetResource{} }

type sandboxFleetResource struct {
	client   *prime.Client
	journal  *journal.Creates
	recovery *Recovery
}

func (r *sandboxFleetResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_sandbox_fleet"
	// The identity's sandbox_ids follow the members (see fleetIdentityDoc).
	resp.ResourceBehavior.MutableIdentity = true
}

func (r *sandboxFleetResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = fleetIdentitySchema()
}

// UpgradeIdentity reads identities stored before the fleet's id was part
// of it (see fleetIdentityVersion).
func (r *sandboxFleetResource) UpgradeIdentity(context.Context) map[int64]resource.IdentityUpgrader {
	// No PriorSchema: the framework would refuse a state without any
	// stored identity before the upgrader runs (upgradeFleetIdentityV0).
	return map[int64]resource.IdentityUpgrader{0: {IdentityUpgrader: upgradeFleetIdentityV0}}
}

func (r *sandboxFleetResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = tfkit.ClientFrom(req.ProviderData, &resp.Diagnostics)
	r.journal = journal.CreatesFrom(req.ProviderData)
	r.recovery = RecoveryFrom(req.ProviderData)
}

// replacesFleet ends the description of every template argument.
const replacesFleet = " Changing it replaces the whole fleet (the API cannot change a sandbox in place)."

func (r *sandboxFleetResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := sandboxArgumentAttributes(replacesFleet)
	// A template's arch is what it sends: Optional only, with nothing read
	// back into it (an import records a non-default one, templateArch).
	attrs["arch"] = schema.StringAttribute{
		Optional: true, PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
		MarkdownDescription: fmt.Sprintf("CPU architecture of every member: `%s` or `%s`. Sent only when set; "+
			"unset, the platform's default (`%s`) applies.", prime.ArchAMD64, prime.ArchARM64, prime.DefaultArch) +
			replacesFleet,
	}
	attrs["id"] = schema.StringAttribute{
		Computed: true, MarkdownDescription: "ID of the fleet (the provider's, not the platform's).",
		PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
	}
	attrs["size"] = schema.Int64Attribute{
		Optional: true,
		MarkdownDescription: "Number of members, keyed `\"0\"` … `\"N-1\"`. Exactly one of `size` and `members`. " +
			"Changing it adds or removes members in place (the highest keys go first).",
		Validators: []validator.Int64{int64validator.Between(0, 10000),
			int64validator.ExactlyOneOf(path.MatchRoot("size"), path.MatchRoot("members"))},
	}
	attrs["members"] = schema.SetAttribute{
		Optional: true, ElementType: types.StringType,
		MarkdownDescription: "Member keys, e.g. task IDs. Exactly one of `size` and `members`. Adding or removing " +
			"keys creates or deletes those members in place; the others are untouched.",
		Validators: []validator.Set{setvalidator.ValueStringsAre(stringvalidator.LengthBetween(1, 100),
			stringvalidator.RegexMatches(memberKeyPattern, "must be letters, digits, '.', '_' or '-'"))},
	}
	attrs["checkpoint_id"] = fleetCheckpointAttribute()
	takenFromCheckpointInFleet(attrs)
	attrs["member_triggers"] = memberTriggersAttribute()
	attrs["paused"] = schema.BoolAttribute{Optional: true, MarkdownDescription: pausedDescription("every member") +
		" Members are paused or resumed concurrently; the members that fail are named together in one error."}
	attrs["name_prefix"] = schema.StringAttribute{
		Required: true, PlanModifiers: []planmodifier.String{tfkit.ReplaceUnlessImportedString()},
		MarkdownDescription: "Member names are `<name_prefix>-<key>`." + replacesFleet,
		Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
	}
	attrs["sandbox_ids"] = memberkit.SandboxIDsOutputAttribute("Member key → sandbox ID: what `prime_fleet_command` " +
		"and `prime_fleet_egress_policy` take. A member whose sandbox is gone (deleted out of band, stopped) drops " +
		"out at refresh, and the next apply creates it again in place.")
	attrs["sandboxes"] = memberkit.MemberMapAttribute("Member key → what the platform reports.", fleetMemberAttrTypes,
		[]memberkit.MemberField{
			{Name: "id", Description: "Sandbox ID."},
			{Name: "name", Description: "Sandbox name."},
			{Name: "status", Description: "Lifecycle status at the last refresh (`RUNNING` means running and reachable " +
				"through the gateway, as on `prime_sandbox`)."},
			{Name: "created_at", Description: "Creation time (RFC 3339)."},
			{Name: "egress_generation", Description: "With an `egress` block: generation of its policy on this member " +
				"(null without one)."},
			{Name: "egress_applied", Description: "With an `egress` block: whether the data plane enforces it (null " +
				"without one)."},
		})
	resp.Schema = schema.Schema{
		Version: SchemaVersion,
		MarkdownDescription: "A fleet of identical Prime sandboxes as one resource: what an evaluation runs on. " +
			"Every argument of `prime_sandbox` is the members' template, with the same plan-time rules; members are " +
			"keyed by `size` or `members`.\n\n" +
			"Create sends every member's create at once (paced by the provider's request limits, each with its own " +
			"idempotency key and create-journal entry) and waits for all of them together through the shared " +
			"`status:batchGet` poller (up to 100 per request) and the gateway check, so a fleet is ready at the " +
			"platform's pace, not Terraform's `-parallelism`. It returns when every member is `RUNNING` (and, with " +
			"an `egress` block, its born lists are enforced). Members that fail (ERROR, TIMEOUT, never running, lists " +
			"never enforced) fail the apply, naming each member with the platform's error; they are deleted, and " +
			"the healthy members stay in state. (After a failed *first* create Terraform marks the whole fleet " +
			"tainted; `terraform untaint` keeps the healthy members, and the next apply creates only the failed " +
			"ones.)\n\n" +
			"Refresh reads all members through `status:batchGet`; a member gone or stopped out of band drops out and " +
			"the plan re-creates it **in place**. Adding or removing keys creates or deletes just those members; an " +
			"`egress` change updates every member in place; a new `member_triggers` value redoes that one member (its " +
			"sandbox deleted and created again) in place; another `checkpoint_id` restores every member from it in " +
			"place, once that checkpoint exists; any other template change replaces the fleet. Destroy " +
			"deletes all members in bulk and confirms none remains.\n\n" +
			"Import by a label (`label:<label>`: the running sandboxes carrying it) or a comma-separated list of " +
			"sandbox IDs, or by identity (Terraform 1.12+). Member keys come from the names `<prefix>-<key>`.\n\n" +
			"Identity: " + fleetIdentityDoc,
		Attributes: attrs,
		Blocks: map[string]schema.Block{
			"egress":   egress.Block(egress.FleetBornFailClosed),
			"timeouts": tfkit.TimeoutsBlock(sandboxTimeoutKeys("every member", fleetCreateTimeoutOutcome)),
		},
	}
}

// fleetCreateTimeoutOutcome is what a fleet's create timeout leaves: the
// members that were not ready are deleted (as any failed member), the
// healthy ones kept.
const fleetCreateTimeoutOutcome = "On timeout the apply fails, naming the members that were not ready by then; " +
	"they are deleted, the healthy members stay in state, and the next apply creates the deleted ones again " +
	"(after a failed first create, see `terraform untaint` above)."
