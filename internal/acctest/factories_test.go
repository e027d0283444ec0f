package acctest

import (
	"os"
	"slices"
	"testing"
)

// Serving the provider in process turns the framework's own logs off (their
// trace is quadratic in a state's size), and only this process's: the CLI
// runs do not inherit the setting.
func TestProviderFactoriesQuietTheFrameworkOnly(t *testing.T) {
	if _, set := os.LookupEnv(frameworkLogEnv); set && !frameworkQuieted.Load() {
		t.Skipf("%s is set by the developer: left as it is", frameworkLogEnv)
	}
	before := map[string]string{}
	for _, k := range []string{"TF_LOG_SDK", "TF_LOG_PROVIDER"} {
		before[k] = os.Getenv(k)
	}
	ProviderFactoriesWithJournal(t.TempDir())
	if got := os.Getenv(frameworkLogEnv); got != "OFF" {
		t.Fatalf("%s = %q after serving the provider, want OFF", frameworkLogEnv, got)
	}
	if slices.Contains(TFEnv("rc"), frameworkLogEnv+"=OFF") {
		t.Errorf("the CLI's environment carries %s=OFF", frameworkLogEnv)
	}
	for k, v := range before {
		if got := os.Getenv(k); got != v {
			t.Errorf("%s changed from %q to %q: the provider's own and the SDK's logs must stay as they were", k, v, got)
		}
	}
}
