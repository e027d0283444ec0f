package primemock

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// gatewayPrefix is where the mock serves the gateway.
const gatewayPrefix = "/gateway"

// gatewayToken is an issued token: which sandbox it opens and until when.
type gatewayToken struct {
	sandboxID   string
	userNS, job string
	expires     time.Time
}

// handleAuth issues a gateway token. [I: token-any-status] Tokens are issued whatever the
// sandbox's status: the gateway, not the control plane, reports that a
// sandbox is not running or gone, which is the path the SDK's error handling
// is built around.
func (s *Server) handleAuth(r *http.Request, caller string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb, rep, found := s.lookup(r, caller)
	if !found {
		return rep
	}
	tok := newToken()
	// Whole seconds: Python 3.10's fromisoformat accepts no fraction, or
	// exactly 3 or 6 digits, and Go would trim trailing zeros.
	exp := s.now().Add(s.opts.tokenTTL()).Truncate(time.Second)
	s.tokens[tok] = gatewayToken{sandboxID: sb.id, userNS: sb.userNS(), job: sb.jobID(), expires: exp}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return ok(prime.GatewayAuth{
		GatewayURL: scheme + "://" + r.Host + gatewayPrefix,
		Token:      tok,
		UserNS:     sb.userNS(),
		JobID:      sb.jobID(),
		ExpiresAt:  exp,
	})
}

// newToken returns an unguessable token. Tokens deliberately do not come
// from the seeded source: two mocks with one seed must not share tokens, or
// a test that a token stays out of logs could pass by accident.
func newToken() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return "pmgw_" + hex.EncodeToString(b[:])
}

// tokenProblem is why a gateway request's token is refused.
type tokenProblem int

const (
	tokenOK tokenProblem = iota
	tokenUnknown
	tokenExpired
	tokenOtherSandbox
)

// checkToken validates "Authorization: Bearer <gateway token>" for the
// sandbox the path names (user_ns and job_id).
func (s *Server) checkToken(authorization, userNS, job string) (gatewayToken, tokenProblem) {
	tokStr, _ := strings.CutPrefix(authorization, "Bearer ")
	tokStr = strings.TrimSpace(tokStr)
	s.mu.Lock()
	defer s.mu.Unlock()
	tok, known := s.tokens[tokStr]
	switch {
	case !known || tokStr == "":
		return tok, tokenUnknown
	case !s.now().Before(tok.expires):
		delete(s.tokens, tokStr)
		return tok, tokenExpired
	case userNS != tok.userNS || job != tok.job:
		return tok, tokenOtherSandbox
	}
	return tok, tokenOK
}

// gatewayError writes the gateway's error shape, e.g.
// {"error":"sandbox_not_found","sandboxId":"…","message":"…","code":502}.
func gatewayError(w http.ResponseWriter, status int, code, msg, sandboxID string) {
	body := map[string]any{"error": code, "message": msg, "code": status}
	if sandboxID != "" {
		body["sandboxId"] = sandboxID
	}
	writeJSON(w, status, body)
}

// gatewayBegin is what every REST gateway request gets first: it is
// counted under its route, waits the latency, and fails during an outage.
func (s *Server) gatewayBegin(w http.ResponseWriter, r *http.Request, route string) bool {
	s.count(route)
	if !s.delay(r.Context()) {
		return false
	}
	if s.inOutage() {
		writeEdgeUnavailable(w)
		return false
	}
	return true
}

// gatewayToken authenticates a REST gateway request: a missing, unknown or
// expired token is 401, a token of another sandbox 403.
func (s *Server) gatewayToken(w http.ResponseWriter, r *http.Request) (gatewayToken, bool) {
	tok, problem := s.checkToken(r.Header.Get("Authorization"), r.PathValue("user_ns"), r.PathValue("job_id"))
	switch problem {
	case tokenUnknown:
		gatewayError(w, http.StatusUnauthorized, "unauthorized", "missing or invalid gateway token", "")
		return tok, false
	case tokenExpired:
		gatewayError(w, http.StatusUnauthorized, "unauthorized", "the gateway token has expired", "")
		return tok, false
	case tokenOtherSandbox:
		gatewayError(w, http.StatusForbidden, "forbidden", "the token is not valid for this sandbox", "")
		return tok, false
	}
	return tok, true
}

// refuseUnservedLocked answers for a sandbox the gateway cannot serve: gone
// or terminal, or RUNNING but not yet registered (the gateway lag), is 502
// sandbox_not_found; [I: gateway-booting-409] PENDING or PROVISIONING is 409. It reports
// whether it answered.
func refuseUnservedLocked(w http.ResponseWriter, sb *sandbox, id string) bool {
	switch {
	case sb == nil || isTerminal(sb.status) || (sb.status == prime.StatusRunning && !sb.gatewayReady):
		gatewayError(w, http.StatusBadGateway, "sandbox_not_found", "The sandbox was not found", id)
	case sb.status != prime.StatusRunning:
		gatewayError(w, http.StatusConflict, "sandbox_not_ready", "The sandbox is not running yet (status "+sb.status+")", id)
	default:
		return false
	}
	return true
}

// servedSandbox finds the token's sandbox and refuses one the gateway
// cannot serve.
func (s *Server) servedSandbox(w http.ResponseWriter, tok gatewayToken) (*sandbox, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb := s.sandboxes[tok.sandboxID]
	if refuseUnservedLocked(w, sb, tok.sandboxID) {
		return nil, false
	}
	return sb, true
}

// edgeUnavailable is what an edge proxy answers when the gateway behind it
// is down. [I: outage-html] nginx's page: clients must cope with a body that is not
// JSON.
const edgeUnavailable = "<html>\r\n<head><title>503 Service Temporarily Unavailable</title></head>\r\n<body>\r\n" +
	"<center><h1>503 Service Temporarily Unavailable</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"

func writeEdgeUnavailable(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html")
	w.Header().Set("Content-Length", strconv.Itoa(len(edgeUnavailable)))
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = w.Write([]byte(edgeUnavailable))
}
