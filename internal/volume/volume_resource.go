package volume

// prime_volume: a named disk. Size grows in place (PATCH), never shrinks;
// visibility changes in place; name and team replace it.

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

var (
	_ resource.ResourceWithConfigure   = (*volumeResource)(nil)
	_ resource.ResourceWithImportState = (*volumeResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*volumeResource)(nil)
	_ resource.ResourceWithIdentity    = (*volumeResource)(nil)
)

// NewVolumeResource is the prime_volume constructor.
func NewVolumeResource() resource.Resource { return &volumeResource{} }

type volumeResource struct{ client *prime.Client }

func (r *volumeResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_volume"
}

func (r *volumeResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = tfkit.ClientFrom(req.ProviderData, &resp.Diagnostics)
}

func (r *volumeResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = volumeIdentitySchema()
}

// headDoc describes head_checkpoint_id, for the resource and the data
// source.
const headDoc = "The checkpoint that sandboxes created from now on copy: the volume's latest completed publish. " +
	"Null while the volume was never published (it is empty). Publishes happen from a sandbox, outside this " +
	"resource; a refresh shows the latest."

func (r *volumeResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A named volume: a disk of up to 100 GiB in your personal scope or a team's. A sandbox " +
			"created with it attached gets a **private copy** of the volume's latest published checkpoint (read-write, " +
			"or read-only); its writes are its own until it publishes them, and only sandboxes created after a publish " +
			"completes see it. A volume is a disk of its own: it is not counted in a sandbox's `disk_size_gb` and not " +
			"in sandbox checkpoints.\n\n" +
			"`size_gb` grows **in place** and never shrinks: a smaller size is an error at plan, naming both sizes, " +
			"never a replacement that would lose the data. A new size applies to sandboxes created afterwards " +
			"(attachments already running keep theirs). Destroy deletes the volume (one already gone is success); " +
			"sandboxes already running keep their copies. Import by `<name>` or `<team_id>/<name>`, or by identity.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{Computed: true,
				MarkdownDescription: "`<name>` for a personal volume, `<team_id>/<name>` for a team's.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"name": schema.StringAttribute{Required: true,
				MarkdownDescription: "Name of the volume, unique in its owner's scope: 1 to 40 lowercase letters, digits " +
					"and hyphens, starting and ending with a letter or digit (checked at plan). Sandboxes attach it by " +
					"this name. Changing it replaces the volume (a new, empty one).",
				Validators:    []validator.String{nameValidator{}},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()}},
			"team_id": schema.StringAttribute{Optional: true, Computed: true,
				MarkdownDescription: "Team that owns the volume. Default: the provider's `team_id`, else your personal " +
					"scope (read back from the platform). Changing it replaces the volume (a new, empty one).",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown(), stringplanmodifier.RequiresReplace()}},
			"size_gb": schema.Int64Attribute{Required: true,
				MarkdownDescription: "Size in GiB, 1 to 100 (checked at plan). Increasing it grows the volume in place, " +
					"for sandboxes created afterwards. Decreasing it is an error at plan: volumes never shrink, and the " +
					"provider never replaces one to shrink it.",
				Validators: []validator.Int64{sizeValidator{}}},
			"public": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				// [I] The platform says a volume can be made public or private
				// again; the field is not published: visibility PUBLIC|PRIVATE,
				// as the images API spells it.
				MarkdownDescription: "Whether other owners may attach the volume (as `<owner>/<name>`). Default `false` " +
					"(private). Changing it updates the volume in place, either way; a public volume is created private " +
					"and made public right after (the create request has no visibility)."},
			"head_checkpoint_id": schema.StringAttribute{Computed: true, MarkdownDescription: headDoc,
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
		},
	}
}

// ModifyPlan refuses a shrink, naming both sizes.
func (r *volumeResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || req.State.Raw.IsNull() {
		return
	}
	var plan, state volumeModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	if resp.Diagnostics.HasError() || plan.SizeGB.IsUnknown() || state.SizeGB.IsNull() || resp.RequiresReplace.Contains(path.Root("name")) ||
		resp.RequiresReplace.Contains(path.Root("team_id")) {
		return
	}
	if msg := shrinkProblem(state.SizeGB.ValueInt64(), plan.SizeGB.ValueInt64()); msg != "" {
		resp.Diagnostics.AddAttributeError(path.Root("size_gb"), "Volume cannot shrink", msg)
	}
}

