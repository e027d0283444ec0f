package soak

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/primeintellect/terraform-provider-prime/internal/tfcli"
)

// NewWorkspace creates dir (if needed) with a CLI configuration whose
// dev_overrides use the provider binary in providerDir, and its own home
// directory, dir/.home, which goes when dir is removed. No `terraform
// init` is run: with dev_overrides it would ask the registry and fail
// offline, and plan/apply/destroy do not need it. Terraform runs with
// IsolatedEnv(dir/.home) plus the CLI configuration; extraEnv is
// appended to the environment Terraform (and so the provider) gets, and is
// the only way a PRIME_* variable reaches them. Every command's output is
// logged to dir/terraform.log.
func NewWorkspace(dir, terraform, providerDir string, extraEnv ...string) (*tfcli.Workspace, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(providerDir)
	if err != nil {
		return nil, err
	}
	home, err := filepath.Abs(filepath.Join(dir, ".home"))
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(home, ".cache"), 0o700); err != nil {
		return nil, err
	}
	rc := filepath.Join(dir, "cli.tfrc")
	if err := tfcli.WriteDevOverrides(rc, abs); err != nil {
		return nil, err
	}
	env := append(IsolatedEnv(home), "TF_CLI_CONFIG_FILE="+rc)
	env = append(env, extraEnv...)
	ws := tfcli.New(dir, terraform, env)
	ws.Home, ws.LogPath = home, filepath.Join(dir, "terraform.log")
	return ws, nil
}

// IsolatedEnv is the environment for a Terraform command (and the provider
// processes it starts, which inherit it): this process's environment
// without what would make the run depend on the developer's machine or
// account, with HOME = home and XDG_CACHE_HOME = home/.cache.
//
// Dropped: HOME and the XDG base directories (the provider reads
// ~/.prime/config.json, an API key and team, and writes its create journal
// into the user cache directory, which the kill scenarios rely on being
// this workspace's own); every PRIME_* variable (credentials, base URL,
// team); the TF_* variables that change what Terraform does (logging, CLI
// arguments and configuration, data dir, workspace, plugin cache, TF_ACC,
// reattached providers, registry tokens). home is an absolute directory
// the caller made (and removes).
func IsolatedEnv(home string) []string {
	env := []string{}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "HOME", strings.HasPrefix(k, "XDG_") && k != "XDG_RUNTIME_DIR",
			strings.HasPrefix(k, "PRIME_"),
			strings.HasPrefix(k, "TF_LOG"), strings.HasPrefix(k, "TF_CLI_ARGS"), strings.HasPrefix(k, "TF_TOKEN_"),
			k == "TF_CLI_CONFIG_FILE", k == "TF_DATA_DIR", k == "TF_WORKSPACE", k == "TF_PLUGIN_CACHE_DIR",
			k == "TF_ACC", k == "TF_REATTACH_PROVIDERS":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, "XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1", "TF_INPUT=0")
}
