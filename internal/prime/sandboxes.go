package prime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
)

func sandboxPath(id string) string { return "/sandbox/" + url.PathEscape(id) }

// CreateSandbox creates a sandbox. An idempotency key is generated once per
// call when the request has none, and every transport retry of this call
// reuses it, so a create retried after a 503 creates one sandbox. The
// configured team is added when the request names none. The request is
// validated as given (the string start-command rule applies to explicit
// commands only), then the SDK's defaults are filled in
// (ApplySDKCreateDefaults), so the body is the one the SDK would send.
func (c *Client) CreateSandbox(ctx context.Context, req CreateSandboxRequest) (*Sandbox, error) {
	if req.IdempotencyKey == "" {
		req.IdempotencyKey = NewIdempotencyKey()
	}
	if req.TeamID == nil && c.cfg.TeamID != nil {
		team := *c.cfg.TeamID
		req.TeamID = &team
	}
	if err := ValidateCreateSandboxRequest(req); err != nil {
		return nil, err
	}
	ApplySDKCreateDefaults(&req)
	var out Sandbox
	err := c.do(ctx, call{
		method: http.MethodPost, path: "/sandbox", body: req, out: &out,
		retry: retryIdempotent, scrub: mapValues(req.Secrets),
	})
	if err != nil {
		return nil, err
	}
	c.kinds.rememberCreated(out, time.Now())
	c.secrets.learn(out.ID, req.Secrets)
	return &out, nil
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// GetSandbox reads one sandbox. An unknown id wraps ErrNotFound; another
// owner's is a *ForeignError (ErrForeign).
func (c *Client) GetSandbox(ctx context.Context, id string) (*Sandbox, error) {
	var out Sandbox
	if err := c.do(ctx, call{method: http.MethodGet, path: sandboxPath(id), out: &out, retry: retryIdempotent, lookups: 1}); err != nil {
		return nil, c.notFoundOrForeign(ctx, id, err)
	}
	c.kinds.remember(out)
	c.secrets.learn(out.ID, out.Secrets)
	return &out, nil
}

// maxListPages guards against a server whose hasNext never turns false.
const maxListPages = 10000

// ListSandboxes pages through every sandbox matching opts.
func (c *Client) ListSandboxes(ctx context.Context, opts ListSandboxesOptions) ([]Sandbox, error) {
	var all []Sandbox
	err := c.WalkSandboxes(ctx, opts, func(sb Sandbox) bool {
		all = append(all, sb)
		return true
	})
	if err != nil {
		return nil, err
	}
	return all, nil
}

// WalkSandboxes pages through the sandboxes matching opts, in the
// platform's order, calling visit for each; it stops (without asking for
// the next page) as soon as visit returns false.
func (c *Client) WalkSandboxes(ctx context.Context, opts ListSandboxesOptions, visit func(Sandbox) bool) error {
	perPage := opts.PerPage
	if perPage <= 0 {
		perPage = 100
	}
	team := opts.TeamID
	if team == "" && c.cfg.TeamID != nil {
		team = *c.cfg.TeamID
	}
	for page := 1; page <= maxListPages; page++ {
		q := url.Values{"page": {strconv.Itoa(page)}, "per_page": {strconv.Itoa(perPage)}}
		if team != "" {
			q.Set("team_id", team)
		}
		if opts.UserID != "" {
			q.Set("user_id", opts.UserID)
		}
		if opts.Status != "" {
			q.Set("status", opts.Status)
		}
		for _, l := range opts.Labels {
			q.Add("labels", l)
		}
		if opts.IsActive != nil {
			q.Set("is_active", strconv.FormatBool(*opts.IsActive))
		}
		var resp ListSandboxesResponse
		if err := c.do(ctx, call{method: http.MethodGet, path: "/sandbox", query: q, out: &resp, retry: retryIdempotent}); err != nil {
			return err
		}
		c.kinds.remember(resp.Sandboxes...)
		for _, sb := range resp.Sandboxes {
			if !visit(sb) {
				return nil
			}
		}
		if !resp.HasNext || len(resp.Sandboxes) == 0 {
			return nil
		}
	}
	return fmt.Errorf("listing sandboxes: more than %d pages", maxListPages)
}

// DeleteSandbox deletes a sandbox. An unknown id wraps ErrNotFound; callers
// that only want the sandbox gone treat that as success. Another owner's is
// a *ForeignError (ErrForeign): it is not gone.
func (c *Client) DeleteSandbox(ctx context.Context, id string) error {
	var out map[string]any
	err := c.do(ctx, call{method: http.MethodDelete, path: sandboxPath(id), out: &out, retry: retryIdempotent})
	return c.notFoundOrForeign(ctx, id, err)
}

// MaxBulkDeleteIDs is how many ids one bulk delete may name (the published
// schema: 1-500). The provider sends full chunks: bulk deletes are counted
// per API key per minute, so a destroy of 10,000 members is 20 requests,
// not the 100 that the CLI's chunks of 100 would make.
const MaxBulkDeleteIDs = 500

// BulkDeleteSandboxes deletes by ids (in chunks of MaxBulkDeleteIDs) or by
// labels. The answers of all chunks are merged.
func (c *Client) BulkDeleteSandboxes(ctx context.Context, req BulkDeleteRequest) (*BulkDeleteResponse, error) {
	if len(req.SandboxIDs) == 0 && len(req.Labels) == 0 && !req.AllUsers {
		return nil, errors.New("bulk delete needs sandbox ids, labels or all_users")
	}
	merged := &BulkDeleteResponse{Succeeded: []string{}, Failed: []BulkDeleteFailure{}}
	chunks := [][]string{nil}
	if len(req.SandboxIDs) > 0 {
		chunks = chunkStrings(req.SandboxIDs, MaxBulkDeleteIDs)
	}
	for _, ids := range chunks {
		part := req
		part.SandboxIDs = ids
		var out BulkDeleteResponse
		if err := c.do(ctx, call{method: http.MethodDelete, path: "/sandbox", body: part, out: &out, retry: retryIdempotent}); err != nil {
			return merged, err
		}
		merged.Succeeded = append(merged.Succeeded, out.Succeeded...)
		merged.Failed = append(merged.Failed, out.Failed...)
		merged.Message = out.Message
	}
	return merged, nil
}

func chunkStrings(s []string, n int) [][]string {
	var out [][]string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}

// BatchStatus reads the lifecycle status of 1–100 unique sandboxes in one
// request. When the server answers 404 or 405 the client remembers that the
// endpoint is unsupported and falls back to one GET per id from then on, as
// the SDK does; the fallback reports unknown ids as NOT_FOUND errors.
func (c *Client) BatchStatus(ctx context.Context, ids []string) (*BatchStatusResponse, error) {
	if len(ids) == 0 || len(ids) > MaxBatchStatusIDs {
		return nil, fmt.Errorf("status:batchGet takes 1 to %d ids, got %d", MaxBatchStatusIDs, len(ids))
	}
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			return nil, fmt.Errorf("status:batchGet: duplicate id %q", id)
		}
		seen[id] = true
	}
	if !c.batchUnsupported.Load() {
		var out BatchStatusResponse
		err := c.do(ctx, call{
			method: http.MethodPost, path: "/sandbox/status:batchGet",
			body: BatchStatusRequest{SandboxIDs: ids}, out: &out, retry: retryIdempotent, lookups: len(ids),
		})
		switch code := StatusCodeOf(err); {
		case err == nil:
			c.kinds.observeStatus(out.Statuses)
			return &out, nil
		case code == http.StatusNotFound || code == http.StatusMethodNotAllowed:
			c.batchUnsupported.Store(true)
			c.debug(ctx, "status:batchGet unsupported; falling back to one GET per sandbox", map[string]any{"status": code})
		default:
			return nil, err
		}
	}
	out := &BatchStatusResponse{Statuses: []SandboxStatus{}, Errors: []SandboxStatusError{}}
	for _, id := range ids {
		sb, err := c.GetSandbox(ctx, id)
		switch {
		case errors.Is(err, ErrNotFound):
			out.Errors = append(out.Errors, SandboxStatusError{SandboxID: id, Code: BatchCodeNotFound, Message: "Sandbox not found"})
		case StatusCodeOf(err) == http.StatusForbidden:
			// As the batch endpoint reports it: an error for this id only,
			// not for every sandbox polled with it.
			out.Errors = append(out.Errors, SandboxStatusError{SandboxID: id, Code: BatchCodeForbidden, Message: err.Error()})
		case err != nil:
			// Anything else survived the client's retries: the round fails.
			return nil, err
		default:
			out.Statuses = append(out.Statuses, SandboxStatus{
				SandboxID: id, Status: sb.Status, ErrorType: sb.ErrorType,
				ErrorMessage: sb.ErrorMessage, PendingImageBuildID: sb.PendingImageBuildID,
			})
		}
	}
	return out, nil
}

