package prime

// The sandbox gateway runs commands, with a short-lived token from POST
// /sandbox/{id}/auth. Like prime-sandboxes 0.2.39 (execute_command), the client
// picks the transport by the sandbox's kind: container sandboxes (vm false)
// take the REST path, POST {gateway_url}/{user_ns}/{job_id}/exec; VM
// sandboxes take the Connect command-session service (exec_connect.go). The
// SDK's tests assert that neither kind ever uses the other's transport.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// DefaultExecTimeout is the command timeout when ExecRequest.Timeout is
// zero (the SDK's default).
const DefaultExecTimeout = 300 * time.Second

// execHTTPMargin is added to the command timeout for the HTTP exchange, so
// the gateway gets to answer its own 408 before the client gives up (the
// SDK adds 5 s; a little more covers a slow connection set-up).
const execHTTPMargin = 10 * time.Second

// tokenRefreshMargin: a cached token this close to expiry is replaced before
// use, so it cannot expire while a request is on its way.
const tokenRefreshMargin = 30 * time.Second

// execConflictRetries is how often a 409 from the gateway is retried while
// the control plane says the sandbox is RUNNING (a transient gateway or DNS
// state, per the SDK), with waits of 0.25, 0.5 and 1 s.
const execConflictRetries = 3

var execConflictBackoff = Backoff{Initial: 250 * time.Millisecond, Factor: 2, Max: 2 * time.Second}

// EdgeProxyTimeout is about how long the edge proxy in front of the gateway
// lets one HTTP exchange last before it answers 524 in place of the gateway
// (the SDK counts 524, "e.g. Cloudflare 524 timeout", among the gateway's
// statuses) [I: the 100 s is Cloudflare's default origin timeout, inferred
// to apply here; warning about longer commands is the safe side]. A REST
// exec, which holds one exchange for its command's whole run, can therefore
// not report on a container command that runs longer; VM commands stream,
// with keepalive events, and are not limited by it.
const EdgeProxyTimeout = 100 * time.Second

