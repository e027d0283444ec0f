package prime

// The one rule set of every REST request to the sandbox gateway (upload,
// download, read-file), as prime-sandboxes 0.2.39 applies it to each of
// them: a refused token is replaced once; a 409 is retried while
// the control plane says RUNNING; a 502 sandbox_not_found fails at once;
// idempotent requests also ride out 408, 5xx and broken connections.
// Commands over Connect (exec_connect.go) follow the same rules in their
// protocol's terms.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// gatewayMaxTries bounds the attempts of one gateway request that meet a
// transient refusal: a 409 while the control plane says RUNNING and, for
// idempotent requests, 408, 500/502/503/504/524 and broken connections.
// The SDK's MAX_409_RETRIES: 4 attempts, waits of 0.25, 0.5 and 1 s
// (gatewayBackoff); the SDK shares one counter between both kinds.
// [I: the SDK waits 1, 2, 4 s between the retries of a download or a
// read-file and 0.25 s·2ⁿ for an upload's; one backoff for every route
// keeps one rule, and a passing 5xx is ridden out sooner.]
const gatewayMaxTries = 4

// gatewayBackoff is the wait between those attempts: 0.25, 0.5 and 1 s.
var gatewayBackoff = Backoff{Initial: 250 * time.Millisecond, Factor: 2, Max: 2 * time.Second}

// statusEdgeTimeout is the edge proxy's "origin did not answer in time"
// (Cloudflare's 524, which the SDK counts among the gateway's statuses).
const statusEdgeTimeout = 524

// maxGatewayErrorBody bounds how much of a refusal's body is read: it only
// feeds an error message.
const maxGatewayErrorBody = 64 << 10

// gatewayCall is one logical request to a sandbox's gateway.
type gatewayCall struct {
	sandboxID string
	method    string
	route     string // below the sandbox's gateway base: "/upload", "/download", ...
	query     url.Values
	// idempotent: repeating the request cannot act twice (a file transfer),
	// so 408, 5xx and connections cut mid-exchange are retried too. A
	// command is not: only failures where the request never left are.
	idempotent bool
	// timeout bounds one attempt; answerTimeout, when set, replaces it once
	// a 2xx answer's headers are in, from its Content-Length (-1: unknown),
	// so a long download gets the time its size needs.
	timeout       time.Duration
	answerTimeout func(contentLength int64) time.Duration
	// what prefixes every error: "uploading /a to sandbox sb-1".
	what string

	// The request body: payload (small, logged redacted), or open (a stream,
	// opened again for every attempt, its length or -1).
	contentType string
	payload     []byte
	open        func() (io.ReadCloser, int64, error)

	// The answer: out (JSON, read whole up to maxResponseBytes and logged)
	// or stream (a 2xx body handed over as it arrives).
	out    any
	stream func(body io.Reader) error

	scrub          []string // secret values kept out of logs and errors
	withholdAnswer bool     // a 2xx answer's body is not logged
	// probe: a readiness probe, whose caller asks the shared status poller
	// about the sandbox after a failure, so this call never asks
	// error-context, and a 409 is handed back as it is.
	probe bool
	// fail turns the last attempt's failure that no rule here handles (an
	// *APIError or a transport error) into the caller's error; nil prefixes
	// it with what.
	fail func(err error) error
}

// errAttemptTimedOut is the cause an attempt's own timer cancels it with.
var errAttemptTimedOut = errors.New("gateway attempt timed out")

// attemptTimeoutError is an attempt that ran out of its time. It reads as
// a timeout (net.Error, context.DeadlineExceeded), like the SDK's
// httpx.TimeoutException, and is never retried: the gateway may be busy
// with it still.
type attemptTimeoutError struct {
	after time.Duration
	err   error
}

func (e *attemptTimeoutError) Error() string {
	return fmt.Sprintf("no complete answer within %s: %v", e.after, e.err)
}
func (e *attemptTimeoutError) Unwrap() error   { return e.err }
func (e *attemptTimeoutError) Timeout() bool   { return true }
func (e *attemptTimeoutError) Temporary() bool { return false }
func (e *attemptTimeoutError) Is(target error) bool {
	return target == context.DeadlineExceeded
}

// localError is a failure on this side of the exchange (an upload source
// that could not be read, a download sink that refused the bytes, an answer
// that does not parse): never retried.
type localError struct{ err error }

func (e *localError) Error() string { return e.err.Error() }
func (e *localError) Unwrap() error { return e.err }

