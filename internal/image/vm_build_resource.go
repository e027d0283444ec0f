package image

// prime_image_vm_build: POST /images/{name}/{tag}/vm-build, then the
// client's build wait until it has COMPLETED, failing closed on FAILED,
// CANCELLED and the create timeout.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

var (
	_ resource.ResourceWithConfigure      = (*vmBuildResource)(nil)
	_ resource.ResourceWithValidateConfig = (*vmBuildResource)(nil)
)

// DefaultBuildTimeout bounds the wait for a vm-build. [I] The platform
// publishes no build time; it converts the registry content without
// rebuilding, which for a large image is still minutes.
const DefaultBuildTimeout = 30 * time.Minute

// NewVMBuildResource is the prime_image_vm_build constructor.
func NewVMBuildResource() resource.Resource { return &vmBuildResource{} }

type vmBuildResource struct{ client *prime.Client }

func (r *vmBuildResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_image_vm_build"
}

func (r *vmBuildResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = tfkit.ClientFrom(req.ProviderData, &resp.Diagnostics)
}

func (r *vmBuildResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	keep := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Makes an image bootable by VM sandboxes: requests the platform's `vm-build` for an " +
			"image that has no VM artifact (one pushed before VM images existed) and waits until the build has " +
			"completed, so sandboxes that depend on this resource boot it. An image that already has a ready VM " +
			"artifact is left as it is (nothing is requested). The build converts the image's registry content " +
			"without rebuilding it; it needs a `linux/amd64` image, and a team image only converts for its creator " +
			"or a team admin.\n\n" +
			"Create fails closed when the build fails, is cancelled, or has not completed within `timeouts.create` " +
			"(default 30 minutes): nothing is recorded, and nothing that depends on it starts. A refresh that finds " +
			"the VM artifact gone or not ready removes the resource from state, so the next apply builds again. " +
			"**Destroy only forgets the resource**: the platform has no call that removes a VM artifact, so the " +
			"image keeps it.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{Computed: true, PlanModifiers: keep,
				MarkdownDescription: "`<name>:<tag>` of the image."},
			"name": schema.StringAttribute{Required: true, PlanModifiers: replace,
				MarkdownDescription: "The image's name, without owner or tag. Changing it replaces the resource (a build of the other image)."},
			"tag": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(DefaultTag), PlanModifiers: replace,
				MarkdownDescription: "The image's tag. Default `latest`. Changing it replaces the resource."},
			"team_id": schema.StringAttribute{Optional: true, PlanModifiers: replace,
				MarkdownDescription: "The team whose image it is. Default: the provider's `team_id`, or your personal " +
					"images. Changing it replaces the resource."},
			"build_id": schema.StringAttribute{Computed: true, PlanModifiers: keep,
				MarkdownDescription: "The build this resource requested and waited for; null when the image already had a ready VM artifact."},
			"vm_status": schema.StringAttribute{Computed: true, PlanModifiers: keep,
				MarkdownDescription: "The VM artifact's status: `COMPLETED` after a successful apply."},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true,
				CreateDescription: "How long to wait for the build to complete (default `30m`). On timeout the apply " +
					"fails closed and nothing is recorded; the build may still complete on the platform, which the next " +
					"apply then finds."}),
		},
	}
}

func (r *vmBuildResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m vmBuildModel
	resp.Diagnostics.Append(tfkit.GetConfig(ctx, req.Config, &m)...)
	if resp.Diagnostics.HasError() || m.Name.IsUnknown() || m.Tag.IsUnknown() || m.Name.IsNull() {
		return
	}
	tag := m.Tag.ValueString()
	if m.Tag.IsNull() {
		tag = DefaultTag
	}
	if err := checkNameTag(m.Name.ValueString(), tag); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "Invalid image", err.Error())
	}
}

