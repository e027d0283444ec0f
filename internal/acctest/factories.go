package acctest

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/primeintellect/terraform-provider-prime/internal/provider"
)

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
	return Factories{
		"prime": func() (tfprotov6.ProviderServer, error) {
			return provider.NewProtocol6Server(provider.NewWithJournalDir("test", dir)())(), nil
		},
	}
}