// BatchStatusAll reads the status of any number of unique sandboxes: one
// BatchStatus per 100 ids, all sent at once (the throttle still paces them),
// so reading a 1000-member fleet costs one round trip, not ten. The answers
// are merged in id order; any failed request fails the whole read.
func (c *Client) BatchStatusAll(ctx context.Context, ids []string) (*BatchStatusResponse, error) {
	out := &BatchStatusResponse{Statuses: []SandboxStatus{}, Errors: []SandboxStatusError{}}
	if len(ids) == 0 {
		return out, nil
	}
	chunks := chunkStrings(ids, MaxBatchStatusIDs)
	answers := make([]*BatchStatusResponse, len(chunks))
	errs := make([]error, len(chunks))
	var wg sync.WaitGroup
	for i, chunk := range chunks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i], errs[i] = c.BatchStatus(ctx, chunk)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, a := range answers {
		out.Statuses = append(out.Statuses, a.Statuses...)
		out.Errors = append(out.Errors, a.Errors...)
	}
	return out, nil
}

// GetSandboxLogs returns the sandbox's log text.
func (c *Client) GetSandboxLogs(ctx context.Context, id string) (string, error) {
	var out SandboxLogs
	if err := c.do(ctx, call{method: http.MethodGet, path: sandboxPath(id) + "/logs", out: &out, retry: retryIdempotent}); err != nil {
		return "", err
	}
	return out.Logs, nil
}