func (r *volumeResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var plan volumeModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	create := prime.CreateVolumeRequest{Name: plan.Name.ValueString(), SizeGB: int(plan.SizeGB.ValueInt64())}
	if !plan.TeamID.IsNull() && !plan.TeamID.IsUnknown() {
		create.TeamID = plan.TeamID.ValueStringPointer()
	}
	v, err := r.client.CreateVolume(ctx, create)
	if err != nil {
		resp.Diagnostics.AddError("Cannot create volume", err.Error())
		return
	}
	// The create body has no visibility: a new volume is private, and a
	// public one is made so by an update.
	if plan.Public.ValueBool() && !isPublic(v.Visibility) {
		vis := prime.VolumePublic
		updated, err := r.client.UpdateVolume(ctx, v.Name, prime.UpdateVolumeRequest{Visibility: &vis}, deref(v.TeamID))
		if err != nil {
			// The volume exists: record it as it is (private), so it is never
			// untracked; the resource is tainted and the error says why.
			plan.fill(v)
			resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &plan)...)
			resp.Diagnostics.AddError("Cannot make volume public",
				fmt.Sprintf("Volume %s was created but is still private: %s", v.Name, err))
			return
		}
		v = updated
	}
	plan.fill(v)
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &plan)...)
	resp.Diagnostics.Append(setVolumeIdentity(ctx, resp.Identity, plan)...)
}

func (r *volumeResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var state volumeModel
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	// The identity is set before the read: Terraform wants one after every
	// Read without errors, also one that removes the resource.
	resp.Diagnostics.Append(setVolumeIdentity(ctx, resp.Identity, state)...)
	v, err := r.client.GetVolume(ctx, state.Name.ValueString(), state.TeamID.ValueString())
	switch {
	case errors.Is(err, prime.ErrNotFound):
		resp.Diagnostics.AddWarning("Volume is gone",
			fmt.Sprintf("Volume %s no longer exists; it is removed from state and the next apply creates it again (empty).", state.ID.ValueString()))
		resp.State.RemoveResource(ctx)
		return
	case err != nil:
		resp.Diagnostics.AddError("Cannot read volume", err.Error())
		return
	}
	state.fill(v)
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &state)...)
	resp.Diagnostics.Append(setVolumeIdentity(ctx, resp.Identity, state)...)
}

// Update grows the volume and/or changes its visibility in one PATCH.
func (r *volumeResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var plan, state volumeModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var update prime.UpdateVolumeRequest
	if n := int(plan.SizeGB.ValueInt64()); !plan.SizeGB.Equal(state.SizeGB) {
		if msg := shrinkProblem(state.SizeGB.ValueInt64(), int64(n)); msg != "" {
			resp.Diagnostics.AddAttributeError(path.Root("size_gb"), "Volume cannot shrink", msg)
			return
		}
		update.SizeGB = &n
	}
	if !plan.Public.Equal(state.Public) {
		vis := visibilityOf(plan.Public.ValueBool())
		update.Visibility = &vis
	}
	if update.SizeGB == nil && update.Visibility == nil {
		resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &plan)...)
		return
	}
	v, err := r.client.UpdateVolume(ctx, state.Name.ValueString(), update, state.TeamID.ValueString())
	if err != nil {
		resp.Diagnostics.AddError("Cannot update volume", err.Error())
		return
	}
	plan.fill(v)
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &plan)...)
	resp.Diagnostics.Append(setVolumeIdentity(ctx, resp.Identity, plan)...)
}

// Delete deletes the volume; one already gone is success.
func (r *volumeResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var state volumeModel
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	err := r.client.DeleteVolume(ctx, state.Name.ValueString(), state.TeamID.ValueString())
	if err != nil && !errors.Is(err, prime.ErrNotFound) {
		resp.Diagnostics.AddError("Cannot delete volume", err.Error())
	}
}

// ImportState takes `<name>` or `<team_id>/<name>`, or the identity.
func (r *volumeResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	id, d := tfkit.ImportIDOf(ctx, req, func(m volumeIdentityModel) (string, error) {
		return volumeID(m.Name.ValueString(), m.TeamID.ValueStringPointer()), nil
	})
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	name, team, err := parseVolumeID(id)
	if err != nil {
		resp.Diagnostics.AddError("Invalid import ID", err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), id)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), name)...)
	if team != "" {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("team_id"), team)...)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
