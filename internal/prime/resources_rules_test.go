package prime

import (
	"errors"
	"strings"
	"testing"
)

func strp(s string) *string { return &s }
func boolp(b bool) *bool    { return &b }

// The restore and volume rules of a create, as CreateRules reports them:
// which field each violation names, or none.
func TestRestoreCreateRules(t *testing.T) {
	disk := 10.0
	long := strings.Repeat("c", 65)
	for _, tc := range []struct {
		name   string
		req    CreateSandboxRequest
		fields []string // violated fields, in order; nil: valid
	}{
		{"image create", CreateSandboxRequest{Name: "n", DockerImage: "img"}, nil},
		{"restore without image", CreateSandboxRequest{Name: "n", CheckpointID: strp("ck-1")}, nil},
		{"restore with memory", CreateSandboxRequest{Name: "n", CheckpointID: strp("ck-1"), RestoreMemory: boolp(true)}, nil},
		{"neither image nor checkpoint", CreateSandboxRequest{Name: "n"}, []string{"docker_image"}},
		{"restore with image", CreateSandboxRequest{Name: "n", DockerImage: "img", CheckpointID: strp("ck-1")}, []string{"docker_image"}},
		{"restore with disk", CreateSandboxRequest{Name: "n", CheckpointID: strp("ck-1"), DiskSizeGB: &disk}, []string{"disk_size_gb"}},
		{"empty checkpoint id", CreateSandboxRequest{Name: "n", CheckpointID: strp("")}, []string{"checkpoint_id"}},
		{"checkpoint id too long", CreateSandboxRequest{Name: "n", CheckpointID: &long}, []string{"checkpoint_id"}},
		{"memory without checkpoint", CreateSandboxRequest{Name: "n", DockerImage: "img", RestoreMemory: boolp(true)}, []string{"restore_memory"}},
		// restore_memory exists only with checkpoint_id (false is the cold
		// boot every other create gets): either value without one is
		// refused, as at plan time.
		{"memory false without checkpoint", CreateSandboxRequest{Name: "n", DockerImage: "img", RestoreMemory: boolp(false)}, []string{"restore_memory"}},
		{"memory false with checkpoint", CreateSandboxRequest{Name: "n", CheckpointID: strp("ck-1"), RestoreMemory: boolp(false)}, nil},
		{"volumes", CreateSandboxRequest{Name: "n", DockerImage: "img", Volumes: []VolumeMount{{Name: "data", MountPath: "/data"}, {Name: "me/ref", MountPath: "/ref", ReadOnly: true}}}, nil},
		{"volume relative path", CreateSandboxRequest{Name: "n", DockerImage: "img", Volumes: []VolumeMount{{Name: "data", MountPath: "data"}}}, []string{"volumes"}},
		{"volume at root", CreateSandboxRequest{Name: "n", DockerImage: "img", Volumes: []VolumeMount{{Name: "data", MountPath: "/"}}}, []string{"volumes"}},
		{"volume bad name", CreateSandboxRequest{Name: "n", DockerImage: "img", Volumes: []VolumeMount{{Name: "Data", MountPath: "/d"}}}, []string{"volumes"}},
		{"volume twice", CreateSandboxRequest{Name: "n", DockerImage: "img", Volumes: []VolumeMount{{Name: "d", MountPath: "/a"}, {Name: "d", MountPath: "/b"}}}, []string{"volumes"}},
		{"two at one path", CreateSandboxRequest{Name: "n", DockerImage: "img", Volumes: []VolumeMount{{Name: "a", MountPath: "/d"}, {Name: "b", MountPath: "/d"}}}, []string{"volumes"}},
		{"nine volumes", CreateSandboxRequest{Name: "n", DockerImage: "img", Volumes: func() []VolumeMount {
			var v []VolumeMount
			for _, n := range "abcdefghi" {
				v = append(v, VolumeMount{Name: string(n), MountPath: "/" + string(n)})
			}
			return v
		}()}, []string{"volumes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, v := range CreateRules(tc.req) {
				got = append(got, v.Field)
			}
			if strings.Join(got, ",") != strings.Join(tc.fields, ",") {
				t.Fatalf("violations on %v, want %v (%v)", got, tc.fields, CreateRules(tc.req))
			}
		})
	}
}

