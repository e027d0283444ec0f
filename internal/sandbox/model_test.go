package sandbox

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

func nullSandboxModel() sandboxModel {
	var m sandboxModel
	m.StartCommand = types.StringNull()
	m.RegistryCredentialsID = types.StringNull()
	m.StartArgv = types.ListNull(types.StringType)
	m.Arch = types.StringNull()
	m.EnvironmentVars = types.MapNull(types.StringType)
	m.Labels = types.SetNull(types.StringType)
	m.Secrets = types.MapNull(types.StringType)
	m.SecretsWO = types.MapNull(types.StringType)
	m.Guaranteed = types.BoolNull()
	return m
}

func TestCreateRequestLeavesUnsetOut(t *testing.T) {
	ctx := context.Background()
	m := nullSandboxModel()
	m.Name, m.DockerImage = types.StringValue("n"), types.StringValue("img")
	m.CPUCores = wholeNumber{Int64Value: types.Int64Unknown()} // optional+computed, unset in config
	m.MemoryGB, m.DiskSizeGB = types.Float64Null(), types.Float64Null()
	m.VM, m.GPUCount, m.TimeoutMinutes = types.BoolNull(), types.Int64Null(), types.Int64Null()
	req, unknown, diags := createRequest(ctx, m.Name, m.template(), map[string]string{"TOKEN": "wo"})
	if diags.HasError() {
		t.Fatal(diags)
	}
	if req.CPUCores != nil || req.MemoryGB != nil || req.DiskSizeGB != nil || req.Arch != nil || req.GPUCount != nil ||
		req.TimeoutMinutes != nil || req.StartCommand != nil {
		t.Fatalf("unset fields were set: %+v", req)
	}
	if !unknown["cpu_cores"] {
		t.Fatal("an unknown cpu_cores must be reported as unknown")
	}
	if req.Labels == nil || req.Secrets["TOKEN"] != "wo" {
		t.Fatalf("labels must be [] and write-only secrets merged: %+v", req)
	}

	m.StartArgv = types.ListValueMust(types.StringType, []attr.Value{types.StringValue("/bin/sh"), types.StringValue("-c"), types.StringValue("x")})
	m.CPUCores, m.Arch = wholeNumberValue(4), types.StringValue(prime.ArchARM64)
	req, _, _ = createRequest(ctx, m.Name, m.template(), nil)
	if req.StartCommand == nil || req.StartCommand.Argv == nil || req.StartCommand.Argv.Executable != "/bin/sh" || len(req.StartCommand.Argv.Args) != 2 {
		t.Fatalf("start_argv = %+v", req.StartCommand)
	}
	if req.CPUCores == nil || *req.CPUCores != 4 || req.Arch == nil || *req.Arch != prime.ArchARM64 {
		t.Fatalf("cpu_cores / arch not sent: %+v", req)
	}
}

