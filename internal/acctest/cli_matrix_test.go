package acctest

import "testing"

// FirstCLIOnly skips only where the Makefile marks a run on an extra CLI.
func TestOnExtraCLI(t *testing.T) {
	for env, want := range map[string]bool{"": false, "1": true} {
		t.Setenv(extraCLIEnv, env)
		if got := onExtraCLI(); got != want {
			t.Errorf("%s=%q: on an extra CLI %v, want %v", extraCLIEnv, env, got, want)
		}
	}
}
