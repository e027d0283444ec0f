package prime

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
)

// A 429 is a request the platform refused before acting on it, so even a
// request that is otherwise never repeated once it reached the server (a
// checkpoint, an SSH session, a network) waits out Retry-After and is sent
// again.
func TestRateLimitedCreateIsRetried(t *testing.T) {
	var calls atomic.Int32
	c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = io.WriteString(w, `{"detail":"Rate limit exceeded"}`)
			return
		}
		_, _ = io.WriteString(w, `{"session_id":"s","sandbox_id":"x","host":"h","port":22,"expires_at":"2026-01-01T00:00:00Z","ttl_seconds":900}`)
	}), nil)
	s, err := c.CreateSSHSession(context.Background(), "x", CreateSSHSessionRequest{PublicKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJ me"})
	if err != nil || s.SessionID != "s" {
		t.Fatalf("CreateSSHSession after a 429: %v %v", s, err)
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("%d requests, want 2 (the 429, then the retry)", n)
	}
}