// The retired attributes are never sent, whatever they hold (plan-time
// validation refuses them before a create could be made).
func TestCreateRequestNeverSendsRetired(t *testing.T) {
	m := nullSandboxModel()
	m.Name, m.DockerImage = types.StringValue("n"), types.StringValue("img")
	m.VM, m.Guaranteed = types.BoolValue(false), types.BoolValue(true)
	m.StartCommand, m.RegistryCredentialsID = types.StringValue("sleep 1"), types.StringValue("cred")
	req, _, _ := createRequest(context.Background(), m.Name, m.template(), nil)
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"vm"`, `"guaranteed"`, `"registry_credentials_id"`, `"start_command"`} {
		if strings.Contains(string(body), key) {
			t.Errorf("the create body carries %s: %s", key, body)
		}
	}
}

func TestWholeCPUs(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want int64
	}{{1, 1}, {2, 2}, {0.5, 1}, {1.25, 2}, {16, 16}} {
		if got := wholeCPUs(tc.in); got != tc.want {
			t.Errorf("wholeCPUs(%g) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestApplySandboxReadBack(t *testing.T) {
	ctx := context.Background()
	started := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	arch := prime.ArchAMD64
	sb := &prime.Sandbox{
		ID: "sbx", Name: "n", DockerImage: "img", StartCommand: prime.ShellCommand(prime.LegacyStartCommand),
		CPUCores: 1, MemoryGB: 1, DiskSizeGB: 5, DiskMountPath: "/sandbox-workspace", VM: false, Arch: &arch,
		Status: prime.StatusRunning, TimeoutMinutes: 60, Labels: []string{}, EnvironmentVars: map[string]string{},
		CreatedAt: started, StartedAt: &started, Secrets: map[string]string{"A": "***"},
	}

	// Unset in config: an older client's string start command and empty
	// collections stay null, so the second plan is empty; vm is true
	// whatever an old sandbox object says.
	m := nullSandboxModel()
	m.Guaranteed = types.BoolValue(false)
	if d := applySandboxResource(ctx, &m, sb); d.HasError() {
		t.Fatal(d)
	}
	if !m.StartArgv.IsNull() || !m.StartCommand.IsNull() || !m.Labels.IsNull() || !m.EnvironmentVars.IsNull() {
		t.Fatalf("defaults leaked into state: argv=%v start=%v labels=%v env=%v", m.StartArgv, m.StartCommand, m.Labels, m.EnvironmentVars)
	}
	if !m.Secrets.IsNull() || !m.Guaranteed.IsNull() || !m.SecretsWO.IsNull() || !m.RegistryCredentialsID.IsNull() {
		t.Fatalf("secrets/retired: %v %v %v %v", m.Secrets, m.Guaranteed, m.SecretsWO, m.RegistryCredentialsID)
	}
	if m.StartedAt.ValueString() != "2026-11-29T10:00:00Z" || m.CPUCores.ValueInt64() != 1 || !m.VM.ValueBool() ||
		m.Arch.ValueString() != prime.ArchAMD64 {
		t.Fatalf("computed values: %v %v %v %v", m.StartedAt, m.CPUCores, m.VM, m.Arch)
	}

	// Set to empty in config: empty stays empty, not null.
	m = nullSandboxModel()
	m.Labels = types.SetValueMust(types.StringType, nil)
	m.EnvironmentVars = types.MapValueMust(types.StringType, nil)
	applySandboxResource(ctx, &m, sb)
	if m.Labels.IsNull() || m.EnvironmentVars.IsNull() {
		t.Fatalf("empty values lost: %v %v", m.Labels, m.EnvironmentVars)
	}

	// A known secret value is kept: the API only shows "***".
	m.Secrets = types.MapValueMust(types.StringType, map[string]attr.Value{"A": types.StringValue("real")})
	applySandboxResource(ctx, &m, sb)
	if m.Secrets.Elements()["A"].(types.String).ValueString() != "real" {
		t.Fatal("the masked API value replaced the known secret")
	}

	// The argv form reads back as start_argv; a platform that does not
	// report arch keeps the configured one.
	vm := *sb
	vm.StartCommand, vm.Arch = prime.ArgvCommand("/bin/x", "a"), nil
	m = nullSandboxModel()
	m.Arch = types.StringValue(prime.ArchARM64)
	applySandbox(ctx, &m.sandboxAttributes, &vm)
	if len(m.StartArgv.Elements()) != 2 || m.Arch.ValueString() != prime.ArchARM64 {
		t.Fatalf("argv / arch read back as %v / %v", m.StartArgv, m.Arch)
	}
}

func TestFleetMemberValuesRoundTrip(t *testing.T) {
	members := map[string]fleetMember{
		"0": {ID: types.StringValue("sb-0"), Name: types.StringValue("f-0"), Status: types.StringValue("RUNNING"),
			CreatedAt: types.StringValue("2026-12-01T00:00:00Z"), EgressGeneration: types.Int64Value(3), EgressApplied: types.BoolValue(true)},
		"1": {ID: types.StringValue("sb-1"), Name: types.StringValue("f-1"), Status: types.StringValue("RUNNING"),
			CreatedAt: types.StringValue("2026-12-01T00:00:01Z"), EgressGeneration: types.Int64Null(), EgressApplied: types.BoolNull()},
	}
	v := fleetMembersValue(members)
	if !v.ElementType(context.Background()).Equal(fleetMemberType()) {
		t.Fatalf("element type %s", v.ElementType(context.Background()))
	}
	// What the framework's reflection builds must be what we build.
	want, d := types.MapValueFrom(context.Background(), fleetMemberType(), members)
	if d.HasError() || !v.Equal(want) {
		t.Fatalf("hand-built %s, reflection %s (%v)", v, want, d)
	}
	var diags diag.Diagnostics
	back := fleetMembersOfMap(v, &diags)
	if diags.HasError() || len(back) != 2 || back["0"] != members["0"] || back["1"] != members["1"] {
		t.Fatalf("round trip: %+v %v", back, diags)
	}
}

func TestFleetMembersOfMapRejectsAnUnknownEntry(t *testing.T) {
	v := types.MapValueMust(fleetMemberType(), map[string]attr.Value{"0": types.ObjectUnknown(fleetMemberAttrTypes)})
	var diags diag.Diagnostics
	if got := fleetMembersOfMap(v, &diags); len(got) != 0 || !diags.HasError() ||
		!strings.Contains(diags.Errors()[0].Detail(), `Member "0" is not a known object`) {
		t.Fatalf("an unknown entry must be an error, got %+v %v", got, diags)
	}
}

// A fleet template's arch after an import: the platform's default reads as
// unset (so a configuration without arch imports with no change), another
// architecture is recorded.
func TestTemplateArch(t *testing.T) {
	for _, tc := range []struct {
		reported, want types.String
	}{
		{types.StringValue(prime.ArchAMD64), types.StringNull()},
		{types.StringValue(prime.ArchARM64), types.StringValue(prime.ArchARM64)},
		{types.StringNull(), types.StringNull()},
	} {
		if got := templateArch(tc.reported); !got.Equal(tc.want) {
			t.Errorf("templateArch(%s) = %s, want %s", tc.reported, got, tc.want)
		}
	}
}
