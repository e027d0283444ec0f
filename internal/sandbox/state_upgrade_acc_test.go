package sandbox_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/sandbox"
)

// A state written by the previous release (schema version 0, from a real
// apply: testdata/state-v0) upgrades with an empty plan, both under the
// configuration that wrote it (vm = true: a deprecation warning) and under
// today's (no vm), and the next apply stores the version-1 state.
func TestAccUpgrade_stateFromPreviousReleasePlansEmpty(t *testing.T) {
	cli := acctest.RequireCLI(t)
	provider := acctest.DevProvider(t)
	t.Parallel()
	m := mocktest.New(t, mocktest.Fast())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	// The sandboxes the old state tracks, as the old provider created
	// them, in this test's mock.
	c := m.Client(t)
	two := 2
	ids := map[string]string{}
	for _, sb := range []struct {
		key, name string
		cpu       *int
		labels    []string
	}{
		{"box_id", "upgrade-box", &two, []string{"upgrade"}},
		{"defaults_id", "upgrade-defaults", nil, nil},
		{"member0_id", "upgrade-fleet-0", &two, nil},
		{"member1_id", "upgrade-fleet-1", &two, nil},
	} {
		created, err := c.CreateSandbox(ctx, prime.CreateSandboxRequest{Name: sb.name, DockerImage: "python:3.12-slim",
			CPUCores: sb.cpu, Labels: sb.labels})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.WaitForReady(ctx, created.ID, prime.WaitReadyOptions{Gateway: true}); err != nil {
			t.Fatal(err)
		}
		ids[sb.key] = created.ID
	}
	tmpl, err := os.ReadFile(filepath.Join("testdata", "state-v0", "state.json.tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	oldConfig, err := os.ReadFile(filepath.Join("testdata", "state-v0", "main.tf"))
	if err != nil {
		t.Fatal(err)
	}
	state := os.Expand(string(tmpl), func(k string) string { return ids[k] })
	// Under OpenTofu the previous release's state names the provider on
	// OpenTofu's registry, as the configuration's source resolves there.
	if host := os.Getenv("TF_ACC_PROVIDER_HOST"); host != "" {
		state = strings.ReplaceAll(state, "registry.terraform.io/", host+"/")
	}

	w := acctest.NewMockWork(t, m, provider(), cli, "")
	writeRaw := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(w.Dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeRaw("terraform.tfstate", state)
	todays := strings.ReplaceAll(string(oldConfig), "  vm           = true\n", "")
	if todays == string(oldConfig) {
		t.Fatal("the fixture's configuration has no vm = true to remove")
	}

	for _, tc := range []struct {
		name, config string
		deprecated   bool
	}{
		{"the configuration that wrote the state", string(oldConfig), true},
		{"today's configuration, without vm", todays, false},
	} {
		writeRaw("main.tf", tc.config)
		out, code := w.Exec(ctx, "plan", "-detailed-exitcode", "-no-color")
		if code != 0 {
			t.Fatalf("%s: plan after the upgrade exited %d, want 0 (no changes):\n%s", tc.name, code, out)
		}
		if got := strings.Contains(out, "Warning: Attribute Deprecated"); got != tc.deprecated {
			t.Errorf("%s: vm's deprecation warning shown %t, want %t:\n%s", tc.name, got, tc.deprecated, out)
		}
	}

	// The apply stores the upgraded state: version 1, vm true, whole
	// vCPUs, retired attributes null, arch read back.
	if out, code := w.Exec(ctx, "apply", "-auto-approve", "-no-color"); code != 0 {
		t.Fatalf("apply after the upgrade: %s", out)
	}
	raw, err := os.ReadFile(filepath.Join(w.Dir, "terraform.tfstate"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Resources []struct {
			Mode, Type, Name string
			Instances        []struct {
				SchemaVersion int            `json:"schema_version"`
				Attributes    map[string]any `json:"attributes"`
			}
		}
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for _, r := range doc.Resources {
		if r.Mode != "managed" {
			continue
		}
		in := r.Instances[0]
		a := in.Attributes
		if in.SchemaVersion != sandbox.SchemaVersion || a["vm"] != true || a["guaranteed"] != nil ||
			a["start_command"] != nil || a["registry_credentials_id"] != nil {
			t.Errorf("%s.%s after the apply: version %d, vm %v, guaranteed %v, start_command %v, registry_credentials_id %v",
				r.Type, r.Name, in.SchemaVersion, a["vm"], a["guaranteed"], a["start_command"], a["registry_credentials_id"])
		}
		if want := map[string]float64{"box": 2, "defaults": 1, "fleet": 2}[r.Name]; a["cpu_cores"] != want {
			t.Errorf("%s.%s: cpu_cores %v, want %v", r.Type, r.Name, a["cpu_cores"], want)
		}
		if r.Type == "prime_sandbox" && a["arch"] != prime.ArchAMD64 {
			t.Errorf("%s.%s: arch %v, want the platform's %s read back", r.Type, r.Name, a["arch"], prime.ArchAMD64)
		}
	}
	if out, code := w.Exec(ctx, "plan", "-detailed-exitcode", "-no-color"); code != 0 {
		t.Fatalf("plan after the apply exited %d:\n%s", code, out)
	}
	if live := m.Stats().LiveSandboxes; live != 4 {
		t.Fatalf("%d sandboxes live, want the 4 the old state tracks (nothing replaced)", live)
	}
}
