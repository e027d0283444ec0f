package prime

// The sandbox gateway runs commands, with a short-lived token from POST
// /sandbox/{id}/auth, over the Connect command-session service
// (exec_connect.go). Every sandbox is a VM since containers were retired
// (2026-09-18), so that is the only transport: the containers' REST exec
// (POST {gateway_url}/{user_ns}/{job_id}/exec) is gone from the platform and
// from this client.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"
)

// DefaultExecTimeout is the command timeout when ExecRequest.Timeout is
// zero (the SDK's default).
const DefaultExecTimeout = 300 * time.Second

// tokenRefreshMargin: a cached token this close to expiry is replaced before
// use, so it cannot expire while a request is on its way.
const tokenRefreshMargin = 30 * time.Second

// Exec errors. A *SandboxFailedError in the chain carries the platform's
// status, error type and message.
var (
	// ErrSandboxNotRunning: the sandbox is gone, stopped, or not running
	// yet.
	ErrSandboxNotRunning = errors.New("sandbox is not running")
	// ErrExecTimeout: the command did not finish within its timeout.
	ErrExecTimeout = errors.New("command timed out")
	// ErrCommandMayStillRun: the client lost track of a command that had
	// (or may have) started, without learning how it ended: a command
	// stream broke after the command started, or a timed-out command could
	// not be stopped. Running it again may run it twice.
	ErrCommandMayStillRun = errors.New("the command may still be running in the sandbox")
)

// ExecRequest is one command for Client.Exec.
type ExecRequest struct {
	// Command is a shell command line (the gateway runs it with a shell).
	Command string
	// WorkingDir is the directory to run in; empty means the default.
	WorkingDir string
	// Env adds environment variables.
	Env map[string]string
	// SensitiveEnv adds environment variables whose values are secret: they
	// are merged into Env (winning over a variable of the same name) and
	// their values are scrubbed from every debug record and returned error.
	SensitiveEnv map[string]string
	// Secrets are values that must not show either — a sandbox's own
	// secrets, which the command's environment already holds (see
	// SandboxSecretValues) —: scrubbed like SensitiveEnv's values, and not
	// set in the environment.
	Secrets []string
	// SensitiveOutput keeps the command's output out of debug records.
	// Errors never carry output.
	SensitiveOutput bool
	// Timeout bounds the command; zero means DefaultExecTimeout.
	Timeout time.Duration
	// OnOutput, when set, is called with the command's output as it
	// arrives, for every data event of the command stream. Chunks are
	// scrubbed of SensitiveEnv values (a value split across two chunks
	// included); the full result is still returned. It runs on the
	// command's goroutine and must return quickly.
	OnOutput func(stderr bool, chunk []byte)
}

// ExecResult is a finished command. A non-zero ExitCode is a normal result,
// not an error.
type ExecResult struct {
	ExitCode int
	Stdout   string
	Stderr   string
}

// gatewayTokens caches one gateway token per sandbox.
type gatewayTokens struct {
	mu      sync.Mutex
	entries map[string]*tokenEntry
}

// tokenEntry holds a sandbox's token. lock (a one-slot channel, so a waiter
// can give up when its context ends) is held while a token is fetched, so
// concurrent commands on one sandbox share a single POST /auth.
type tokenEntry struct {
	lock chan struct{}
	auth *GatewayAuth
}

func (g *gatewayTokens) entry(id string) *tokenEntry {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.entries == nil {
		g.entries = map[string]*tokenEntry{}
	}
	e := g.entries[id]
	if e == nil {
		e = &tokenEntry{lock: make(chan struct{}, 1)}
		g.entries[id] = e
	}
	return e
}

// invalidate drops token if it is still the cached one (a concurrent caller
// may already have replaced it with a fresh one). It waits for a fetch in
// progress (which replaces the token anyway) only as long as ctx lasts.
func (g *gatewayTokens) invalidate(ctx context.Context, id, token string) error {
	e := g.entry(id)
	select {
	case e.lock <- struct{}{}:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	if e.auth != nil && e.auth.Token == token {
		e.auth = nil
	}
	<-e.lock
	return nil
}

// forget drops a sandbox that no longer exists.
func (g *gatewayTokens) forget(id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.entries, id)
}

