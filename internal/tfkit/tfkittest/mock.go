package tfkittest

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// MockClient is a client of an in-process prime-mock with quick timers,
// closed when the test ends: for unit tests of code that calls the API.
func MockClient(t *testing.T) *prime.Client {
	t.Helper()
	_, c := Mock(t)
	return c
}

// Mock is MockClient with the mock itself, for tests that read its stats.
func Mock(t *testing.T) (*primemock.Server, *prime.Client) {
	t.Helper()
	srv := primemock.New(primemock.Options{BootDelay: 60 * time.Millisecond, ApplyDelay: 40 * time.Millisecond, APIKey: "test-key"})
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		ts.Close()
		srv.Close()
	})
	c, err := prime.New(prime.Options{Config: prime.Config{APIKey: "test-key", BaseURL: ts.URL}})
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}
