package prime

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
)

// A file read whose answer was cut is repeated: it is idempotent. (A
// command whose stream breaks is never repeated: exec_connect_test.go.)
func TestGatewayCutAnswerRetriedOnlyWhenIdempotent(t *testing.T) {
	fastConflicts(t)
	g := newFakeGateway(t)
	g.add("sb-1", &fakeSandbox{})
	g.putFile("sb-1", "/f", []byte("x"))
	cut := func(w http.ResponseWriter) {
		w.Header().Set("Content-Length", "100")
		_, _ = w.Write([]byte(`{"stdout":`))
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}
	g.onFile = func(n int, _ string, w http.ResponseWriter, _ *http.Request) bool {
		if n == 0 {
			cut(w)
		}
		return false
	}
	c, _ := g.client(nil)
	if _, err := c.ReadFile(context.Background(), "sb-1", ReadFileRequest{Path: "/f"}); err != nil {
		t.Fatalf("read-file after a cut answer: %v", err)
	}
	if n := g.count("read-file"); n != 2 {
		t.Errorf("%d read-file requests, want 2", n)
	}
}

// A request that never left is repeated whatever it is, on the client's
// retry policy.
func TestGatewayUnsentRetriedForEveryRoute(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/gw/"
	_ = ln.Close() // nothing listens there now: connections are refused
	g := newFakeGateway(t)
	g.add("sb-1", &fakeSandbox{})
	g.gatewayURL = closed
	c, rec := g.client(func(o *Options) { o.MaxRetries = 2 })
	_, execErr := c.Exec(context.Background(), "sb-1", ExecRequest{Command: "true"})
	_, readErr := c.ReadFile(context.Background(), "sb-1", ReadFileRequest{Path: "/f"})
	for _, err := range []error{execErr, readErr} {
		if err == nil || !isUnsent(err) {
			t.Errorf("err = %v; want the refused connection", err)
		}
	}
	if n := strings.Count(rec.all(), "Prime gateway request {"); n != 3 {
		t.Errorf("%d read-file attempts, want 3 (1 + MaxRetries)", n)
	}
	if n := strings.Count(rec.all(), "Prime gateway RPC {"); n != 3 {
		t.Errorf("%d command attempts, want 3 (1 + MaxRetries)", n)
	}
	var pre *preSendError
	if errors.As(execErr, &pre) {
		t.Error("a refused connection is not a failure before sending (the token was fetched)")
	}
}
