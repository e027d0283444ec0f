package primemock

// Ephemeral SSH sessions. The mock records them and answers with a host and
// port, but serves no SSH [I: ssh-endpoint: the host is the API's own, the port from
// 2200 up]; a session ends when it is closed, expires, or its sandbox is
// paused or ends.

import (
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// SSH session lifetimes [OLD: default 900 s, at most 3600 s].
const (
	defaultSSHTTL = 900
	maxSSHTTL     = 3600
)

type sshSession struct {
	id, sandboxID string
	host          string
	port          int
	ttl           int
	expires       time.Time
	timer         *time.Timer
}

func (s *Server) handleCreateSSH(r *http.Request, caller string) reply {
	var req prime.CreateSSHSessionRequest
	if err := decodeBody(r, &req); err != nil {
		return errorReply(http.StatusUnprocessableEntity, "%v", err)
	}
	fields := strings.Fields(req.PublicKey)
	switch {
	case len(fields) < 2 || strings.Contains(req.PublicKey, "PRIVATE KEY"):
		return errorReply(http.StatusUnprocessableEntity, "public_key: an OpenSSH public key line is required")
	case req.TTLSeconds != nil && (*req.TTLSeconds < 1 || *req.TTLSeconds > maxSSHTTL):
		return errorReply(http.StatusUnprocessableEntity, "ttl_seconds: between 1 and %d", maxSSHTTL)
	}
	ttl := defaultSSHTTL
	if req.TTLSeconds != nil {
		ttl = *req.TTLSeconds
	}
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		host = r.Host
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sb, rep, found := s.lookup(r, caller)
	if !found {
		return rep
	}
	if sb.status != prime.StatusRunning || sb.x.pausing {
		return errorReply(http.StatusConflict, "Sandbox %s is %s; SSH needs a running VM sandbox", sb.id, describeStatus(sb))
	}
	ss := &sshSession{id: s.newResourceID("ssh"), sandboxID: sb.id, host: host, port: 2200 + len(s.res.sessions)%1000,
		ttl: ttl, expires: s.now().Add(time.Duration(ttl) * time.Second)}
	s.res.sessions[ss.id] = ss
	ss.timer = time.AfterFunc(time.Duration(ttl)*time.Second, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.closed && s.res.sessions[ss.id] == ss {
			s.closeSession(ss, "it expired")
		}
	})
	s.emit(Event{Type: EventSSHOpened, SandboxID: sb.id, SessionID: ss.id})
	return ok(prime.SSHSession{SessionID: ss.id, SandboxID: sb.id, Host: ss.host, Port: ss.port, ExpiresAt: ts(ss.expires), TTLSeconds: ss.ttl})
}

func (s *Server) handleCloseSSH(r *http.Request, caller string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb, rep, found := s.lookup(r, caller)
	if !found {
		return rep
	}
	ss := s.res.sessions[r.PathValue("session_id")]
	if ss == nil || ss.sandboxID != sb.id {
		return errorReply(http.StatusNotFound, "SSH session not found")
	}
	s.closeSession(ss, "closed by request")
	// [I: ssh-close-shape] CloseSSHSessionResponse is a name only.
	return ok(map[string]any{"success": true, "message": "SSH session closed"})
}

func (s *Server) closeSession(ss *sshSession, why string) {
	if ss.timer != nil {
		ss.timer.Stop()
	}
	delete(s.res.sessions, ss.id)
	s.emit(Event{Type: EventSSHClosed, SandboxID: ss.sandboxID, SessionID: ss.id, Message: why})
}

// closeSessionsOf ends a sandbox's sessions (paused or ended).
func (s *Server) closeSessionsOf(sb *sandbox, why string) {
	for _, ss := range s.res.sessions {
		if ss.sandboxID == sb.id {
			s.closeSession(ss, why)
		}
	}
}
