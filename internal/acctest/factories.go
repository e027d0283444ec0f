package acctest

import (
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/primeintellect/terraform-provider-prime/internal/provider"
)

// frameworkLogEnv sets the level of the plugin framework's own logs.
const frameworkLogEnv = "TF_LOG_SDK_FRAMEWORK"

var (
	quietFramework sync.Once
	// frameworkQuieted: this process set frameworkLogEnv (TFEnv keeps it
	// from the CLIs and the provider binaries they start, whose main
	// quiets their logs itself unless a TF_LOG_SDK* variable is set).
	frameworkQuieted atomic.Bool
)

// quietFrameworkTrace turns the framework's own logs off in this process,
// unless the developer set their level. Left at their default, the
// framework's trace of every attribute value it nullifies walks a context
// that grows by one value per attribute (terraform-plugin-framework
// v1.19.0, NullifyWriteOnlyAttributes), so each plan of an in-process
// provider costs time quadratic in the size of its state: measured at 40 %
// of internal/egress's test binary CPU and 17 % of its wall time. The
// provider's own logs and the SDK's stay as they were, so TF_ACC_LOG_PATH
// still records what the secret-masking tests search.
func quietFrameworkTrace() {
	quietFramework.Do(func() {
		if _, set := os.LookupEnv(frameworkLogEnv); !set {
			frameworkQuieted.Store(os.Setenv(frameworkLogEnv, "OFF") == nil)
		}
	})
}

// Factories is what resource.TestCase's ProtoV6ProviderFactories takes.
type Factories = map[string]func() (tfprotov6.ProviderServer, error)

// ProviderFactories serves the provider to one test. Each test gets its own
// create journal directory: the provider runs in this process, so the
// default (the user cache, keyed by working directory) would be shared by
// every parallel test.
func ProviderFactories(t *testing.T) Factories {
	return ProviderFactoriesWithJournal(t.TempDir())
}

// ProviderFactoriesWithJournal serves the provider with its journals in
// dir, for tests that look at what the journal holds.
func ProviderFactoriesWithJournal(dir string) Factories {
	quietFrameworkTrace()
	return Factories{
		"prime": func() (tfprotov6.ProviderServer, error) {
			return provider.NewProtocol6Server(provider.NewWithJournalDir("test", dir)())(), nil
		},
	}
}
