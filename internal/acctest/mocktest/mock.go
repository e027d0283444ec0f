package mocktest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// APIKey is the key every mock accepts and every fixture sends.
const APIKey = "test-key"

// Image is the image the harness's sandboxes run: the mock runs any image,
// and this is the one the examples use.
const Image = "python:3.12-slim"

// Mock is one in-process Prime API for one test, with a recorder of the
// request bodies the provider sent. It is closed when the test ends.
type Mock struct {
	*primemock.Server
	URL string

	ts       *httptest.Server
	mu       sync.Mutex
	requests []Request

	// conns counts the client connections open on the mock; connsChanged
	// is closed (and replaced) whenever that count changes.
	conns        int
	connsChanged chan struct{}
}

// Request is one /api/v1 request the mock received.
type Request struct {
	Method, Path string
	Body         []byte
	At           time.Time
}

// Fast are the options of most tests: quick timers, while every lifecycle
// step still happens on a timer.
func Fast() primemock.Options {
	return primemock.Options{BootDelay: 60 * time.Millisecond, ApplyDelay: 40 * time.Millisecond, APIKey: APIKey}
}

// New starts a mock with options o.
func New(t testing.TB, o primemock.Options) *Mock {
	t.Helper()
	return NewHooked(t, o, nil)
}

// Hook sees every /api/v1 request (and its body) before the mock does; it
// may delay it, or answer it itself and return true.
type Hook func(w http.ResponseWriter, r *http.Request, body []byte) bool

// NewHooked is New with a hook in front of the mock: for races and
// refusals the mock has no knob for.
func NewHooked(t testing.TB, o primemock.Options, hook Hook) *Mock {
	t.Helper()
	m := &Mock{Server: primemock.New(o), connsChanged: make(chan struct{})}
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, prime.APIPrefix) {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			m.mu.Lock()
			m.requests = append(m.requests, Request{Method: r.Method, Path: r.URL.Path, Body: body, At: time.Now()})
			m.mu.Unlock()
			if hook != nil && hook(w, r, body) {
				return
			}
		}
		m.Server.ServeHTTP(w, r)
	}))
	ts.Config.ConnState = m.trackConn
	ts.Start()
	m.ts, m.URL = ts, ts.URL
	t.Cleanup(func() {
		ts.Close()
		m.Server.Close()
	})
	return m
}

// trackConn counts the open client connections (http.Server.ConnState).
func (m *Mock) trackConn(_ net.Conn, state http.ConnState) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch state {
	case http.StateNew:
		m.conns++
	case http.StateClosed, http.StateHijacked:
		m.conns--
	default:
		return
	}
	close(m.connsChanged)
	m.connsChanged = make(chan struct{})
}

// DropClients closes every client connection of the mock and returns once
// none is left: what a dead runner sent and the mock has not answered yet
// is then either answered or gone, never processed later.
func (m *Mock) DropClients(ctx context.Context) error {
	m.ts.CloseClientConnections()
	for {
		m.mu.Lock()
		n, changed := m.conns, m.connsChanged
		m.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("%d client connections still open on the mock: %w", n, ctx.Err())
		}
	}
}

// ProviderBlock configures the provider against this mock.
func (m *Mock) ProviderBlock() string {
	return fmt.Sprintf(`
provider "prime" {
  base_url = %q
  api_key  = %q
}
`, m.URL, APIKey)
}

// Config prepends the provider block to HCL.
func (m *Mock) Config(hcl string) string { return m.ProviderBlock() + hcl }

// APIRequests is the number of /api/v1 requests the mock received.
func (m *Mock) APIRequests() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.requests)
}

// Requests is a copy of the /api/v1 requests the mock received, in order.
func (m *Mock) Requests() []Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Request(nil), m.requests...)
}

// Client is an API client of the mock for out-of-band changes (drift) in
// tests. A fresh one has learned nothing.
func (m *Mock) Client(t testing.TB) *prime.Client {
	t.Helper()
	c, err := prime.New(prime.Options{Config: prime.Config{APIKey: APIKey, BaseURL: m.URL}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// RunningVM creates a sandbox out of band and waits until it and its
// gateway are ready.
func (m *Mock) RunningVM(t testing.TB, name string) string {
	t.Helper()
	ctx := WaitCtx(t)
	c := m.Client(t)
	sb, err := c.CreateSandbox(ctx, prime.CreateSandboxRequest{Name: name, DockerImage: Image})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WaitForReady(ctx, sb.ID, prime.WaitReadyOptions{Gateway: true}); err != nil {
		t.Fatal(err)
	}
	return sb.ID
}

// WaitCtx is a context for a test's own waits on the mock: thirty seconds,
// ended with the test. It bounds a wait that would otherwise hang; no test
// asserts on it.
func WaitCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// Client is a client of a new mock with Fast options.
func Client(t testing.TB) *prime.Client {
	t.Helper()
	return New(t, Fast()).Client(t)
}