// gatewayAuth returns a cached token that is not about to expire, or
// fetches a new one.
func (c *Client) gatewayAuth(ctx context.Context, id string) (*GatewayAuth, error) {
	e := c.gateway.entry(id)
	select {
	case e.lock <- struct{}{}:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	defer func() { <-e.lock }()
	if e.auth != nil && time.Until(e.auth.ExpiresAt) > tokenRefreshMargin {
		return e.auth, nil
	}
	a, err := c.CreateGatewayAuth(ctx, id)
	if err != nil {
		return nil, err
	}
	e.auth = a
	return a, nil
}

// Exec runs a command in a sandbox through the gateway and returns its exit
// code and output. The transport follows the sandbox's kind (VM: Connect
// command session; container: REST exec), read from the Sandbox objects
// this client has seen or, failing that, from one GET /sandbox/{id}.
//
// A command must never run twice because of a retry: a request is repeated
// only when it cannot have reached the gateway, after a refused token (once,
// with a fresh one: nothing ran), and on REST after a 409 while the control
// plane says RUNNING (the gateway refused before running anything). A
// vanished or stopped sandbox yields ErrSandboxNotRunning with a
// *SandboxFailedError explaining why; a command that outlives its timeout
// yields ErrExecTimeout; a command whose fate is unknown yields
// ErrCommandMayStillRun.
func (c *Client) Exec(ctx context.Context, sandboxID string, req ExecRequest) (*ExecResult, error) {
	return c.exec(ctx, sandboxID, req, execMode{})
}

// execMode is how the client's own commands differ from a user's.
type execMode struct {
	probe bool // a readiness probe (execCall.probe)
	raw   bool // output bytes as they came (execCall.raw)
}

func (c *Client) exec(ctx context.Context, sandboxID string, req ExecRequest, mode execMode) (*ExecResult, error) {
	if sandboxID == "" {
		return nil, fmt.Errorf("%w: exec needs a sandbox id", ErrInvalidRequest)
	}
	x := execCall{
		id: sandboxID, req: req, timeout: req.Timeout,
		env:     mergeEnv(req.Env, req.SensitiveEnv),
		secrets: append(mapValues(req.SensitiveEnv), req.Secrets...),
		what:    fmt.Sprintf("running %s in sandbox %s", quoteCommand(req.Command), sandboxID),
		probe:   mode.probe, raw: mode.raw,
	}
	if x.timeout <= 0 {
		x.timeout = DefaultExecTimeout
	}
	if req.OnOutput != nil {
		x.output = newOutputScrubber(req.OnOutput, x.secrets)
	}
	res, err := c.execConnect(ctx, x)
	if err != nil {
		return nil, scrubError(err, x.secrets)
	}
	return res, nil
}

// execCall is one Exec, resolved.
type execCall struct {
	id      string
	req     ExecRequest
	env     map[string]string // Env and SensitiveEnv merged; never nil
	secrets []string          // SensitiveEnv's values and Secrets
	timeout time.Duration
	what    string // "running "cmd" in sandbox id", the prefix of every error
	// probe: a readiness probe, whose caller asks the shared status poller
	// about the sandbox after a failure (one batched round for every
	// waiter), so the call itself never asks error-context.
	probe bool
	// output passes output on to ExecRequest.OnOutput (nil: not asked).
	output *outputScrubber
	// raw keeps a command's output bytes as they came, without making
	// them valid UTF-8 (a tail of a log, measured in bytes).
	raw bool
}

func mergeEnv(env, sensitive map[string]string) map[string]string {
	out := make(map[string]string, len(env)+len(sensitive))
	for k, v := range env {
		out[k] = v
	}
	for k, v := range sensitive {
		out[k] = v
	}
	return out
}

// scrubbedError hides secret values in an error's text; errors.Is and
// errors.As still see the whole chain.
type scrubbedError struct {
	err     error
	secrets []string
}

func (e *scrubbedError) Error() string { return ScrubText(e.err.Error(), e.secrets) }
func (e *scrubbedError) Unwrap() error { return e.err }

func scrubError(err error, secrets []string) error {
	if err == nil || len(secrets) == 0 {
		return err
	}
	return &scrubbedError{err: err, secrets: secrets}
}

// sandboxKinds remembers what the platform's answers said about each
// sandbox, as hints that may be stale: its last status, its lifetime, and
// its egress policy, as the egress-policy endpoint (a read, or an accepted
// write) or else its sandbox object showed it.
type sandboxKinds struct {
	mu      sync.Mutex
	seen    map[string]bool // a sandbox object was seen
	status  map[string]string
	egress  map[string]EgressPolicy
	timeout map[string]int // timeoutMinutes of the last sandbox object
	// policySeen: egress holds what the egress-policy endpoint said (or
	// this client's own create sent), which a sandbox object's lists never
	// replace: the object may show only the lists the sandbox was created
	// with [I: whether it mirrors later writes is not published], and a
	// sandbox restored from a checkpoint is created without lists and
	// locked afterwards.
	policySeen map[string]bool
	// created is when this client's create of a sandbox was answered: the
	// platform boots it from then, so a boot wait that starts later (a
	// loaded machine took half a second to get from the answer to the
	// wait) still measures the boot (takeCreated).
	created map[string]time.Time
}

func (k *sandboxKinds) remember(sbs ...Sandbox) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.init()
	for i := range sbs {
		sb := &sbs[i]
		if sb.ID == "" {
			continue
		}
		k.seen[sb.ID] = true
		k.status[sb.ID] = sb.Status
		k.timeout[sb.ID] = sb.TimeoutMinutes
		switch {
		case k.policySeen[sb.ID]:
		case sb.NetworkAllowlist != nil:
			k.egress[sb.ID] = EgressPolicy{Allowlist: sb.NetworkAllowlist}
		case sb.NetworkDenylist != nil:
			k.egress[sb.ID] = EgressPolicy{Denylist: sb.NetworkDenylist}
		default:
			k.egress[sb.ID] = OpenEgressPolicy()
		}
	}
}

