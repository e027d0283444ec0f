package prime

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-cleanhttp"
)

// APIPrefix is prepended to every REST endpoint.
const APIPrefix = "/api/v1"

// LogFunc receives debug records. The provider wires it to tflog; records
// never contain the Authorization header, the API key, gateway tokens or
// secret values.
type LogFunc func(ctx context.Context, msg string, fields map[string]any)

// Options configure a Client. Zero values select the defaults noted.
type Options struct {
	Config Config
	// Version goes into the User-Agent: terraform-provider-prime/<Version>.
	Version string
	// HTTPClient defaults to a go-cleanhttp pooled client sized for fleets.
	HTTPClient *http.Client
	Log        LogFunc
	// Retry is the backoff between attempts (default 100 ms ×2 to 5 s, ±50 %).
	Retry Backoff
	// MaxRetries is how many times a retryable request is repeated (default
	// 8; negative disables retries). The SDK's 3 attempts are too few for a
	// fleet of hundreds of sandboxes on a flaky network.
	MaxRetries int
	// Throttle paces REST requests; nil means unpaced.
	Throttle *Throttle
	// RequestTimeout bounds one attempt (default 30 s, as in the SDK).
	RequestTimeout time.Duration
	// CommandStopGrace is how long a VM command that timed out or was
	// interrupted gets between SIGTERM and SIGKILL (default 5 s).
	CommandStopGrace time.Duration
	// JobPollInterval is how often the shared job poller looks at every
	// waiting background job (default DefaultJobPollInterval).
	JobPollInterval time.Duration
}

// DefaultCommandStopGrace is the default Options.CommandStopGrace.
const DefaultCommandStopGrace = 5 * time.Second

// DefaultRetryBackoff is the backoff between request attempts.
var DefaultRetryBackoff = Backoff{Initial: 100 * time.Millisecond, Factor: 2, Max: 5 * time.Second, Jitter: 0.5}

// DefaultMaxRetries is the default number of retries of a retryable request.
const DefaultMaxRetries = 8

// Client talks to the Prime Sandboxes REST API and the sandbox gateway.
type Client struct {
	cfg        Config
	httpClient *http.Client
	userAgent  string
	log        LogFunc
	retry      Backoff
	maxRetries int
	throttle   *Throttle
	timeout    time.Duration

	// batchUnsupported is set for the client's lifetime once status:batchGet
	// answers 404/405, as the SDK (prime-sandboxes 0.2.39) does.
	batchUnsupported atomic.Bool

	pollerOnce sync.Once
	poller     *StatusPoller

	// jobBatchUnsupported is set for the client's lifetime once the
	// background-jobs status:batchGet answers 404/405, as the SDK does.
	jobBatchUnsupported atomic.Bool
	jobPollerOnce       sync.Once
	jobPoller           *JobPoller
	jobPollInterval     time.Duration

	gateway gatewayTokens
	// kinds caches which sandboxes are VMs (their commands go over Connect).
	kinds sandboxKinds
	// retired are sandboxes a refresh found ended after their checkpoint
	// (see MarkRetired).
	retired retiredSandboxes
	// secrets caches the names of each sandbox's secrets.
	secrets sandboxSecretNames
	// streamHTTP carries Connect calls: the client's transport without an
	// overall timeout, which would cut long command streams.
	streamHTTP *http.Client
	// stopGrace is Options.CommandStopGrace.
	stopGrace time.Duration
	// execStarted, when set (by tests), is called when a command stream
	// reports the command's pid.
	execStarted func(sandboxID string, pid uint32)

	// egressLatency and bootLatency learn the data plane's apply time and
	// the sandboxes' boot time (latency_estimate.go).
	egressLatency  latencyEstimate
	bootLatency    latencyEstimate
	gatewayLatency latencyEstimate // RUNNING → the gateway first answers

	// res is the checkpoint, volume, network and image calls' state.
	res resourceState
}