// A restore's body carries checkpoint_id and neither docker_image nor
// disk_size_gb, even after the SDK's defaults are applied; a memory restore
// gets no default shape either.
func TestRestoreDefaultsOmitImageAndDisk(t *testing.T) {
	r := CreateSandboxRequest{Name: "n", CheckpointID: strp("ck-1")}
	ApplySDKCreateDefaults(&r)
	if r.DiskSizeGB != nil || r.DockerImage != "" || r.CPUCores == nil {
		t.Fatalf("restore defaults: disk %v image %q cpu %v; want no disk, no image, the default CPU", r.DiskSizeGB, r.DockerImage, r.CPUCores)
	}
	m := CreateSandboxRequest{Name: "n", CheckpointID: strp("ck-1"), RestoreMemory: boolp(true)}
	ApplySDKCreateDefaults(&m)
	if m.CPUCores != nil || m.MemoryGB != nil {
		t.Fatalf("a memory restore got a default shape: cpu %v memory %v", m.CPUCores, m.MemoryGB)
	}
	i := CreateSandboxRequest{Name: "n", DockerImage: "img"}
	ApplySDKCreateDefaults(&i)
	if i.DiskSizeGB == nil || *i.DiskSizeGB != DefaultDiskSizeGB {
		t.Fatalf("an image create lost its default disk: %v", i.DiskSizeGB)
	}
}

func TestParseVolumeMount(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want VolumeMount
		err  string
	}{
		{"data:/data", VolumeMount{Name: "data", MountPath: "/data"}, ""},
		{"data:/mnt/data:ro", VolumeMount{Name: "data", MountPath: "/mnt/data", ReadOnly: true}, ""},
		{"data:/mnt/data:rw", VolumeMount{Name: "data", MountPath: "/mnt/data"}, ""},
		{"data", VolumeMount{}, "use NAME:/mount/path"},
		{"data:/d:rx", VolumeMount{}, "use NAME:/mount/path"},
		{"data:d", VolumeMount{}, "must be absolute"},
		{"data:/d/", VolumeMount{}, "must be clean"},
		{"data:/a/../b", VolumeMount{}, "must be clean"},
		{"-data:/d", VolumeMount{}, "is not a volume name"},
	} {
		got, err := ParseVolumeMount(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrInvalidRequest) {
				t.Errorf("%q: err = %v, want one containing %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want || got.String() != strings.TrimSuffix(tc.in, ":rw") {
			t.Errorf("%q: %+v (%q), %v", tc.in, got, got.String(), err)
		}
	}
}

func TestVolumeNameAndSize(t *testing.T) {
	for name, ok := range map[string]bool{
		"a": true, "data-1": true, "0x": true, strings.Repeat("a", 40): true,
		"": false, "-a": false, "a-": false, "A": false, "a_b": false, strings.Repeat("a", 41): false, "me/data": false,
	} {
		if err := ValidateVolumeName(name); (err == nil) != ok {
			t.Errorf("ValidateVolumeName(%q) = %v", name, err)
		}
	}
	for ref, ok := range map[string]bool{"data": true, "me/data": true, "me/": false, "/data": false, "a/b/c": false} {
		if err := ValidateVolumeRef(ref); (err == nil) != ok {
			t.Errorf("ValidateVolumeRef(%q) = %v", ref, err)
		}
	}
	for size, ok := range map[int]bool{1: true, 100: true, 0: false, 101: false, -5: false} {
		if err := ValidateVolumeSize(size); (err == nil) != ok {
			t.Errorf("ValidateVolumeSize(%d) = %v", size, err)
		}
	}
}