func (k *sandboxKinds) init() {
	if k.seen == nil {
		k.seen, k.status, k.egress, k.timeout = map[string]bool{}, map[string]string{}, map[string]EgressPolicy{}, map[string]int{}
		k.policySeen, k.created = map[string]bool{}, map[string]time.Time{}
	}
}

// observeStatus records statuses from status:batchGet answers.
func (k *sandboxKinds) observeStatus(ss []SandboxStatus) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.init()
	for _, s := range ss {
		k.status[s.SandboxID] = s.Status
	}
}

// rememberCreated is remember for this client's own create: the answer's
// lists are the ones just sent, so they are as sure as an endpoint read.
func (k *sandboxKinds) rememberCreated(sb Sandbox, answered time.Time) {
	k.remember(sb)
	if sb.ID != "" {
		k.mu.Lock()
		k.policySeen[sb.ID] = true
		k.created[sb.ID] = answered
		k.mu.Unlock()
	}
}

// takeCreated returns and forgets when this client's create of id was
// answered (false: it did not create it, or a wait already took it).
func (k *sandboxKinds) takeCreated(id string) (time.Time, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	at, ok := k.created[id]
	delete(k.created, id)
	return at, ok
}

// observePolicy records the desired policy of an accepted write or of a
// read of the egress-policy endpoint.
func (k *sandboxKinds) observePolicy(id string, p EgressPolicy) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.init()
	k.egress[id] = p
	k.policySeen[id] = true
}

// KnownSandbox is what the client's answers so far said about a sandbox.
// Status and Egress are hints: the platform may have moved on since.
type KnownSandbox struct {
	Status string
	// Egress is the desired policy the egress-policy endpoint last showed
	// (read or written by this client) or this client's create sent, else
	// the one the sandbox object showed (its network lists; both null read
	// as open).
	Egress EgressPolicy
	// EgressSure: Egress is not just a sandbox object's lists, which may be
	// only the create-time ones.
	EgressSure bool
	// TimeoutMinutes is the sandbox's lifetime from the last sandbox object
	// seen (its timeoutMinutes, as the platform answered it), so a caller
	// can compare a command's timeout with it without another GET.
	TimeoutMinutes int
}

