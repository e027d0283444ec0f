package soak

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/tfcli"
)

// The test binary doubles as the processes a workspace starts (see
// TestMain): with recordEnvDirEnv set, it first writes what it sees of its
// environment to DIR/PID.json; with fakeTerraformEnv=1 it then exits 0 in
// place of terraform, and with serveProviderEnv=1 it serves the provider.
const (
	recordEnvDirEnv  = "PRIME_SOAK_RECORD_ENV_DIR"
	fakeTerraformEnv = "PRIME_SOAK_FAKE_TERRAFORM"
)

// seenEnv is what one process saw: where the provider's config file
// (~/.prime/config.json) and create journal (the user cache directory)
// would be, and its whole environment.
type seenEnv struct {
	Home    string   `json:"home"`
	Cache   string   `json:"cache"`
	Environ []string `json:"environ"`
}

func recordEnv(dir string) {
	var s seenEnv
	s.Home, _ = os.UserHomeDir()
	s.Cache, _ = os.UserCacheDir()
	s.Environ = os.Environ()
	b, _ := json.Marshal(s)
	_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.json", os.Getpid())), b, 0o600)
}

// developerMachine makes this process look like a developer's: a HOME with
// a Prime CLI login, a user cache directory, PRIME_* credentials. It
// returns the home directories no workspace process may use: that fake one
// and the real one.
func developerMachine(t *testing.T) (forbidden []string) {
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		forbidden = append(forbidden, home)
	}
	dev := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dev, ".prime"), 0o700); err != nil {
		t.Fatal(err)
	}
	login := `{"api_key": "developer-key", "team_id": "developer-team"}`
	if err := os.WriteFile(filepath.Join(dev, ".prime", "config.json"), []byte(login), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", dev)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dev, ".cache"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dev, ".config"))
	t.Setenv("PRIME_API_KEY", "developer-key")
	t.Setenv("PRIME_TEAM_ID", "developer-team")
	t.Setenv("PRIME_API_BASE_URL", "https://developer.invalid")
	return append(forbidden, dev)
}

// checkSeen checks every record in dir (at least one): HOME and the cache
// directory are the workspace's, not a forbidden home or inside one, and
// the only PRIME_* variables are those in allowed (the ones the test set
// through the workspace).
func checkSeen(t *testing.T, dir string, ws *tfcli.Workspace, forbidden []string, allowed map[string]bool) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no process recorded its environment")
	}
	within := func(p, root string) bool {
		rel, err := filepath.Rel(root, p)
		return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var s seenEnv
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		name := filepath.Base(f)
		if s.Home != ws.Home {
			t.Errorf("%s: home directory %q, want the workspace's %q", name, s.Home, ws.Home)
		}
		if want := filepath.Join(ws.Home, ".cache"); s.Cache != want {
			t.Errorf("%s: user cache directory %q, want %q", name, s.Cache, want)
		}
		for _, h := range forbidden {
			if within(s.Home, h) && !within(s.Home, ws.Dir) {
				t.Errorf("%s: home directory %q is the developer's (%s)", name, s.Home, h)
			}
			if within(s.Cache, h) && !within(s.Cache, ws.Dir) {
				t.Errorf("%s: user cache directory %q is the developer's (%s)", name, s.Cache, h)
			}
		}
		for _, kv := range s.Environ {
			k, _, _ := strings.Cut(kv, "=")
			if strings.HasPrefix(k, "PRIME_") && !allowed[k] {
				t.Errorf("%s: %s leaked in from the developer's environment", name, kv)
			}
		}
	}
}

// TestWorkspaceCommandsGetTheirOwnHome runs a workspace command (this test
// binary standing in for terraform, no CLI needed) on a machine with a
// developer's HOME, cache directory and PRIME_* credentials, and checks the
// command sees none of them.
func TestWorkspaceCommandsGetTheirOwnHome(t *testing.T) {
	forbidden := developerMachine(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rec := t.TempDir()
	ws, err := NewWorkspace(filepath.Join(t.TempDir(), "ws"), self, t.TempDir(),
		fakeTerraformEnv+"=1", recordEnvDirEnv+"="+rec, "PRIME_API_BASE_URL=http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if res := ws.Run(ctx, "version"); !res.OK() {
		t.Fatalf("%s\n%s", res.Describe(), res.Output)
	}
	checkSeen(t, rec, ws, forbidden, map[string]bool{fakeTerraformEnv: true, recordEnvDirEnv: true, "PRIME_API_BASE_URL": true})
	for _, kv := range ws.Env {
		if kv == "PRIME_API_BASE_URL=https://developer.invalid" {
			t.Errorf("workspace environment keeps the developer's %s", kv)
		}
	}
}

// TestProviderProcessGetsItsOwnHome is the same check on the provider
// process the real Terraform CLI starts through dev_overrides (this test
// binary serving the provider, as in TestShortSoak): it must not see the
// developer's HOME (whose ~/.prime/config.json holds their API key), user
// cache directory (where its create journal goes) or PRIME_* variables.
func TestProviderProcessGetsItsOwnHome(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("set TF_ACC=1 to run the Terraform CLI")
	}
	tf := terraformCLI(t)
	forbidden := developerMachine(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pdir := t.TempDir()
	if err := os.Symlink(self, filepath.Join(pdir, "terraform-provider-prime")); err != nil {
		t.Fatal(err)
	}
	rec := t.TempDir()
	ws, err := NewWorkspace(filepath.Join(t.TempDir(), "ws"), tf, pdir, serveProviderEnv+"=1", recordEnvDirEnv+"="+rec)
	if err != nil {
		t.Fatal(err)
	}
	// No resources: planning still starts the provider for its schema.
	if err := ws.WriteConfig(`terraform {
  required_providers {
    prime = { source = "primeintellect/prime" }
  }
}

provider "prime" {
  base_url = "http://127.0.0.1:1"
}
`); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if res := ws.Run(ctx, "plan", "-input=false"); !res.OK() {
		t.Fatalf("%s\n%s", res.Describe(), res.Output)
	}
	checkSeen(t, rec, ws, forbidden, map[string]bool{serveProviderEnv: true, recordEnvDirEnv: true})
}