// New builds a client. It fails without an API key, before any request, as
// the SDK does.
func New(o Options) (*Client, error) {
	if o.Config.APIKey == "" {
		return nil, ErrMissingAPIKey
	}
	if o.Config.BaseURL == "" {
		o.Config.BaseURL = DefaultBaseURL
	}
	o.Config.BaseURL = NormalizeBaseURL(o.Config.BaseURL)
	if _, err := url.Parse(o.Config.BaseURL); err != nil {
		return nil, fmt.Errorf("invalid base URL %q: %w", o.Config.BaseURL, err)
	}
	hc := o.HTTPClient
	if hc == nil {
		tr := cleanhttp.DefaultPooledTransport()
		// The pooled default keeps GOMAXPROCS+1 idle connections per host;
		// a fleet apply has dozens of requests in flight, and closing their
		// connections after each answer would churn sockets.
		tr.MaxIdleConnsPerHost = 128
		tr.MaxIdleConns = 256
		hc = &http.Client{Transport: tr}
	}
	c := &Client{
		cfg:             o.Config,
		httpClient:      hc,
		userAgent:       "terraform-provider-prime/" + strings.TrimPrefix(orDefault(o.Version, "dev"), "v"),
		log:             o.Log,
		retry:           o.Retry,
		maxRetries:      o.MaxRetries,
		throttle:        o.Throttle,
		timeout:         o.RequestTimeout,
		stopGrace:       o.CommandStopGrace,
		jobPollInterval: o.JobPollInterval,
		streamHTTP:      &http.Client{Transport: hc.Transport, CheckRedirect: hc.CheckRedirect, Jar: hc.Jar},
	}
	if c.stopGrace <= 0 {
		c.stopGrace = DefaultCommandStopGrace
	}
	if c.jobPollInterval <= 0 {
		c.jobPollInterval = DefaultJobPollInterval
	}
	if c.retry == (Backoff{}) {
		c.retry = DefaultRetryBackoff
	}
	switch {
	case c.maxRetries == 0:
		c.maxRetries = DefaultMaxRetries
	case c.maxRetries < 0:
		c.maxRetries = 0
	}
	if c.timeout <= 0 {
		c.timeout = 30 * time.Second
	}
	return c, nil
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// Config returns the resolved configuration the client uses.
func (c *Client) Config() Config { return c.cfg }

// UserAgent is the User-Agent header value sent on every request.
func (c *Client) UserAgent() string { return c.userAgent }

// retryClass says which failures a request may be repeated after.
type retryClass int

const (
	// retryIdempotent: GET/PUT/DELETE, create (it carries an idempotency
	// key), status:batchGet and auth: retried on 429, 502/503/504, refused
	// connections and connections reset while the answer was read.
	retryIdempotent retryClass = iota + 1
	// retryUnsent: other POSTs. Only failures where the request never
	// reached the server (connection refused) and 429s (refused before
	// anything was done) are retried; another status or a reset may mean
	// the server acted, so repeating could act twice.
	retryUnsent
)

// call describes one logical request.
type call struct {
	method string
	path   string // endpoint below /api/v1
	query  url.Values
	body   any
	out    any
	retry  retryClass
	// scrub lists extra values (secrets) that must not appear in logs.
	scrub []string
	// emptyOK: a 2xx without a body is a success with nothing to decode
	// (out is left as it is).
	emptyOK bool
	// lookups: how many sandbox lookups the platform counts against the
	// token's ceiling for each attempt (LookupsPerMinute).
	lookups int
}

// do performs a call with pacing, retries and debug logging.
func (c *Client) do(ctx context.Context, cl call) error {
	u := c.cfg.BaseURL + APIPrefix + cl.path
	if len(cl.query) > 0 {
		u += "?" + cl.query.Encode()
	}
	var payload []byte
	if cl.body != nil {
		var err error
		if payload, err = json.Marshal(cl.body); err != nil {
			return fmt.Errorf("encoding %s %s: %w", cl.method, cl.path, err)
		}
	}
	headers := http.Header{
		"Authorization": {"Bearer " + c.cfg.APIKey},
		"Accept":        {"application/json"},
		"User-Agent":    {c.userAgent},
	}
	if payload != nil {
		headers.Set("Content-Type", "application/json")
	}
	return c.send(ctx, cl, u, headers, payload, c.throttle)
}

// send runs the attempt loop of REST requests (the gateway's have theirs:
// gatewayDo).
func (c *Client) send(ctx context.Context, cl call, u string, headers http.Header, payload []byte, throttle *Throttle) error {
	scrub := append([]string{c.cfg.APIKey}, cl.scrub...)
	logPath := cl.path
	if len(cl.query) > 0 {
		logPath += "?" + cl.query.Encode()
	}
	for attempt := 0; ; attempt++ {
		status, header, body, elapsed, err := c.attempt(ctx, cl.method, u, headers, payload, throttle, cl.lookups)
		// Redacting bodies costs more than the request itself on a fleet:
		// only when someone reads the record.
		if c.log != nil {
			fields := map[string]any{
				"method": cl.method, "path": logPath, "attempt": attempt + 1,
				"duration_ms": elapsed.Milliseconds(),
			}
			if payload != nil {
				fields["request_body"] = redactBody(payload, scrub)
			}
			if err != nil {
				fields["error"] = ScrubText(err.Error(), scrub)
			} else {
				fields["status"] = status
				fields["response_body"] = redactBody(body, scrub)
			}
			c.debug(ctx, "Prime API request", fields)
		}

		if ctxErr := ctx.Err(); ctxErr != nil {
			return fmt.Errorf("%s %s: %w", cl.method, cl.path, context.Cause(ctx))
		}

		var wait time.Duration
		retryable := false
		switch {
		case err != nil:
			retryable = isUnsent(err) || (cl.retry == retryIdempotent && isResetWhileReading(err))
			err = fmt.Errorf("%s %s: %w", cl.method, cl.path, err)
		case status >= 200 && status < 300:
			if cl.out == nil || (cl.emptyOK && len(bytes.TrimSpace(body)) == 0) {
				return nil
			}
			if decErr := json.Unmarshal(body, cl.out); decErr != nil {
				return fmt.Errorf("%s %s: decoding the answer: %w", cl.method, cl.path, decErr)
			}
			return nil
		default:
			apiErr := newAPIError(cl.method, cl.path, status, header, body)
			// A server may echo the request in its detail: the error a user
			// sees must not carry the key or secret values either.
			apiErr.Detail = ScrubText(apiErr.Detail, scrub)
			err = apiErr
			switch status {
			case http.StatusTooManyRequests:
				// A 429 on a route with account-wide limits slows the whole
				// fleet: every caller sharing the throttle waits out the same
				// pause. A sandbox's own routes are limited per sandbox (the
				// 2026 contract's published limits): only this request waits.
				pause := apiErr.RetryAfter
				if pause <= 0 {
					pause = c.retry.Delay(attempt)
				}
				if !sandboxScoped(cl.method, cl.path) {
					throttle.PauseFor(pause)
				}
				// Refused before it was acted on: any request may be sent
				// again, even one that is never repeated once it may have
				// reached the server.
				retryable = true
				wait = apiErr.RetryAfter
			case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
				retryable = cl.retry == retryIdempotent
				wait = apiErr.RetryAfter
			}
		}
		if !retryable || attempt >= c.maxRetries {
			return err
		}
		if d := c.retry.Delay(attempt); d > wait {
			wait = d
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
			// Waiting would pass the caller's deadline (a fail-closed wait's,
			// say): the retry cannot happen in time, so the outcome is now.
			return fmt.Errorf("%w (not retried: the wait of %s would pass the deadline)", err, wait.Round(time.Millisecond))
		}
		c.debug(ctx, "Prime API request will be retried", map[string]any{
			"method": cl.method, "path": logPath, "attempt": attempt + 1, "wait_ms": wait.Milliseconds(),
			"error": ScrubText(err.Error(), scrub),
		})
		if sleepErr := Sleep(ctx, wait); sleepErr != nil {
			// Only the context's error is wrapped: the retried error was not
			// the outcome, and errors.As must not report it as one.
			return fmt.Errorf("%s %s: %w (last error: %v)", cl.method, cl.path, sleepErr, err) //nolint:errorlint // see above
		}
	}
}

// sandboxScoped reports a request below one sandbox ("/sandbox/{id}..."),
// whose rate limit the platform counts per sandbox; the batch routes at
// the same depth are not, nor is deleting a sandbox (500 a minute per API
// key).
func sandboxScoped(method, path string) bool {
	rest, found := strings.CutPrefix(path, "/sandbox/")
	if !found || rest == "" {
		return false
	}
	first, sub, _ := strings.Cut(rest, "/")
	if method == http.MethodDelete && sub == "" {
		return false
	}
	return !strings.Contains(first, ":") && first != "background-jobs" && first != "checkpoints" &&
		first != "volumes" && first != "networks"
}

// maxResponseBytes bounds how much of an answer is read.
const maxResponseBytes = 32 << 20

func (c *Client) attempt(ctx context.Context, method, u string, headers http.Header, payload []byte, throttle *Throttle, lookups int) (int, http.Header, []byte, time.Duration, error) {
	if err := throttle.TakeLookups(ctx, lookups); err != nil {
		return 0, nil, nil, 0, err
	}
	release, err := throttle.Acquire(ctx)
	if err != nil {
		return 0, nil, nil, 0, err
	}
	defer release()

	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var rd io.Reader
	if payload != nil {
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(actx, method, u, rd)
	if err != nil {
		return 0, nil, nil, 0, err
	}
	req.Header = headers.Clone()
	start := time.Now()
	resp, err := c.httpClient.Do(req)
	if err != nil {
		return 0, nil, nil, time.Since(start), err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	elapsed := time.Since(start)
	if err != nil {
		return 0, nil, nil, elapsed, &readError{err: err}
	}
	return resp.StatusCode, resp.Header, body, elapsed, nil
}

// readError marks a failure while reading an answer the server had started.
type readError struct{ err error }

func (e *readError) Error() string { return "reading the answer: " + e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

// isUnsent reports failures where the request cannot have reached the
// server's application: the connection was refused or could not be opened.
func isUnsent(err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return true
	}
	var opErr *net.OpError
	return errors.As(err, &opErr) && opErr.Op == "dial" && !opErr.Timeout()
}

// isResetWhileReading reports a connection dropped mid-exchange: reset by
// peer, or closed before a complete answer. Timeouts are not included; like
// the SDK, the client does not retry them.
func isResetWhileReading(err error) bool {
	var nerr net.Error
	if errors.As(err, &nerr) && nerr.Timeout() {
		return false
	}
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, io.EOF) || errors.Is(err, syscall.EPIPE)
}

func (c *Client) debug(ctx context.Context, msg string, fields map[string]any) {
	if c.log != nil {
		c.log(ctx, msg, fields)
	}
}

// sensitiveKeys are JSON keys whose values never reach a log.
var sensitiveKeys = map[string]bool{
	"secrets": true, "token": true, "api_key": true, "apikey": true,
	"authorization": true, "password": true, "secret": true,
	// A command's environment (the REST exec body): only its names are
	// logged, as on the Connect path.
	"env": true,
}

// maxLoggedBody bounds a logged body.
const maxLoggedBody = 4096

// redactBody renders a body for a log: JSON values under sensitive keys are
// replaced by "***", then any known secret string is scrubbed from the text
// wherever it appears (a secret echoed inside an error detail, say).
func redactBody(body []byte, scrub []string) string {
	var v any
	text := string(body)
	if json.Unmarshal(body, &v) == nil {
		if out, err := json.Marshal(redactValue(v)); err == nil {
			text = string(out)
		}
	}
	text = ScrubText(text, scrub)
	if len(text) > maxLoggedBody {
		text = text[:maxLoggedBody] + "…(truncated)"
	}
	return text
}

func redactValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, val := range t {
			if sensitiveKeys[strings.ToLower(k)] {
				if m, ok := val.(map[string]any); ok {
					for mk := range m {
						m[mk] = "***"
					}
					continue
				}
				if val != nil {
					t[k] = "***"
				}
				continue
			}
			t[k] = redactValue(val)
		}
		return t
	case []any:
		for i := range t {
			t[i] = redactValue(t[i])
		}
		return t
	}
	return v
}

