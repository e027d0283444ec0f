package sandbox

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/volume"
)

func restoreTemplate(image, checkpoint types.String, memory types.Bool) sandboxTemplate {
	m := sandboxTemplate{sandboxInputs: nullInputs()}
	m.DockerImage, m.CheckpointID, m.RestoreMemory = image, checkpoint, memory
	return m
}

func TestRestoreInputProblems(t *testing.T) {
	img, ck, none := types.StringValue("img"), types.StringValue("ck-1"), types.StringNull()
	unknown := types.StringUnknown()
	for _, tc := range []struct {
		name      string
		m         sandboxTemplate
		wantAttrs string
	}{
		{"image", restoreTemplate(img, none, types.BoolNull()), ""},
		{"checkpoint", restoreTemplate(none, ck, types.BoolNull()), ""},
		{"checkpoint not known yet", restoreTemplate(none, unknown, types.BoolValue(true)), ""},
		{"both", restoreTemplate(img, ck, types.BoolNull()), "checkpoint_id"},
		{"both, checkpoint unknown", restoreTemplate(img, unknown, types.BoolNull()), "checkpoint_id"},
		{"neither", restoreTemplate(none, none, types.BoolNull()), "docker_image"},
		// terraform validate (and terraform test's validation) sees a
		// module's variables as unknown: an image chosen by a variable may
		// turn out null, so only known values are judged (the client's
		// create rules judge the rest at apply).
		{"both unknown (variables at validate)", restoreTemplate(unknown, unknown, types.BoolNull()), ""},
		{"image unknown, checkpoint set", restoreTemplate(unknown, ck, types.BoolNull()), ""},
		{"image unknown, no checkpoint", restoreTemplate(unknown, none, types.BoolNull()), ""},
		{"memory without checkpoint", restoreTemplate(img, none, types.BoolValue(true)), "restore_memory"},
		{"memory false without checkpoint", restoreTemplate(img, none, types.BoolValue(false)), "restore_memory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, p := range restoreInputProblems(tc.m) {
				got = append(got, p[0])
			}
			if strings.Join(got, ",") != tc.wantAttrs {
				t.Fatalf("problems at %v, want %q", got, tc.wantAttrs)
			}
		})
	}
}

// A restore's create request carries checkpoint_id (a placeholder at plan
// while unknown), restore_memory only when true, and the volumes; never
// docker_image.
func TestCreateRequestOfRestore(t *testing.T) {
	ctx := context.Background()
	m := restoreTemplate(types.StringNull(), types.StringValue("ck-1"), types.BoolValue(false))
	m.sandboxSpec.Labels = types.SetNull(types.StringType)
	m.Volumes = volume.AttachmentsValue([]prime.VolumeMount{{Name: "data", MountPath: "/data", ReadOnly: true}})
	r, unknown, d := createRequest(ctx, types.StringValue("box"), m, nil)
	if d.HasError() {
		t.Fatal(d)
	}
	if r.CheckpointID == nil || *r.CheckpointID != "ck-1" || r.DockerImage != "" || r.RestoreMemory != nil || !r.IsRestore() {
		t.Fatalf("request %+v", r)
	}
	if len(r.Volumes) != 1 || r.Volumes[0].String() != "data:/data:ro" || unknown["volumes"] {
		t.Fatalf("volumes %+v (unknown %v)", r.Volumes, unknown)
	}
	m.CheckpointID, m.RestoreMemory = types.StringUnknown(), types.BoolValue(true)
	m.Volumes = types.ListUnknown(volume.AttachmentType())
	r, unknown, _ = createRequest(ctx, types.StringValue("box"), m, nil)
	if !r.IsRestore() || !unknown["checkpoint_id"] || r.RestoreMemory == nil || !*r.RestoreMemory || !unknown["volumes"] {
		t.Fatalf("request %+v, unknown %v", r, unknown)
	}
}

