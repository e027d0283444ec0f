package prime

// Ephemeral SSH sessions to a running VM sandbox: the caller sends a public
// key and gets a host, port and expiry; closing the session ends it early.
// Only a public key ever leaves the machine, so a session's answer holds
// nothing secret.

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// MaxSSHSessionTTLSeconds is the session lifetime limit the older API
// reference published (default 900 s) [OLD; the current one is not
// visible].
const MaxSSHSessionTTLSeconds = 3600

// CreateSSHSessionRequest is the POST /sandbox/{id}/ssh-session body.
type CreateSSHSessionRequest struct {
	PublicKey  string `json:"public_key"`
	TTLSeconds *int   `json:"ttl_seconds,omitempty"`
}

// SSHSession is the session answer.
type SSHSession struct {
	SessionID  string    `json:"session_id"`
	SandboxID  string    `json:"sandbox_id"`
	Host       string    `json:"host"`
	Port       int       `json:"port"`
	ExpiresAt  time.Time `json:"expires_at"`
	TTLSeconds int       `json:"ttl_seconds"`
}

// UnmarshalJSON reads expires_at with or without a zone.
func (s *SSHSession) UnmarshalJSON(data []byte) error {
	type plain SSHSession
	return decodeWithISOTimes(data, (*plain)(s))
}

// sshKeyTypes are the OpenSSH public key types a session can take.
var sshKeyTypes = []string{
	"ssh-ed25519", "ssh-rsa", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521",
	"sk-ssh-ed25519@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com",
}

// ValidateSSHPublicKey checks that key is one OpenSSH public key line
// ("TYPE BASE64 [comment]") and, above all, not a private key, which must
// never be sent anywhere.
func ValidateSSHPublicKey(key string) error {
	k := strings.TrimSpace(key)
	if strings.Contains(k, "PRIVATE KEY") || strings.HasPrefix(k, "-----BEGIN") {
		return fmt.Errorf("%w: public_key holds a private key; send the .pub file's single line instead (the private key must never leave your machine)", ErrInvalidRequest)
	}
	fields := strings.Fields(k)
	if len(fields) < 2 || strings.Contains(k, "\n") {
		return fmt.Errorf("%w: public_key must be one OpenSSH public key line, \"TYPE BASE64 [comment]\"", ErrInvalidRequest)
	}
	for _, t := range sshKeyTypes {
		if fields[0] == t {
			return nil
		}
	}
	return fmt.Errorf("%w: public_key type %q is not one of %s", ErrInvalidRequest, fields[0], strings.Join(sshKeyTypes, ", "))
}

// CreateSSHSession opens an ephemeral SSH session to a running VM sandbox.
// A create is not retried once it may have reached the server: a second
// session nobody knows of would stay open until it expires.
func (c *Client) CreateSSHSession(ctx context.Context, sandboxID string, req CreateSSHSessionRequest) (*SSHSession, error) {
	if err := ValidateSSHPublicKey(req.PublicKey); err != nil {
		return nil, err
	}
	if t := req.TTLSeconds; t != nil && (*t < 1 || *t > MaxSSHSessionTTLSeconds) {
		return nil, fmt.Errorf("%w: ttl_seconds must be between 1 and %d, got %d", ErrInvalidRequest, MaxSSHSessionTTLSeconds, *t)
	}
	req.PublicKey = strings.TrimSpace(req.PublicKey)
	p := sandboxPath(sandboxID) + "/ssh-session"
	var out SSHSession
	if err := c.do(ctx, call{method: http.MethodPost, path: p, body: req, out: &out, retry: retryUnsent}); err != nil {
		return nil, err
	}
	if out.SessionID == "" || out.Host == "" || out.Port == 0 {
		return nil, fmt.Errorf("POST %s: the answer lacks session_id, host or port", p)
	}
	return &out, nil
}

// CloseSSHSession ends a session (any 2xx; the answer's fields are not
// published). An unknown session wraps ErrNotFound; callers that only want
// it closed (it may have expired) treat that as success.
func (c *Client) CloseSSHSession(ctx context.Context, sandboxID, sessionID string) error {
	p := sandboxPath(sandboxID) + "/ssh-session/" + url.PathEscape(sessionID)
	return c.do(ctx, call{method: http.MethodDelete, path: p, retry: retryIdempotent})
}