// Known returns what the client learned about a sandbox from the sandbox
// objects, status answers and policy writes it has seen, without a request.
// ok is false when it has seen no sandbox object for id.
func (c *Client) Known(id string) (KnownSandbox, bool) {
	k := &c.kinds
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.seen[id] {
		return KnownSandbox{}, false
	}
	return KnownSandbox{Status: k.status[id], Egress: k.egress[id], EgressSure: k.policySeen[id], TimeoutMinutes: k.timeout[id]}, true
}

// gatewayBase is the sandbox's address on the gateway:
// {gateway_url without trailing /}/{user_ns}/{job_id}.
func gatewayBase(a *GatewayAuth) string {
	return strings.TrimRight(a.GatewayURL, "/") + "/" + url.PathEscape(a.UserNS) + "/" + url.PathEscape(a.JobID)
}

// errorContext asks the control plane why a sandbox stopped. A failure
// reads as "status unknown", which callers treat as not running, as the SDK
// does.
func (c *Client) errorContext(ctx context.Context, id string) *SandboxErrorContext {
	ec, err := c.GetSandboxErrorContext(ctx, id)
	if err != nil {
		return &SandboxErrorContext{}
	}
	return ec
}

// errorContextFor is errorContext, or "status unknown" for a readiness
// probe, whose caller asks the shared status poller instead. A gateway miss
// with an unknown status keeps the token: the gateway often trails RUNNING,
// and a sandbox that really stopped fails the poller's check.
func (c *Client) errorContextFor(ctx context.Context, x execCall) *SandboxErrorContext {
	if x.probe {
		return &SandboxErrorContext{}
	}
	return c.errorContext(ctx, x.id)
}

func notRunning(what, id string, ec *SandboxErrorContext) error {
	status := ec.Status
	if status == "" {
		status = "unknown"
	}
	return fmt.Errorf("%s: %w: %w", what, ErrSandboxNotRunning, &SandboxFailedError{
		SandboxID: id, Status: status, ErrorType: deref(ec.ErrorType), ErrorMessage: deref(ec.ErrorMessage),
		ControlPlaneStatus: ec.Status,
	})
}

// goneFromNode reports the gateway's "this sandbox is not on its node"
// (Connect not_found; a file route's 502 sandbox_not_found). Like the SDK, the error
// reads TERMINATED / SANDBOX_NOT_FOUND unless the control plane names a
// terminal status or an error of its own; ControlPlaneStatus keeps what the
// control plane said, because right after boot a RUNNING sandbox can be
// missing from a gateway that has not registered it yet.
func goneFromNode(what, id string, ec *SandboxErrorContext) error {
	failed := &SandboxFailedError{
		SandboxID: id, Status: ec.Status, ErrorType: deref(ec.ErrorType), ErrorMessage: deref(ec.ErrorMessage),
		ControlPlaneStatus: ec.Status, GatewayNotFound: true,
	}
	if !IsTerminalStatus(failed.Status) {
		failed.Status = StatusTerminated
	}
	if failed.ErrorType == "" {
		failed.ErrorType = "SANDBOX_NOT_FOUND"
	}
	if failed.ErrorMessage == "" {
		failed.ErrorMessage = "Sandbox is no longer present on the runtime node. Please create a new sandbox."
	}
	return fmt.Errorf("%s: %w: %w", what, ErrSandboxNotRunning, failed)
}

// gatewayErrorCode reads the gateway's {"error": "...", "message": "..."}
// body from an APIError (whose Detail holds the raw body, since the gateway
// sends no "detail") and, when it parses, makes Detail the readable
// message.
func gatewayErrorCode(e *APIError) string {
	var body struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal([]byte(e.Detail), &body) != nil {
		return ""
	}
	if body.Message != "" {
		e.Detail = body.Message
		if body.Error != "" {
			e.Detail = body.Error + ": " + body.Message
		}
	}
	return body.Error
}

// isTimeout reports an attempt that ran out of time (not the caller's
// context, which Exec checks first).
func isTimeout(err error) bool {
	var nerr net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &nerr) && nerr.Timeout())
}

// quoteCommand shortens a command for messages, as the SDK does (50
// characters).
func quoteCommand(cmd string) string {
	const maxLen = 50
	if r := []rune(cmd); len(r) > maxLen {
		return fmt.Sprintf("%q...", string(r[:maxLen]))
	}
	return fmt.Sprintf("%q", cmd)
}
