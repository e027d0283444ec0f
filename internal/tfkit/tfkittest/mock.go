package tfkittest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// MockAPI is an in-process prime-mock for unit tests of code that calls the
// API, closed when the test ends.
type MockAPI struct {
	*primemock.Server
	URL string
}

// Hook sees every request before the mock does; it may answer it itself
// and return true.
type Hook func(w http.ResponseWriter, r *http.Request) bool

// NewMockAPI starts a mock with quick timers, behind hook when it is not nil.
func NewMockAPI(t *testing.T, hook Hook) *MockAPI {
	t.Helper()
	srv := primemock.New(primemock.Options{BootDelay: 60 * time.Millisecond, ApplyDelay: 40 * time.Millisecond, APIKey: "test-key"})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hook != nil && hook(w, r) {
			return
		}
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		ts.Close()
		srv.Close()
	})
	return &MockAPI{Server: srv, URL: ts.URL}
}

// Client is a new client of the mock (a fresh one has learned nothing).
func (m *MockAPI) Client(t *testing.T) *prime.Client {
	t.Helper()
	c, err := prime.New(prime.Options{Config: prime.Config{APIKey: "test-key", BaseURL: m.URL}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// RunningVM creates a sandbox and waits until it and its gateway are ready.
func (m *MockAPI) RunningVM(t *testing.T, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := m.Client(t)
	sb, err := c.CreateSandbox(ctx, prime.CreateSandboxRequest{Name: name, DockerImage: "python:3.12-slim"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WaitForReady(ctx, sb.ID, prime.WaitReadyOptions{Gateway: true}); err != nil {
		t.Fatal(err)
	}
	return sb.ID
}

// MockClient is a client of a new mock.
func MockClient(t *testing.T) *prime.Client {
	t.Helper()
	return NewMockAPI(t, nil).Client(t)
}
