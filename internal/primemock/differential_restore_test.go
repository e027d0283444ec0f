package primemock

import (
	"encoding/json"
	"testing"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// The restore and volume rules, read twice: every create the provider's
// CreateRules accepts, sent as the client sends it (SDK defaults applied),
// the mock accepts too; where the provider is stricter, the test says so.
func TestRestoreRulesDifferential(t *testing.T) {
	ck, long := "ck-1", "c2345678901234567890123456789012345678901234567890123456789012345"
	yes, no := true, false
	disk := 9.0
	vol := func(ms ...prime.VolumeMount) []prime.VolumeMount { return ms }
	for _, tc := range []struct {
		name string
		r    prime.CreateSandboxRequest
	}{
		{"restore", prime.CreateSandboxRequest{Name: "n", CheckpointID: &ck}},
		{"restore with memory", prime.CreateSandboxRequest{Name: "n", CheckpointID: &ck, RestoreMemory: &yes}},
		{"restore memory false", prime.CreateSandboxRequest{Name: "n", CheckpointID: &ck, RestoreMemory: &no}},
		{"restore with image", prime.CreateSandboxRequest{Name: "n", CheckpointID: &ck, DockerImage: "img"}},
		{"restore with disk", prime.CreateSandboxRequest{Name: "n", CheckpointID: &ck, DiskSizeGB: &disk}},
		{"restore id too long", prime.CreateSandboxRequest{Name: "n", CheckpointID: &long}},
		{"memory without checkpoint", prime.CreateSandboxRequest{Name: "n", DockerImage: "img", RestoreMemory: &yes}},
		{"no image, no checkpoint", prime.CreateSandboxRequest{Name: "n"}},
		{"volumes", prime.CreateSandboxRequest{Name: "n", DockerImage: "img", Volumes: vol(prime.VolumeMount{Name: "d", MountPath: "/d", ReadOnly: true})}},
		{"restore with volumes", prime.CreateSandboxRequest{Name: "n", CheckpointID: &ck, Volumes: vol(prime.VolumeMount{Name: "d", MountPath: "/d"})}},
		{"volume relative", prime.CreateSandboxRequest{Name: "n", DockerImage: "img", Volumes: vol(prime.VolumeMount{Name: "d", MountPath: "d"})}},
		{"volume at root", prime.CreateSandboxRequest{Name: "n", DockerImage: "img", Volumes: vol(prime.VolumeMount{Name: "d", MountPath: "/"})}},
		{"one path twice", prime.CreateSandboxRequest{Name: "n", DockerImage: "img", Volumes: vol(prime.VolumeMount{Name: "a", MountPath: "/d"}, prime.VolumeMount{Name: "b", MountPath: "/d"})}},
		{"volume unclean path", prime.CreateSandboxRequest{Name: "n", DockerImage: "img", Volumes: vol(prime.VolumeMount{Name: "a", MountPath: "/d/"})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			providerOK := len(prime.CreateRules(tc.r)) == 0
			wire := tc.r
			prime.ApplySDKCreateDefaults(&wire)
			raw, err := json.Marshal(wire)
			if err != nil {
				t.Fatal(err)
			}
			req, mockErr := decodeCreate(raw)
			if mockErr == nil {
				_, _, _, mockErr = admitCreate(req)
			}
			switch {
			case providerOK && mockErr != nil:
				t.Errorf("FINDING: the provider accepts %s, the mock refuses it: %v", raw, mockErr)
			case !providerOK && mockErr == nil:
				t.Logf("the provider is stricter: %v", prime.CreateRules(tc.r))
			}
		})
	}
}