// gatewayDo runs g under the shared rules and returns nil once an attempt
// succeeded (out decoded, or stream consumed).
func (c *Client) gatewayDo(ctx context.Context, g gatewayCall) error {
	reauthed := false
	tries := 1  // attempts so far that count against gatewayMaxTries
	unsent := 0 // retries of requests that never left
	for attempt := 1; ; attempt++ {
		auth, err := c.gatewayAuth(ctx, g.sandboxID)
		if err != nil {
			return &preSendError{fmt.Errorf("%s: getting a gateway token: %w", g.what, err)}
		}
		err = c.gatewayAttempt(ctx, &g, auth, attempt)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %w", g.what, context.Cause(ctx))
		}
		var local *localError
		if errors.As(err, &local) {
			return fmt.Errorf("%s: %w", g.what, local.err)
		}

		var apiErr *APIError
		isAPI := errors.As(err, &apiErr)
		code := ""
		if isAPI {
			code = gatewayErrorCode(apiErr)
		}
		var wait time.Duration
		switch {
		case isAPI && apiErr.StatusCode == http.StatusUnauthorized && !reauthed:
			// Expired or revoked early: one fresh token, then give up.
			if err := c.gateway.invalidate(ctx, g.sandboxID, auth.Token); err != nil {
				return fmt.Errorf("%s: %w", g.what, err)
			}
			reauthed = true
			continue
		case isAPI && apiErr.StatusCode == http.StatusBadGateway && code == "sandbox_not_found":
			// Gone from its node: never retried. Right after boot the
			// gateway may not know a RUNNING sandbox yet, and its token
			// stays good then.
			ec := c.gatewayErrorContext(ctx, g)
			if ec.Status != StatusRunning && !g.probe {
				c.gateway.forget(g.sandboxID)
			}
			return goneFromNode(g.what, g.sandboxID, ec)
		case isAPI && apiErr.StatusCode == http.StatusConflict && g.probe:
			return fmt.Errorf("%s: %w", g.what, err) // transient for the probe loop
		case isAPI && apiErr.StatusCode == http.StatusConflict:
			ec := c.errorContext(ctx, g.sandboxID)
			if ec.Status != StatusRunning {
				return notRunning(g.what, g.sandboxID, ec)
			}
			if tries >= gatewayMaxTries {
				return fmt.Errorf("%s: the gateway still answered 409 after %d attempts although the sandbox is RUNNING (a transient gateway or DNS issue; retry later): %w",
					g.what, tries, err)
			}
			wait = gatewayBackoff.Delay(tries - 1)
			tries++
		case !isAPI && isUnsent(err) && unsent < c.maxRetries:
			// The request never reached the gateway: safe to repeat, on the
			// client's own retry policy, whatever the request.
			wait = c.retry.Delay(unsent)
			unsent++
		case g.idempotent && gatewayTransient(err, isAPI, apiErr):
			if tries >= gatewayMaxTries {
				return fmt.Errorf("%s: still failing after %d attempts: %w", g.what, tries, err)
			}
			wait = gatewayBackoff.Delay(tries - 1)
			tries++
		default:
			if g.fail != nil {
				return g.fail(err)
			}
			return fmt.Errorf("%s: %w", g.what, err)
		}
		c.debug(ctx, "Prime gateway request will be retried", map[string]any{
			"sandbox_id": g.sandboxID, "route": g.route, "attempt": attempt, "wait_ms": wait.Milliseconds(),
			"error": ScrubText(err.Error(), c.gatewayScrub(&g, auth)),
		})
		if err := Sleep(ctx, wait); err != nil {
			return fmt.Errorf("%s: %w", g.what, err)
		}
	}
}

// gatewayTransient reports the failures an idempotent request is retried
// after: 408 and the SDK's RETRYABLE_5XX_STATUSES, and a connection reset
// or closed while the exchange was under way. Timeouts are not: the
// gateway may still be busy with the request, and piling another on it
// does not help (the SDK retries no timeout of a transfer either).
func gatewayTransient(err error, isAPI bool, apiErr *APIError) bool {
	if isAPI {
		switch apiErr.StatusCode {
		case http.StatusRequestTimeout, http.StatusInternalServerError, http.StatusBadGateway,
			http.StatusServiceUnavailable, http.StatusGatewayTimeout, statusEdgeTimeout:
			return true
		}
		return false
	}
	return !isTimeout(err) && isResetWhileReading(err)
}

// gatewayErrorContext is errorContext, or "status unknown" for a probe.
func (c *Client) gatewayErrorContext(ctx context.Context, g gatewayCall) *SandboxErrorContext {
	if g.probe {
		return &SandboxErrorContext{}
	}
	return c.errorContext(ctx, g.sandboxID)
}

func (c *Client) gatewayScrub(g *gatewayCall, auth *GatewayAuth) []string {
	return append([]string{c.cfg.APIKey, auth.Token}, g.scrub...)
}