// Exec errors. A *SandboxFailedError in the chain carries the platform's
// status, error type and message.
var (
	// ErrSandboxNotRunning: the sandbox is gone, stopped, or not running
	// yet.
	ErrSandboxNotRunning = errors.New("sandbox is not running")
	// ErrExecTimeout: the command did not finish within its timeout.
	ErrExecTimeout = errors.New("command timed out")
	// ErrCommandMayStillRun: the client lost track of a command that had
	// (or may have) started, without learning how it ended: an edge proxy
	// cut the REST exchange (HTTP 524), a command stream broke after the
	// command started, or a timed-out command could not be stopped. Running
	// it again may run it twice.
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
	// SensitiveOutput keeps the command's output out of debug records (the
	// REST answer is logged as "(withheld)"). Errors never carry output.
	SensitiveOutput bool
	// Timeout bounds the command; zero means DefaultExecTimeout. The REST
	// wire carries whole seconds, so there it is rounded up.
	Timeout time.Duration
	// OnOutput, when set, is called with the command's output as it
	// arrives: for every data event of a VM's command stream, and once per
	// stream at the end on REST (which answers only then). Chunks are
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

// execBody is the /exec request; every key is always sent, as the SDK does
// (working_dir null when unset, env {} when empty).
type execBody struct {
	Command    string            `json:"command"`
	WorkingDir *string           `json:"working_dir"`
	Env        map[string]string `json:"env"`
	SandboxID  string            `json:"sandbox_id"`
	Timeout    int               `json:"timeout"`
}

// execAnswer is the /exec answer; all three keys are required.
type execAnswer struct {
	Stdout   *string `json:"stdout"`
	Stderr   *string `json:"stderr"`
	ExitCode *int    `json:"exit_code"`
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
	vm, err := c.sandboxIsVM(ctx, sandboxID)
	if err != nil {
		return nil, scrubError(&preSendError{fmt.Errorf("%s: reading the sandbox's kind: %w", x.what, err)}, x.secrets)
	}
	if req.OnOutput != nil {
		x.output = newOutputScrubber(req.OnOutput, x.secrets)
	}
	var res *ExecResult
	if vm {
		res, err = c.execConnect(ctx, x)
	} else {
		res, err = c.execREST(ctx, x)
	}
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
	// raw keeps a VM command's output bytes as they came, without making
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
// sandbox: its kind (which never changes, so an entry stays valid for the
// client's lifetime), and, as hints that may be stale, its last status and
// the egress lists its sandbox object or an accepted policy write showed.
type sandboxKinds struct {
	mu      sync.Mutex
	vm      map[string]bool
	status  map[string]string
	egress  map[string]EgressPolicy
	timeout map[string]int // timeoutMinutes of the last sandbox object
	// reading holds, per sandbox, a channel closed when the GET that will
	// tell its kind is over, so concurrent first commands share one GET.
	reading map[string]chan struct{}
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
		k.vm[sb.ID] = sb.VM
		k.status[sb.ID] = sb.Status
		k.timeout[sb.ID] = sb.TimeoutMinutes
		switch {
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
	if k.vm == nil {
		k.vm, k.status, k.egress, k.timeout = map[string]bool{}, map[string]string{}, map[string]EgressPolicy{}, map[string]int{}
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

// observePolicy records the desired policy of an accepted write.
func (k *sandboxKinds) observePolicy(id string, p EgressPolicy) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.init()
	k.egress[id] = p
}

// KnownSandbox is what the client's answers so far said about a sandbox.
// Status and Egress are hints: the platform may have moved on since.
type KnownSandbox struct {
	VM     bool
	Status string
	// Egress is the desired policy the sandbox object showed (its network
	// lists; both null read as open), or the last one this client wrote.
	Egress EgressPolicy
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
	vm, ok := k.vm[id]
	if !ok {
		return KnownSandbox{}, false
	}
	return KnownSandbox{VM: vm, Status: k.status[id], Egress: k.egress[id], TimeoutMinutes: k.timeout[id]}, true
}

// sandboxIsVM reports the sandbox's kind from the cache, or reads the
// sandbox once (GetSandbox fills the cache). A sandbox object without a vm
// key reads as a container, as the SDK's model defaults it.
func (c *Client) sandboxIsVM(ctx context.Context, id string) (bool, error) {
	k := &c.kinds
	for {
		k.mu.Lock()
		if vm, ok := k.vm[id]; ok {
			k.mu.Unlock()
			return vm, nil
		}
		if wait, ok := k.reading[id]; ok {
			k.mu.Unlock()
			select {
			case <-wait: // answered (or failed: then this caller asks)
				continue
			case <-ctx.Done():
				return false, context.Cause(ctx)
			}
		}
		if k.reading == nil {
			k.reading = map[string]chan struct{}{}
		}
		done := make(chan struct{})
		k.reading[id] = done
		k.mu.Unlock()

		sb, err := c.GetSandbox(ctx, id)
		k.mu.Lock()
		delete(k.reading, id)
		close(done)
		k.mu.Unlock()
		if err != nil {
			return false, err
		}
		return sb.VM, nil
	}
}

// execREST runs a command on a container sandbox: POST .../exec with the
// SDK's JSON body, answered when the command has finished. A command is not
// idempotent: the shared gateway rules repeat it only when nothing can have
// run (a request that never left, a refused token, a 409 while RUNNING).
func (c *Client) execREST(ctx context.Context, x execCall) (*ExecResult, error) {
	secs := int(math.Ceil(x.timeout.Seconds()))
	body := execBody{Command: x.req.Command, Env: x.env, SandboxID: x.id, Timeout: secs}
	if x.req.WorkingDir != "" {
		body.WorkingDir = &x.req.WorkingDir
	}
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encoding the exec request: %w", err)
	}
	what := x.what
	var out execAnswer
	err = c.gatewayDo(ctx, gatewayCall{
		sandboxID: x.id, method: http.MethodPost, route: "/exec", what: what,
		contentType: "application/json", payload: payload, out: &out,
		timeout: time.Duration(secs)*time.Second + execHTTPMargin,
		scrub:   x.secrets, withholdAnswer: x.req.SensitiveOutput, probe: x.probe,
		fail: func(err error) error {
			var apiErr *APIError
			isAPI := errors.As(err, &apiErr)
			switch {
			case isAPI && apiErr.StatusCode == statusEdgeTimeout:
				return &edgeTimeoutError{what: what, apiErr: apiErr}
			case isAPI && apiErr.StatusCode == http.StatusRequestTimeout, !isAPI && isTimeout(err):
				ec := c.errorContextFor(ctx, x)
				if IsTerminalStatus(ec.Status) {
					return notRunning(what, x.id, ec)
				}
				return fmt.Errorf("%s: %w after %s", what, ErrExecTimeout, x.timeout)
			}
			return fmt.Errorf("%s: %w", what, err)
		},
	})
	if err != nil {
		return nil, err
	}
	if out.Stdout == nil || out.Stderr == nil || out.ExitCode == nil {
		return nil, fmt.Errorf("%s: the gateway's answer lacks stdout, stderr or exit_code", what)
	}
	if x.output != nil {
		x.output.write(false, []byte(*out.Stdout))
		x.output.write(true, []byte(*out.Stderr))
		x.output.flush()
	}
	return &ExecResult{ExitCode: *out.ExitCode, Stdout: *out.Stdout, Stderr: *out.Stderr}, nil
}

// statusEdgeTimeout is the edge proxy's "origin did not answer in time"
// (Cloudflare's 524), sent after about EdgeProxyTimeout.
const statusEdgeTimeout = 524

// edgeTimeoutError is a REST exec cut by the edge proxy: the gateway may
// still be running the command. It wraps ErrCommandMayStillRun and the
// *APIError (whose body, an HTML page, is left out of the message).
type edgeTimeoutError struct {
	what   string
	apiErr *APIError
}

func (e *edgeTimeoutError) Error() string {
	return fmt.Sprintf("%s: the edge proxy in front of the gateway cut the call (HTTP %d, after about %s): %v",
		e.what, e.apiErr.StatusCode, EdgeProxyTimeout, ErrCommandMayStillRun)
}

func (e *edgeTimeoutError) Unwrap() []error { return []error{ErrCommandMayStillRun, e.apiErr} }

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
// (REST 502 sandbox_not_found, Connect not_found). Like the SDK, the error
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
