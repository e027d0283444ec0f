package sandbox

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// A fleet's identity upgrade from version 0 reads a stored identity, and
// also accepts none: a state written by Terraform before 1.12 holds no
// identity at all, yet Terraform 1.12+ asks for its upgrade (the stored
// version, 0, is older than the schema's). The Read after the upgrade
// records the real identity (the fleet's identity is mutable).
func TestUpgradeFleetIdentityV0(t *testing.T) {
	ctx := context.Background()
	var isr resource.IdentitySchemaResponse
	(&sandboxFleetResource{}).IdentitySchema(ctx, resource.IdentitySchemaRequest{}, &isr)
	upgrader := (&sandboxFleetResource{}).UpgradeIdentity(ctx)[0]
	for _, tc := range []struct {
		name      string
		raw       *tfprotov6.RawState
		wantLabel string
		wantIDs   int
	}{
		{"stored by version 0", &tfprotov6.RawState{JSON: []byte(`{"label":"run-1","sandbox_ids":["a","b"]}`)}, "run-1", 2},
		{"none stored (Terraform before 1.12)", &tfprotov6.RawState{}, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := resource.UpgradeIdentityRequest{RawIdentity: tc.raw}
			if upgrader.PriorSchema != nil {
				// What the framework does before calling the upgrader.
				v, err := tc.raw.Unmarshal(upgrader.PriorSchema.Type().TerraformType(ctx))
				if err != nil {
					t.Fatalf("the framework refuses the stored identity before the upgrader runs: %v", err)
				}
				req.Identity = &tfsdk.ResourceIdentity{Schema: *upgrader.PriorSchema, Raw: v}
			}
			resp := resource.UpgradeIdentityResponse{Identity: &tfsdk.ResourceIdentity{Schema: isr.IdentitySchema}}
			upgrader.IdentityUpgrader(ctx, req, &resp)
			if resp.Diagnostics.HasError() {
				t.Fatal(resp.Diagnostics)
			}
			if resp.Identity.Raw.IsNull() {
				t.Fatal("no identity returned (the framework reports a missing upgraded identity)")
			}
			var got fleetIdentityModel
			if d := resp.Identity.Get(ctx, &got); d.HasError() {
				t.Fatal(d)
			}
			if got.Label.ValueString() != tc.wantLabel || len(got.SandboxIDs.Elements()) != tc.wantIDs || !got.ID.IsNull() {
				t.Fatalf("identity %+v, want label %q and %d sandbox IDs", got, tc.wantLabel, tc.wantIDs)
			}
		})
	}
}