// ScrubText replaces every occurrence of a secret value with "***", also
// where it appears escaped inside a JSON string (secretForms). Values
// shorter than 4 bytes are skipped: scrubbing "1" would mangle every log.
func ScrubText(s string, secrets []string) string {
	for _, sec := range secrets {
		if len(sec) < 4 {
			continue
		}
		for _, form := range secretForms(sec) {
			s = strings.ReplaceAll(s, form, "***")
		}
	}
	return s
}

// secretForms is a secret as text may carry it: itself, and inside a JSON
// string as Go escapes it (a log's re-encoded body: "&" as \u0026), without
// HTML escaping, and as Python's json.dumps does (a server's error body:
// non-ASCII as \uXXXX).
func secretForms(sec string) []string {
	forms := []string{sec}
	add := func(f string) {
		for _, have := range forms {
			if have == f {
				return
			}
		}
		forms = append(forms, f)
	}
	quoted, _ := json.Marshal(sec)
	add(string(quoted[1 : len(quoted)-1]))
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(sec)
	plain := strings.TrimSuffix(buf.String(), "\n")
	plain = plain[1 : len(plain)-1]
	add(plain)
	var ascii strings.Builder
	for _, r := range plain {
		switch {
		case r < 0x80:
			ascii.WriteRune(r)
		case r <= 0xFFFF:
			fmt.Fprintf(&ascii, "\\u%04x", r)
		default:
			r -= 0x10000
			fmt.Fprintf(&ascii, "\\u%04x\\u%04x", 0xD800+(r>>10), 0xDC00+(r&0x3FF))
		}
	}
	add(ascii.String())
	return forms
}

// NewIdempotencyKey returns a fresh 32-hex-character key, the SDK's format.
func NewIdempotencyKey() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	b[6] = (b[6] & 0x0f) | 0x40 // UUID version 4
	b[8] = (b[8] & 0x3f) | 0x80 // RFC 4122 variant
	return hex.EncodeToString(b[:])
}