func TestPauseChange(t *testing.T) {
	tru, fal, null := types.BoolValue(true), types.BoolValue(false), types.BoolNull()
	for _, tc := range []struct {
		name                string
		planned, recorded   types.Bool
		creating            bool
		wantAct, wantPaused bool
	}{
		{"create paused", tru, null, true, true, true},
		{"create running", fal, null, true, false, false},
		{"create unmanaged", null, null, true, false, false},
		{"pause", tru, fal, false, true, true},
		{"resume", fal, tru, false, true, false},
		{"unchanged paused", tru, tru, false, false, true},
		{"unchanged running", fal, fal, false, false, false},
		{"start managing", fal, null, false, true, false},
		{"stop managing", null, tru, false, false, false},
		{"unknown", types.BoolUnknown(), fal, false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			act, paused := pauseChange(tc.planned, tc.recorded, tc.creating)
			if act != tc.wantAct || (act && paused != tc.wantPaused) {
				t.Fatalf("pauseChange = %t, %t; want %t, %t", act, paused, tc.wantAct, tc.wantPaused)
			}
		})
	}
}

func TestPausedOnRefresh(t *testing.T) {
	for _, tc := range []struct {
		recorded types.Bool
		status   string
		want     attr.Value
	}{
		{types.BoolNull(), prime.StatusPaused, types.BoolNull()},
		{types.BoolValue(false), prime.StatusPaused, types.BoolValue(true)},
		{types.BoolValue(true), prime.StatusRunning, types.BoolValue(false)},
		{types.BoolValue(true), prime.StatusPaused, types.BoolValue(true)},
	} {
		if got := pausedOnRefresh(tc.recorded, tc.status); !got.Equal(tc.want) {
			t.Errorf("pausedOnRefresh(%v, %s) = %v, want %v", tc.recorded, tc.status, got, tc.want)
		}
	}
}