// GetSandboxErrorContext explains why a sandbox stopped (used after gateway
// failures).
func (c *Client) GetSandboxErrorContext(ctx context.Context, id string) (*SandboxErrorContext, error) {
	var out SandboxErrorContext
	if err := c.do(ctx, call{method: http.MethodGet, path: sandboxPath(id) + "/error-context", out: &out, retry: retryIdempotent}); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetEgressPolicy reads a VM sandbox's desired policy and its generations.
func (c *Client) GetEgressPolicy(ctx context.Context, id string) (*EgressPolicyStatus, error) {
	var out EgressPolicyStatus
	if err := c.do(ctx, call{method: http.MethodGet, path: sandboxPath(id) + "/egress-policy", out: &out, retry: retryIdempotent}); err != nil {
		return nil, err
	}
	c.kinds.observePolicy(id, out.Policy)
	return &out, nil
}

// PutEgressPolicy replaces a VM sandbox's whole egress policy. Exactly one of
// the lists must be non-nil; entries are checked with the egress grammar
// before anything is sent. The answer's Generation is the version to wait
// for.
//
// The platform answers 202 once the desired generation is persisted and
// applies it asynchronously (on a paused sandbox, after the resume); the
// 202's schema is not published, so any 2xx with any body is accepted.
// When the body does not carry the generation, one GET learns it: the
// GET's desired policy must be the one written (else another writer
// replaced it in between and the generation to wait for is unknown: an
// error, fail closed), and its generation, at least ours, is waited for.
// A generation-only answer reads as not applied (applied_generation -1).
func (c *Client) PutEgressPolicy(ctx context.Context, id string, p EgressPolicy) (*EgressPolicyStatus, error) {
	if err := ValidateEgressPolicy(p); err != nil {
		return nil, err
	}
	var raw json.RawMessage
	err := c.do(ctx, call{method: http.MethodPut, path: sandboxPath(id) + "/egress-policy", body: egressPutBody(p), out: &raw,
		retry: retryIdempotent, emptyOK: true})
	if err != nil {
		return nil, err
	}
	c.kinds.observePolicy(id, p)
	if st, ok := egressPutStatus(raw); ok {
		return st, nil
	}
	st, err := c.GetEgressPolicy(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("PUT %s/egress-policy was accepted without a generation, and reading it failed: %w", sandboxPath(id), err)
	}
	if !SamePolicy(st.Policy, p) {
		return nil, fmt.Errorf("PUT %s/egress-policy was accepted without a generation, and the sandbox's desired policy "+
			"(generation %d) is no longer the one written: another writer replaced it", sandboxPath(id), st.Generation)
	}
	return st, nil
}

// egressPutRequest is the PUT body. Rules is the 2026 contract's new
// "rules" object, whose shape is not published: the client always sends
// it empty. The provider owns the sandbox's whole policy and a PUT replaces
// it, so an explicit {} says "no rules" instead of leaving whatever another
// writer set to the server's default for an absent key [I].
type egressPutRequest struct {
	Allowlist []string       `json:"allowlist"`
	Denylist  []string       `json:"denylist"`
	Rules     map[string]any `json:"rules"`
}

func egressPutBody(p EgressPolicy) egressPutRequest {
	return egressPutRequest{Allowlist: p.Allowlist, Denylist: p.Denylist, Rules: map[string]any{}}
}

// egressPutStatus reads a PUT's answer: the full status, or at least the
// generation (then not applied). ok is false when it carries no
// generation (no body, or another shape).
func egressPutStatus(raw json.RawMessage) (*EgressPolicyStatus, bool) {
	var full EgressPolicyStatus
	if json.Unmarshal(raw, &full) == nil {
		return &full, true
	}
	var partial struct {
		Generation *int64 `json:"generation"`
	}
	if json.Unmarshal(raw, &partial) != nil || partial.Generation == nil {
		return nil, false
	}
	return &EgressPolicyStatus{Generation: *partial.Generation, AppliedGeneration: -1}, true
}

// ValidateEgressPolicy checks a PUT body: exactly one list set, each entry
// valid, at most MaxEgressEntries. The mock runs the same check server-side.
func ValidateEgressPolicy(p EgressPolicy) error {
	switch {
	case p.Allowlist == nil && p.Denylist == nil:
		return errors.New("egress policy: exactly one of allowlist and denylist must be set, got neither")
	case p.Allowlist != nil && p.Denylist != nil:
		return errors.New("egress policy: allowlist and denylist are mutually exclusive, got both")
	case p.Allowlist != nil:
		return ValidateEgressList("allowlist", p.Allowlist)
	default:
		return ValidateEgressList("denylist", p.Denylist)
	}
}

// CreateGatewayAuth asks for a gateway token for a sandbox (an idempotent
// POST, as in the SDK).
func (c *Client) CreateGatewayAuth(ctx context.Context, id string) (*GatewayAuth, error) {
	var out GatewayAuth
	if err := c.do(ctx, call{method: http.MethodPost, path: sandboxPath(id) + "/auth", out: &out, retry: retryIdempotent}); err != nil {
		return nil, err
	}
	if out.Token == "" {
		return nil, fmt.Errorf("POST %s/auth: the answer has no token", sandboxPath(id))
	}
	return &out, nil
}
