package prime

// The sandbox gateway: commands run through POST {gateway_url}/{user_ns}/
// {job_id}/exec with a short-lived token from POST /sandbox/{id}/auth, the
// REST exec path of prime-sandboxes 0.2.38/0.2.39 (sandbox.py). That SDK
// uses this path for containers and Connect RPC for VMs; this client uses
// the REST path for both [I: that the gateway serves REST exec for VM
// sandboxes is inferred, not observed].

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

// Exec errors. A *SandboxFailedError in the chain carries the platform's
// status, error type and message.
var (
	// ErrSandboxNotRunning: the sandbox is gone, stopped, or not running
	// yet.
	ErrSandboxNotRunning = errors.New("sandbox is not running")
	// ErrExecTimeout: the command did not finish within its timeout.
	ErrExecTimeout = errors.New("command timed out")
)

// ExecRequest is one command for Client.Exec.
type ExecRequest struct {
	// Command is a shell command line (the gateway runs it with a shell).
	Command string
	// WorkingDir is the directory to run in; empty means the default.
	WorkingDir string
	// Env adds environment variables.
	Env map[string]string
	// Timeout bounds the command; zero means DefaultExecTimeout. The wire
	// carries whole seconds, so it is rounded up.
	Timeout time.Duration
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
// may already have replaced it with a fresh one).
func (g *gatewayTokens) invalidate(id, token string) {
	e := g.entry(id)
	e.lock <- struct{}{}
	if e.auth != nil && e.auth.Token == token {
		e.auth = nil
	}
	<-e.lock
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
// code and output.
//
// A command must never run twice because of a retry, so the request is only
// repeated when it cannot have reached the gateway (retryUnsent), after a
// 401 (once, with a fresh token: the token was refused before anything
// ran), and after a 409 while the control plane says the sandbox is RUNNING
// (the gateway refused before running anything). A vanished or stopped
// sandbox yields ErrSandboxNotRunning with a *SandboxFailedError explaining
// why; a command that outlives its timeout yields ErrExecTimeout.
func (c *Client) Exec(ctx context.Context, sandboxID string, req ExecRequest) (*ExecResult, error) {
	if sandboxID == "" {
		return nil, fmt.Errorf("%w: exec needs a sandbox id", ErrInvalidRequest)
	}
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = DefaultExecTimeout
	}
	secs := int(math.Ceil(timeout.Seconds()))
	body := execBody{Command: req.Command, Env: req.Env, SandboxID: sandboxID, Timeout: secs}
	if body.Env == nil {
		body.Env = map[string]string{}
	}
	if req.WorkingDir != "" {
		body.WorkingDir = &req.WorkingDir
	}
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encoding the exec request: %w", err)
	}
	what := fmt.Sprintf("running %s in sandbox %s", quoteCommand(req.Command), sandboxID)

	reauthed := false
	for conflicts := 0; ; {
		auth, err := c.gatewayAuth(ctx, sandboxID)
		if err != nil {
			return nil, fmt.Errorf("%s: getting a gateway token: %w", what, err)
		}
		u, err := url.Parse(strings.TrimRight(auth.GatewayURL, "/") + "/" + url.PathEscape(auth.UserNS) + "/" + url.PathEscape(auth.JobID) + "/exec")
		if err != nil {
			return nil, fmt.Errorf("%s: invalid gateway URL %q: %w", what, auth.GatewayURL, err)
		}
		headers := http.Header{
			"Authorization": {"Bearer " + auth.Token},
			"Accept":        {"application/json"},
			"Content-Type":  {"application/json"},
			"User-Agent":    {c.userAgent},
		}
		var out execAnswer
		// No throttle: it paces the REST API, and a long command would hold
		// one of its slots for its whole run. The token is scrubbed from the
		// debug records in case the gateway ever echoes it.
		err = c.send(ctx, call{
			method: http.MethodPost, path: u.Path, out: &out, retry: retryUnsent,
			scrub: []string{auth.Token}, timeout: time.Duration(secs)*time.Second + execHTTPMargin,
		}, u.String(), headers, payload, nil)
		if err == nil {
			if out.Stdout == nil || out.Stderr == nil || out.ExitCode == nil {
				return nil, fmt.Errorf("%s: the gateway's answer lacks stdout, stderr or exit_code", what)
			}
			return &ExecResult{ExitCode: *out.ExitCode, Stdout: *out.Stdout, Stderr: *out.Stderr}, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}

		var apiErr *APIError
		isAPI := errors.As(err, &apiErr)
		code := ""
		if isAPI {
			code = gatewayErrorCode(apiErr)
		}
		switch {
		case isAPI && apiErr.StatusCode == http.StatusUnauthorized && !reauthed:
			// Expired or revoked early: one fresh token, then give up.
			c.gateway.invalidate(sandboxID, auth.Token)
			reauthed = true
			continue
		case isAPI && apiErr.StatusCode == http.StatusBadGateway && code == "sandbox_not_found":
			c.gateway.forget(sandboxID)
			ec := c.errorContext(ctx, sandboxID)
			// The runtime node no longer has it, whatever the control
			// plane still says (the SDK reports it as TERMINATED).
			if !IsTerminalStatus(ec.Status) {
				ec.Status = StatusTerminated
			}
			if ec.ErrorType == nil {
				t := "SANDBOX_NOT_FOUND"
				ec.ErrorType = &t
			}
			if ec.ErrorMessage == nil {
				m := "Sandbox is no longer present on the runtime node. Please create a new sandbox."
				ec.ErrorMessage = &m
			}
			return nil, notRunning(what, sandboxID, ec)
		case isAPI && apiErr.StatusCode == http.StatusConflict:
			ec := c.errorContext(ctx, sandboxID)
			if ec.Status != StatusRunning {
				return nil, notRunning(what, sandboxID, ec)
			}
			if conflicts >= execConflictRetries {
				return nil, fmt.Errorf("%s: the gateway still answered 409 after %d attempts although the sandbox is RUNNING (a transient gateway or DNS issue; retry later): %w",
					what, conflicts+1, err)
			}
			if err := Sleep(ctx, execConflictBackoff.Delay(conflicts)); err != nil {
				return nil, fmt.Errorf("%s: %w", what, err)
			}
			conflicts++
			continue
		case isAPI && apiErr.StatusCode == http.StatusRequestTimeout, isTimeout(err):
			ec := c.errorContext(ctx, sandboxID)
			if IsTerminalStatus(ec.Status) {
				return nil, notRunning(what, sandboxID, ec)
			}
			return nil, fmt.Errorf("%s: %w after %s", what, ErrExecTimeout, timeout)
		}
		return nil, fmt.Errorf("%s: %w", what, err)
	}
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

func notRunning(what, id string, ec *SandboxErrorContext) error {
	status := ec.Status
	if status == "" {
		status = "unknown"
	}
	return fmt.Errorf("%s: %w: %w", what, ErrSandboxNotRunning, &SandboxFailedError{
		SandboxID: id, Status: status, ErrorType: deref(ec.ErrorType), ErrorMessage: deref(ec.ErrorMessage),
	})
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