func TestFleetPausedOnRefresh(t *testing.T) {
	member := func(status string) fleetMember { return fleetMember{Status: types.StringValue(status)} }
	mixed := map[string]fleetMember{"0": member(prime.StatusPaused), "1": member(prime.StatusRunning)}
	allPaused := map[string]fleetMember{"0": member(prime.StatusPaused), "1": member(prime.StatusPaused)}
	allRunning := map[string]fleetMember{"0": member(prime.StatusRunning)}
	for _, tc := range []struct {
		name     string
		recorded types.Bool
		members  map[string]fleetMember
		want     attr.Value
	}{
		{"unmanaged", types.BoolNull(), mixed, types.BoolNull()},
		{"paused, one resumed out of band", types.BoolValue(true), mixed, types.BoolValue(false)},
		{"paused, all paused", types.BoolValue(true), allPaused, types.BoolValue(true)},
		{"running, one paused out of band", types.BoolValue(false), mixed, types.BoolValue(true)},
		{"running, all running", types.BoolValue(false), allRunning, types.BoolValue(false)},
		{"no members", types.BoolValue(true), nil, types.BoolValue(true)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := fleetPausedOnRefresh(tc.recorded, tc.members); !got.Equal(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// A platform that reports the checkpoint a sandbox was restored from is
// believed: the state records it (and no docker_image), so an import plans
// nothing when the configuration names it and replaces when it names
// another (adoptsRestore only adopts what the state does not know).
func TestReportedCheckpointIsRecorded(t *testing.T) {
	ctx := context.Background()
	ck := "ck-1"
	sb := &prime.Sandbox{ID: "sbx", Name: "n", DockerImage: "img", Status: prime.StatusRunning, Labels: []string{}, CheckpointID: &ck}
	m := nullSandboxModel()
	if d := applySandboxResource(ctx, &m, sb); d.HasError() {
		t.Fatal(d)
	}
	if m.CheckpointID.ValueString() != ck || !m.DockerImage.IsNull() {
		t.Fatalf("checkpoint_id %v, docker_image %v; want %s and null", m.CheckpointID, m.DockerImage, ck)
	}
	sb.CheckpointID = nil // not reported: the state keeps what it had
	m = nullSandboxModel()
	applySandboxResource(ctx, &m, sb)
	if !m.CheckpointID.IsNull() || m.DockerImage.ValueString() != "img" {
		t.Fatalf("checkpoint_id %v, docker_image %v; want null and img", m.CheckpointID, m.DockerImage)
	}
}

func TestSharedCheckpoint(t *testing.T) {
	member := func(ck string) prime.Sandbox {
		if ck == "" {
			return prime.Sandbox{}
		}
		return prime.Sandbox{CheckpointID: &ck}
	}
	for _, tc := range []struct {
		name string
		sbs  []prime.Sandbox
		want string
	}{
		{"all report one", []prime.Sandbox{member("ck-1"), member("ck-1")}, "ck-1"},
		{"none reported", []prime.Sandbox{member(""), member("")}, ""},
		{"one does not report", []prime.Sandbox{member("ck-1"), member("")}, ""},
		{"they differ", []prime.Sandbox{member("ck-1"), member("ck-2")}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sharedCheckpoint(tc.sbs); got != tc.want {
				t.Fatalf("sharedCheckpoint = %q, want %q", got, tc.want)
			}
		})
	}
}

// A fleet acts on `paused` when the recorded value changes, and also when
// a member is out of line with the configured value while the recorded one
// matches it: after a resume refused for some members, a refresh cannot
// record a value that differs from both true and false.
func TestFleetPauseChange(t *testing.T) {
	tru, fal, null := types.BoolValue(true), types.BoolValue(false), types.BoolNull()
	member := func(status string) fleetMember { return fleetMember{Status: types.StringValue(status)} }
	mixed := map[string]fleetMember{"0": member(prime.StatusRunning), "1": member(prime.StatusPaused)}
	running := map[string]fleetMember{"0": member(prime.StatusRunning)}
	paused := map[string]fleetMember{"0": member(prime.StatusPaused)}
	for _, tc := range []struct {
		name                string
		planned, recorded   types.Bool
		members             map[string]fleetMember
		wantAct, wantPaused bool
	}{
		{"resume", fal, tru, paused, true, false},
		{"resume refused for one, refreshed to false", fal, fal, mixed, true, false},
		{"pause failed for one, refreshed to true", tru, tru, mixed, true, true},
		{"all running", fal, fal, running, false, false},
		{"all paused", tru, tru, paused, false, true},
		{"unmanaged", null, fal, mixed, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			act, p := fleetPauseChange(tc.planned, tc.recorded, tc.members)
			if act != tc.wantAct || (act && p != tc.wantPaused) {
				t.Fatalf("fleetPauseChange = %t, %t; want %t, %t", act, p, tc.wantAct, tc.wantPaused)
			}
		})
	}
}

// TestValidateSandboxSaysRestoreMemoryOnce: the restore_memory rule is
// prime.RestoreMemoryProblem, which both restoreInputProblems and the
// create rules reach; the plan shows it once, at restore_memory.
func TestValidateSandboxSaysRestoreMemoryOnce(t *testing.T) {
	m := restoreTemplate(types.StringValue("img"), types.StringNull(), types.BoolValue(true))
	m.sandboxSpec.Labels = types.SetNull(types.StringType)
	var diags diag.Diagnostics
	validateSandbox(context.Background(), m, &diags)
	var got []string
	for _, d := range diags.Errors() {
		if strings.Contains(d.Detail(), "needs checkpoint_id") {
			got = append(got, d.Detail())
		}
	}
	if len(got) != 1 || got[0] != "restore_memory needs checkpoint_id: only a pause checkpoint's memory can be restored" {
		t.Fatalf("restore_memory errors %q, want the rule's message once; all: %v", got, diags)
	}
}
