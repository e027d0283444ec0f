package acctest

import (
	"os"
	"path/filepath"
	"testing"
)

// goHome is HOME as the test process started with it, captured before Main
// points HOME at a temporary directory: `go build` needs it to find the
// developer's module and build caches (without them it downloads every
// module and recompiles everything into a throwaway cache).
var goHome = os.Getenv("HOME")

// Main runs an acceptance test binary hermetically: no PRIME_* settings or
// ~/.prime/config.json of the developer leak in, and the Terraform CLI gets
// an existing (empty) CLI configuration file. Every package with
// acceptance tests calls it from its TestMain.
func Main(m *testing.M) {
	for _, k := range []string{"PRIME_API_KEY", "PRIME_TEAM_ID", "PRIME_BASE_URL", "PRIME_API_BASE_URL", "PRIME_USER_ID"} {
		_ = os.Unsetenv(k)
	}
	tmp, err := os.MkdirTemp("", "prime-acc-")
	if err != nil {
		panic(err)
	}
	_ = os.Setenv("HOME", tmp)
	_ = os.Unsetenv("XDG_CACHE_HOME") // the create journal lives in the user cache
	if f := os.Getenv("TF_CLI_CONFIG_FILE"); f == "" || !FileExists(f) {
		rc := filepath.Join(tmp, "terraformrc")
		_ = os.WriteFile(rc, nil, 0o600)
		_ = os.Setenv("TF_CLI_CONFIG_FILE", rc)
	}
	_ = os.Setenv("CHECKPOINT_DISABLE", "1")
	code := m.Run()
	_ = os.RemoveAll(tmp)
	os.Exit(code)
}

// FileExists reports whether p exists.
func FileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