func (r *vmBuildResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var plan vmBuildModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := plan.Timeouts.Create(ctx, DefaultBuildTimeout)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	name, tag := plan.Name.ValueString(), plan.Tag.ValueString()
	plan.ID = types.StringValue(name + ":" + tag)
	plan.BuildID = types.StringNull()
	items, err := listFor(ctx, r.client, plan.TeamID)
	if err != nil {
		resp.Diagnostics.AddError("Cannot list images", err.Error())
		return
	}
	if readinessOf(items, name, tag).Ready {
		tflog.Info(ctx, "image already has a ready VM artifact; no build requested", map[string]any{"image": name + ":" + tag})
		plan.VMStatus = types.StringValue(prime.ImageBuildCompleted)
		resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &plan)...)
		return
	}
	var vreq prime.VMBuildRequest
	if !plan.TeamID.IsNull() {
		team := plan.TeamID.ValueString()
		vreq.TeamID = &team
	}
	started, err := r.client.RequestVMBuild(ctx, name, tag, vreq)
	if err != nil {
		resp.Diagnostics.AddError("VM build not started", fmt.Sprintf("Requesting a VM build of %s:%s failed: %v", name, tag, err))
		return
	}
	tflog.Info(ctx, "VM build requested; waiting for it", map[string]any{"image": name + ":" + tag, "build_id": started.BuildID, "timeout": timeout.String()})
	waitCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	build, err := r.client.WaitForImageBuild(waitCtx, started.BuildID, prime.WaitImageBuildOptions{})
	if err != nil {
		resp.Diagnostics.AddError("VM build not completed", buildErrorText(name, tag, started.BuildID, timeout, err))
		return
	}
	plan.BuildID = types.StringValue(started.BuildID)
	plan.VMStatus = types.StringValue(build.Status)
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &plan)...)
}

func (r *vmBuildResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var state vmBuildModel
	resp.Diagnostics.Append(tfkit.GetState(ctx, req.State, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	items, err := listFor(ctx, r.client, state.TeamID)
	if err != nil {
		resp.Diagnostics.AddError("Cannot list images", err.Error())
		return
	}
	name, tag := state.Name.ValueString(), state.Tag.ValueString()
	ready := readinessOf(items, name, tag)
	if !ready.Ready {
		resp.Diagnostics.AddWarning("Image has no ready VM artifact",
			fmt.Sprintf("Image %s:%s no longer has a ready VM artifact (VM artifact status %q); the resource is removed "+
				"from state and the next apply builds it again.", name, tag, ready.Status))
		resp.State.RemoveResource(ctx)
		return
	}
	state.VMStatus = types.StringValue(ready.Status)
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &state)...)
}

// Update only changes timeouts.
func (r *vmBuildResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan vmBuildModel
	resp.Diagnostics.Append(tfkit.GetPlan(ctx, req.Plan, &plan)...)
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &plan)...)
}

// Delete forgets: the platform has no call that removes a VM artifact.
func (r *vmBuildResource) Delete(ctx context.Context, _ resource.DeleteRequest, _ *resource.DeleteResponse) {
	tflog.Info(ctx, "prime_image_vm_build destroyed: the image keeps its VM artifact")
}

// buildErrorText explains a build that did not complete.
func buildErrorText(name, tag, buildID string, timeout time.Duration, err error) string {
	var failed *prime.ImageBuildFailedError
	if errors.As(err, &failed) {
		return fmt.Sprintf("The VM build %s of %s:%s ended %s: VM sandboxes still cannot boot the image, and nothing "+
			"that depends on this resource was started. (%v)", buildID, name, tag, failed.Status, err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("The VM build %s of %s:%s had not completed after %s (timeouts.create). Failing closed: "+
			"nothing is recorded and nothing that depends on this resource was started; the build may still complete, "+
			"which the next apply finds. (%v)", buildID, name, tag, timeout, err)
	}
	return fmt.Sprintf("Waiting for the VM build %s of %s:%s failed: %v. Nothing is recorded; the next apply checks again.", buildID, name, tag, err)
}

type vmBuildModel struct {
	ID       types.String   `tfsdk:"id"`
	Name     types.String   `tfsdk:"name"`
	Tag      types.String   `tfsdk:"tag"`
	TeamID   types.String   `tfsdk:"team_id"`
	BuildID  types.String   `tfsdk:"build_id"`
	VMStatus types.String   `tfsdk:"vm_status"`
	Timeouts timeouts.Value `tfsdk:"timeouts"`
}