// gatewayAttempt makes one exchange. Gateway requests are not paced by the
// REST throttle: a long command or transfer would hold one of its slots for
// its whole run. They go over streamHTTP, which has no overall timeout: the
// attempt's own timer bounds them.
func (c *Client) gatewayAttempt(ctx context.Context, g *gatewayCall, auth *GatewayAuth, attempt int) (err error) {
	u := gatewayBase(auth) + g.route
	pu, perr := url.Parse(u)
	if perr != nil {
		return &localError{fmt.Errorf("invalid gateway URL %q: %w", auth.GatewayURL, perr)}
	}
	path := pu.Path
	if len(g.query) > 0 {
		u += "?" + g.query.Encode()
	}
	scrub := c.gatewayScrub(g, auth)
	fields := map[string]any{"method": g.method, "path": path, "sandbox_id": g.sandboxID, "attempt": attempt}
	start := time.Now()
	defer func() {
		if c.log == nil {
			return
		}
		fields["duration_ms"] = time.Since(start).Milliseconds()
		if err != nil {
			fields["error"] = ScrubText(err.Error(), scrub)
		}
		c.debug(ctx, "Prime gateway request", fields)
	}()

	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timeout := g.timeout
	timer := time.AfterFunc(timeout, func() { cancel(errAttemptTimedOut) })
	defer timer.Stop()
	timedOut := func(err error) error {
		if errors.Is(context.Cause(actx), errAttemptTimedOut) && ctx.Err() == nil {
			return &attemptTimeoutError{after: timeout, err: err}
		}
		return err
	}

	var body io.Reader
	length := int64(-1)
	var src *sourceReader
	switch {
	case g.payload != nil:
		body, length = bytes.NewReader(g.payload), int64(len(g.payload))
		if c.log != nil {
			fields["request_body"] = redactBody(g.payload, scrub)
		}
	case g.open != nil:
		rc, n, oerr := g.open()
		if oerr != nil {
			return &localError{oerr}
		}
		defer rc.Close()
		src = &sourceReader{r: rc}
		body, length = src, n
		fields["request_bytes"] = n
	}
	req, err := http.NewRequestWithContext(actx, g.method, u, body)
	if err != nil {
		return &localError{err}
	}
	if body != nil {
		req.ContentLength = length
		if length == 0 {
			req.Body = http.NoBody
		}
	}
	req.Header.Set("Authorization", "Bearer "+auth.Token)
	req.Header.Set("User-Agent", c.userAgent)
	req.Header.Set("Accept", "application/json")
	if g.contentType != "" {
		req.Header.Set("Content-Type", g.contentType)
	}
	resp, err := c.streamHTTP.Do(req)
	if err != nil {
		if src != nil && src.err != nil {
			return &localError{src.err}
		}
		return timedOut(err)
	}
	defer resp.Body.Close()
	fields["status"] = resp.StatusCode

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		raw, rerr := io.ReadAll(io.LimitReader(resp.Body, maxGatewayErrorBody))
		if rerr != nil {
			return timedOut(&readError{err: rerr})
		}
		apiErr := newAPIError(g.method, path, resp.StatusCode, resp.Header, raw)
		// A gateway may echo the request: the error a user sees must not
		// carry a token or secret value either.
		apiErr.Detail = ScrubText(apiErr.Detail, scrub)
		if c.log != nil {
			fields["response_body"] = redactBody(raw, scrub)
		}
		return apiErr
	}
	if g.answerTimeout != nil {
		timeout = g.answerTimeout(resp.ContentLength)
		timer.Reset(timeout)
	}
	switch {
	case g.stream != nil:
		rd := &markedReader{r: resp.Body}
		serr := g.stream(rd)
		fields["response_bytes"] = rd.n
		if serr == nil {
			return nil
		}
		var re *readError
		if errors.As(serr, &re) {
			return timedOut(serr) // the connection's failure, not the sink's
		}
		return &localError{serr}
	case g.out != nil:
		raw, rerr := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
		if rerr != nil {
			return timedOut(&readError{err: rerr})
		}
		if c.log != nil {
			if g.withholdAnswer {
				fields["response_body"] = "(withheld)"
			} else {
				fields["response_body"] = redactBody(raw, scrub)
			}
		}
		if derr := json.Unmarshal(raw, g.out); derr != nil {
			return &localError{fmt.Errorf("decoding the gateway's answer: %w", derr)}
		}
	}
	return nil
}

// sourceReader is an upload's body: it remembers a failure of the source
// itself, which is the client's fault and not retried.
type sourceReader struct {
	r   io.Reader
	err error
}

func (s *sourceReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		s.err = err
	}
	return n, err
}

// markedReader is a streamed answer: a failure while reading it is marked
// as the connection's (a *readError), so a sink that passes it on can be
// told from a sink that gave up on its own.
type markedReader struct {
	r io.Reader
	n int64
}

func (m *markedReader) Read(p []byte) (int, error) {
	n, err := m.r.Read(p)
	m.n += int64(n)
	if err != nil && !errors.Is(err, io.EOF) {
		return n, &readError{err: err}
	}
	return n, err
}

// preSendError marks a failure before any request to the gateway left
// (its token could not be read): nothing ran.
type preSendError struct{ err error }

func (e *preSendError) Error() string { return e.err.Error() }
func (e *preSendError) Unwrap() error { return e.err }
