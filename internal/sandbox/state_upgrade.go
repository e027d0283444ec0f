package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// SchemaVersion is the schema version of prime_sandbox and
// prime_sandbox_fleet. Version 1 is the VM-only schema (containers were
// retired on 2026-09-18): cpu_cores is whole vCPUs (an integer), vm is
// deprecated and always true, arch is new, and start_command, guaranteed
// and registry_credentials_id are retired (always null). Version 0 is every
// release before it.
const SchemaVersion = 1

// UpgradeState reads states written before sandboxes were VM-only.
func (r *sandboxResource) UpgradeState(context.Context) map[int64]resource.StateUpgrader {
	return vmOnlyStateUpgraders(r.Schema)
}

// UpgradeState reads states written before sandboxes were VM-only.
func (r *sandboxFleetResource) UpgradeState(context.Context) map[int64]resource.StateUpgrader {
	return vmOnlyStateUpgraders(r.Schema)
}

// vmOnlyStateUpgraders upgrade a version-0 state of a resource whose
// current schema is schemaOf's (prime_sandbox and prime_sandbox_fleet share
// the attributes concerned, so they share the upgrader).
func vmOnlyStateUpgraders(schemaOf func(context.Context, resource.SchemaRequest, *resource.SchemaResponse)) map[int64]resource.StateUpgrader {
	return map[int64]resource.StateUpgrader{0: {StateUpgrader: func(ctx context.Context, req resource.UpgradeStateRequest, resp *resource.UpgradeStateResponse) {
		var sr resource.SchemaResponse
		schemaOf(ctx, resource.SchemaRequest{}, &sr)
		if req.RawState == nil || req.RawState.JSON == nil {
			resp.Diagnostics.AddError("Cannot upgrade state", "The stored state has no JSON form (a state from Terraform before 0.12).")
			return
		}
		upgraded, err := upgradeVMOnlyStateJSON(req.RawState.JSON)
		if err == nil {
			var v tftypes.Value
			// Attributes the current schema no longer has are dropped; the
			// ones it added (arch) start null and are read back at refresh.
			v, err = tfprotov6.RawState{JSON: upgraded}.UnmarshalWithOpts(sr.Schema.Type().TerraformType(ctx),
				tfprotov6.UnmarshalOpts{ValueFromJSONOpts: tftypes.ValueFromJSONOpts{IgnoreUndefinedAttributes: true}})
			if err == nil {
				resp.State = tfsdk.State{Schema: sr.Schema, Raw: v}
				return
			}
		}
		resp.Diagnostics.AddError("Cannot upgrade state", fmt.Sprintf("Upgrading a state written before sandboxes "+
			"were VM-only (schema version 0): %v", err))
	}}}
}

// upgradeVMOnlyStateJSON turns a version-0 state object into version 1:
// vm true (every sandbox is a VM; a container in an old state is gone from
// the platform, and the refresh drops it), cpu_cores whole vCPUs (a
// fraction, which only a container could have, rounds up, as wholeCPUs
// reads it from the platform), and the retired start_command, guaranteed
// and registry_credentials_id null (their old values were container
// settings; the VM-only schema keeps them only to refuse them at plan).
func upgradeVMOnlyStateJSON(raw []byte) ([]byte, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	obj["vm"] = json.RawMessage(`true`)
	if c, ok := obj["cpu_cores"]; ok && string(c) != "null" {
		var cores float64
		if err := json.Unmarshal(c, &cores); err != nil {
			return nil, fmt.Errorf("cpu_cores: %w", err)
		}
		obj["cpu_cores"] = json.RawMessage(fmt.Sprint(int64(math.Ceil(cores))))
	}
	for _, retired := range []string{"start_command", "guaranteed", "registry_credentials_id"} {
		obj[retired] = json.RawMessage(`null`)
	}
	return json.Marshal(obj)
}