func TestNetworkRules(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rules []NetworkRule
		err   string
	}{
		{"none", nil, ""},
		{"all to tag", []NetworkRule{{From: "*", To: "tag:tools", Ports: []int{8080}}}, ""},
		{"tag to tag", []NetworkRule{{From: "tag:agent", To: "tag:tool.v2", Ports: []int{1, 65535}}}, ""},
		{"bare tag", []NetworkRule{{From: "agent", To: "*", Ports: []int{80}}}, `from: selector "agent"`},
		{"empty tag", []NetworkRule{{From: "*", To: "tag:", Ports: []int{80}}}, `to: selector "tag:"`},
		{"bad tag", []NetworkRule{{From: "*", To: "tag:a b", Ports: []int{80}}}, `tag "a b"`},
		{"no ports", []NetworkRule{{From: "*", To: "*"}}, "at least one port"},
		{"port 0", []NetworkRule{{From: "*", To: "*", Ports: []int{0}}}, "port 0"},
		{"port too big", []NetworkRule{{From: "*", To: "*", Ports: []int{65536}}}, "port 65536"},
		{"second rule", []NetworkRule{{From: "*", To: "*", Ports: []int{1}}, {From: "x", To: "*", Ports: []int{1}}}, "rule 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateNetworkRules(tc.rules)
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrInvalidRequest) {
				t.Fatalf("err = %v, want one containing %q", err, tc.err)
			}
		})
	}
}

func TestRuleAllows(t *testing.T) {
	rules := []NetworkRule{
		{From: "tag:agent", To: "tag:tools", Ports: []int{8080}},
		{From: "*", To: "tag:dns", Ports: []int{53}},
	}
	for _, tc := range []struct {
		from, to []string
		port     int
		want     bool
	}{
		{[]string{"agent"}, []string{"tools"}, 8080, true},
		{[]string{"agent"}, []string{"tools"}, 8081, false},
		{[]string{"tools"}, []string{"agent"}, 8080, false}, // rules are directed
		{nil, []string{"dns"}, 53, true},
		{[]string{"agent", "x"}, []string{"y", "tools"}, 8080, true},
		{[]string{}, []string{}, 8080, false},
	} {
		if got := RuleAllows(rules, tc.from, tc.to, tc.port); got != tc.want {
			t.Errorf("%v → %v :%d = %v, want %v", tc.from, tc.to, tc.port, got, tc.want)
		}
	}
	if RuleAllows(nil, []string{"a"}, []string{"a"}, 1) {
		t.Error("no rules must allow nothing")
	}
}

func TestValidateSSHPublicKey(t *testing.T) {
	for key, want := range map[string]string{
		"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOk me@host":                                    "",
		"ecdsa-sha2-nistp256 AAAAE2VjZHNh\n":                                                 "",
		"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC\n-----END OPENSSH PRIVATE KEY-----": "private key",
		"ssh-ed25519":                       "one OpenSSH public key line",
		"ssh-ed25519 AAA\nssh-rsa BBB":      "one OpenSSH public key line",
		"ssh-dss AAAAB3NzaC1kc3MAAACBAP":    `type "ssh-dss"`,
		"":                                  "one OpenSSH public key line",
		"AAAAC3NzaC1lZDI1NTE5AAAAIOk me@me": `type "AAAAC3NzaC1lZDI1NTE5AAAAIOk"`,
	} {
		err := ValidateSSHPublicKey(key)
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v", key, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%q: err = %v, want %q", key, err, want)
		}
	}
}

func TestParseImageRef(t *testing.T) {
	for in, want := range map[string]ImageRef{
		"u1/tools:1.2":     {Owner: "u1", Name: "tools", Tag: "1.2"},
		"tools:1.2":        {Name: "tools", Tag: "1.2"},
		"tools":            {Name: "tools", Tag: "latest"},
		"python:3.12-slim": {Name: "python", Tag: "3.12-slim"},
	} {
		if got, err := ParseImageRef(in); err != nil || got != want {
			t.Errorf("%q: %+v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "a/b/c:1", "/x:1", "x:", ":1", "x@sha256:abc", "a b:1"} {
		if _, err := ParseImageRef(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestValidateCheckpointIDs(t *testing.T) {
	many := make([]string, 101)
	for i := range many {
		many[i] = strings.Repeat("x", i%60+1) + "-" + string(rune('a'+i%26))
	}
	for _, tc := range []struct {
		ids []string
		err string
	}{
		{[]string{"a"}, ""},
		{nil, "1 to 100 ids"},
		{many, "1 to 100 ids"},
		{[]string{"a", "a"}, "duplicate"},
		{[]string{""}, "1 to 64 characters"},
		{[]string{strings.Repeat("a", 65)}, "1 to 64 characters"},
	} {
		err := ValidateCheckpointIDs(tc.ids)
		if (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%d ids: %v, want %q", len(tc.ids), err, tc.err)
		}
	}
}
