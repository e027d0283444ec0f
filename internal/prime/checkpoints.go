package prime

// Checkpoints of a VM sandbox's root filesystem: POST
// /sandbox/{id}/checkpoints takes one (answering once the request is
// accepted), the checkpoint goes PENDING → FROZEN → DURABLE and is only
// restorable once DURABLE; FAILED and DELETING are terminal. A checkpoint
// that is not DURABLE when its sandbox is deleted is discarded with it; a
// DURABLE one outlives its source. Bodies are snake_case (the SDK's
// SandboxCheckpoint model).

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Checkpoint states.
const (
	CheckpointPending  = "PENDING"
	CheckpointFrozen   = "FROZEN"
	CheckpointDurable  = "DURABLE"
	CheckpointFailed   = "FAILED"
	CheckpointDeleting = "DELETING"
)

// MergePending is the documented `merge` value of a volume publish whose
// file-level merge still runs after the checkpoint is DURABLE. Other values
// are not published; anything but "pending" counts as finished [I].
const MergePending = "pending"

// Limits the SDK checks before checkpoints:batchGet.
const (
	MaxBatchCheckpointIDs = 100
	MaxCheckpointIDLength = 64
)

// Checkpoint is a checkpoint record (GET, list, batchGet; [I] also the
// create and publish answers, whose schemas are not published).
type Checkpoint struct {
	ID            string    `json:"id"`
	SandboxID     string    `json:"sandbox_id"`
	ParentID      *string   `json:"parent_id"`
	TeamID        *string   `json:"team_id"`
	State         string    `json:"state"`
	Depth         int       `json:"depth"`
	DockerImage   string    `json:"docker_image"`
	DiskSizeBytes *int64    `json:"disk_size_bytes"`
	StoredBytes   *int64    `json:"stored_bytes"`
	Error         *string   `json:"error"`
	Merge         *string   `json:"merge"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

// UnmarshalJSON reads timestamps with or without a zone (ParseISOTime).
func (c *Checkpoint) UnmarshalJSON(data []byte) error {
	type plain Checkpoint
	return decodeWithISOTimes(data, (*plain)(c))
}

// Usable reports whether a restore may use the checkpoint: DURABLE and, for
// a volume publish, its merge no longer pending.
func (c Checkpoint) Usable(needMerge bool) bool {
	return c.State == CheckpointDurable && (!needMerge || c.Merge == nil || *c.Merge != MergePending)
}

// IsTerminalCheckpointState reports whether a checkpoint in state will never
// become DURABLE.
func IsTerminalCheckpointState(state string) bool {
	return state == CheckpointFailed || state == CheckpointDeleting
}

// CreateCheckpointOptions are the optional body of a checkpoint create.
type CreateCheckpointOptions struct {
	// TTLSeconds deletes the checkpoint that long after the request. The
	// published bounds are not confirmed, so only a positive value is
	// required here [I].
	TTLSeconds *int `json:"ttl_seconds,omitempty"`
}

// ErrCheckpointFailed is wrapped by every *CheckpointFailedError.
var ErrCheckpointFailed = errors.New("checkpoint is not usable")

// CheckpointFailedError reports a checkpoint that will never be DURABLE: it
// FAILED, is being deleted, or is gone (NOT_FOUND: deleted, or lost with its
// source sandbox before it was DURABLE).
type CheckpointFailedError struct {
	CheckpointID string
	// State is FAILED or DELETING; empty when Gone.
	State string
	// Reason is the checkpoint's error, or the platform's lookup message.
	Reason string
	Gone   bool
}

func (e *CheckpointFailedError) Error() string {
	if e.Gone {
		msg := fmt.Sprintf("checkpoint %s is gone: it was deleted, or lost because its sandbox was deleted before the checkpoint was DURABLE", e.CheckpointID)
		if e.Reason != "" {
			msg += " (" + e.Reason + ")"
		}
		return msg
	}
	msg := fmt.Sprintf("checkpoint %s is %s", e.CheckpointID, e.State)
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return msg
}

// Unwrap lets errors.Is find ErrCheckpointFailed, and ErrNotFound for a
// checkpoint that is gone.
func (e *CheckpointFailedError) Unwrap() []error {
	if e.Gone {
		return []error{ErrCheckpointFailed, ErrNotFound}
	}
	return []error{ErrCheckpointFailed}
}

func checkpointPath(id string) string { return "/sandbox/checkpoints/" + url.PathEscape(id) }

// CreateCheckpoint checkpoints a running VM sandbox's root filesystem. The
// answer is the new checkpoint, usually PENDING; WaitForCheckpoint waits for
// DURABLE. The request is not retried once it may have reached the server
// (no idempotency key is published for it): a failure after that may have
// created a checkpoint, which ListSandboxCheckpoints shows.
func (c *Client) CreateCheckpoint(ctx context.Context, sandboxID string, o CreateCheckpointOptions) (*Checkpoint, error) {
	if o.TTLSeconds != nil && *o.TTLSeconds < 1 {
		return nil, fmt.Errorf("%w: ttl_seconds must be positive, got %d", ErrInvalidRequest, *o.TTLSeconds)
	}
	var body any
	if o.TTLSeconds != nil {
		body = o // the SDK sends no body at all without a TTL
	}
	var out Checkpoint
	if err := c.do(ctx, call{method: http.MethodPost, path: sandboxPath(sandboxID) + "/checkpoints", body: body, out: &out, retry: retryUnsent}); err != nil {
		return nil, err
	}
	if out.ID == "" {
		return nil, fmt.Errorf("POST %s/checkpoints: the answer has no checkpoint id", sandboxPath(sandboxID))
	}
	return &out, nil
}

// GetCheckpoint reads one checkpoint. An unknown or inaccessible id wraps
// ErrNotFound.
func (c *Client) GetCheckpoint(ctx context.Context, id string) (*Checkpoint, error) {
	var out Checkpoint
	if err := c.do(ctx, call{method: http.MethodGet, path: checkpointPath(id), out: &out, retry: retryIdempotent}); err != nil {
		return nil, err
	}
	return &out, nil
}

// CheckpointList is a list answer: a sandbox's checkpoints, or one page of
// the owner's ([I] next_cursor, as the owner-wide delete pages; null or
// absent on the last page).
type CheckpointList struct {
	Checkpoints []Checkpoint `json:"checkpoints"`
	NextCursor  *string      `json:"next_cursor"`
}

// ListSandboxCheckpoints lists a sandbox's checkpoints, oldest first.
func (c *Client) ListSandboxCheckpoints(ctx context.Context, sandboxID string) ([]Checkpoint, error) {
	var out CheckpointList
	if err := c.do(ctx, call{method: http.MethodGet, path: sandboxPath(sandboxID) + "/checkpoints", out: &out, retry: retryIdempotent}); err != nil {
		return nil, err
	}
	if out.Checkpoints == nil {
		out.Checkpoints = []Checkpoint{}
	}
	return out.Checkpoints, nil
}

// ListCheckpointsOptions filter the owner's checkpoints.
type ListCheckpointsOptions struct {
	// TeamID lists a team's checkpoints; empty means the configured team,
	// or the caller's own.
	TeamID string
	// SandboxID keeps one sandbox's checkpoints (deleted sandboxes' too).
	SandboxID string
}

// WalkCheckpoints pages through the owner's checkpoints, oldest first
// (including those of deleted sandboxes), following next_cursor ([I] sent
// back as the cursor query parameter) until it is null; it stops as soon as
// visit returns false.
func (c *Client) WalkCheckpoints(ctx context.Context, o ListCheckpointsOptions, visit func(Checkpoint) bool) error {
	q := url.Values{}
	if team := c.teamOr(o.TeamID); team != "" {
		q.Set("team_id", team)
	}
	if o.SandboxID != "" {
		q.Set("sandbox_id", o.SandboxID)
	}
	seen := map[string]bool{}
	for range maxListPages {
		var out CheckpointList
		if err := c.do(ctx, call{method: http.MethodGet, path: "/sandbox/checkpoints", query: q, out: &out, retry: retryIdempotent}); err != nil {
			return err
		}
		for _, ck := range out.Checkpoints {
			if !visit(ck) {
				return nil
			}
		}
		if out.NextCursor == nil || *out.NextCursor == "" || len(out.Checkpoints) == 0 {
			return nil
		}
		// A cursor that comes back would loop forever.
		if seen[*out.NextCursor] {
			return fmt.Errorf("listing checkpoints: the platform repeated cursor %q", *out.NextCursor)
		}
		seen[*out.NextCursor] = true
		q.Set("cursor", *out.NextCursor)
	}
	return fmt.Errorf("listing checkpoints: more than %d pages", maxListPages)
}

// ListCheckpoints returns every checkpoint WalkCheckpoints visits.
func (c *Client) ListCheckpoints(ctx context.Context, o ListCheckpointsOptions) ([]Checkpoint, error) {
	all := []Checkpoint{}
	err := c.WalkCheckpoints(ctx, o, func(ck Checkpoint) bool {
		all = append(all, ck)
		return true
	})
	return all, err
}

// DeleteCheckpoint stops a checkpoint's storage billing and deletes it (204,
// no body). An unknown id wraps ErrNotFound; callers that only want it gone
// (a retried delete whose first attempt succeeded) treat that as success.
func (c *Client) DeleteCheckpoint(ctx context.Context, id string) error {
	return c.do(ctx, call{method: http.MethodDelete, path: checkpointPath(id), retry: retryIdempotent})
}

// DeleteCheckpointOnceUploaded deletes a checkpoint; one already gone
// counts as deleted. The platform keeps a checkpoint that is still
// uploading (409), so that one is first waited for (at most timeout, through
// WaitForCheckpoint), then deleted; one that is lost meanwhile counts as
// deleted, and one that FAILED is deleted all the same.
func (c *Client) DeleteCheckpointOnceUploaded(ctx context.Context, id string, timeout time.Duration) error {
	err := c.DeleteCheckpoint(ctx, id)
	switch {
	case err == nil || errors.Is(err, ErrNotFound):
		return nil
	case !errors.Is(err, ErrConflict):
		return err
	}
	c.debug(ctx, "checkpoint still uploading; waiting for it before deleting it", map[string]any{"checkpoint_id": id})
	waitCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, werr := c.WaitForCheckpoint(waitCtx, id, WaitCheckpointOptions{})
	var failed *CheckpointFailedError
	switch {
	case errors.As(werr, &failed) && failed.Gone:
		return nil
	case werr != nil && !errors.As(werr, &failed):
		return fmt.Errorf("checkpoint %s could not be deleted while it uploads, and did not finish uploading: %w", id, werr)
	}
	if err := c.DeleteCheckpoint(ctx, id); err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	return nil
}

// CheckpointLookupError is one per-id error of checkpoints:batchGet
// (missing and inaccessible ids are both NOT_FOUND).
type CheckpointLookupError struct {
	CheckpointID string `json:"checkpoint_id"`
	Code         string `json:"code"`
	Message      string `json:"message"`
}

// BatchCheckpointsRequest is the checkpoints:batchGet body.
type BatchCheckpointsRequest struct {
	CheckpointIDs []string `json:"checkpoint_ids"`
}

// BatchCheckpointsResponse answers checkpoints:batchGet: every requested id
// appears in one of the arrays; a FAILED checkpoint is a record, not an
// error.
type BatchCheckpointsResponse struct {
	Checkpoints []Checkpoint            `json:"checkpoints"`
	Errors      []CheckpointLookupError `json:"errors"`
}

// ValidateCheckpointIDs is the SDK's check before checkpoints:batchGet: 1 to
// 100 unique ids of 1 to 64 characters.
func ValidateCheckpointIDs(ids []string) error {
	if len(ids) == 0 || len(ids) > MaxBatchCheckpointIDs {
		return fmt.Errorf("%w: checkpoints:batchGet takes 1 to %d ids, got %d", ErrInvalidRequest, MaxBatchCheckpointIDs, len(ids))
	}
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if err := ValidateCheckpointID(id); err != nil {
			return err
		}
		if seen[id] {
			return fmt.Errorf("%w: checkpoints:batchGet: duplicate id %q", ErrInvalidRequest, id)
		}
		seen[id] = true
	}
	return nil
}

// ValidateCheckpointID checks one id's length (1 to 64 characters).
func ValidateCheckpointID(id string) error {
	if n := len(id); n == 0 || n > MaxCheckpointIDLength {
		return fmt.Errorf("%w: a checkpoint id has 1 to %d characters, got %d", ErrInvalidRequest, MaxCheckpointIDLength, n)
	}
	return nil
}

// BatchGetCheckpoints reads 1 to 100 checkpoints in one request. When the
// server answers 404 or 405 the client remembers that the endpoint is
// unsupported and reads one GET per id from then on (as it does for
// status:batchGet); that fallback reports unknown ids as NOT_FOUND.
func (c *Client) BatchGetCheckpoints(ctx context.Context, ids []string) (*BatchCheckpointsResponse, error) {
	if err := ValidateCheckpointIDs(ids); err != nil {
		return nil, err
	}
	st := c.resources()
	if !st.checkpointBatchUnsupported.Load() {
		var out BatchCheckpointsResponse
		err := c.do(ctx, call{
			method: http.MethodPost, path: "/sandbox/checkpoints:batchGet",
			body: BatchCheckpointsRequest{CheckpointIDs: ids}, out: &out, retry: retryIdempotent,
		})
		switch code := StatusCodeOf(err); {
		case err == nil:
			return &out, nil
		case code == http.StatusNotFound || code == http.StatusMethodNotAllowed:
			st.checkpointBatchUnsupported.Store(true)
			c.debug(ctx, "checkpoints:batchGet unsupported; falling back to one GET per checkpoint", map[string]any{"status": code})
		default:
			return nil, err
		}
	}
	out := &BatchCheckpointsResponse{Checkpoints: []Checkpoint{}, Errors: []CheckpointLookupError{}}
	for _, id := range ids {
		ck, err := c.GetCheckpoint(ctx, id)
		switch {
		case errors.Is(err, ErrNotFound):
			out.Errors = append(out.Errors, CheckpointLookupError{CheckpointID: id, Code: BatchCodeNotFound, Message: "Checkpoint not found"})
		case err != nil:
			return nil, err
		default:
			out.Checkpoints = append(out.Checkpoints, *ck)
		}
	}
	return out, nil
}

// CheckpointObservation is one poll's answer for one checkpoint: a record,
// or a per-id lookup error.
type CheckpointObservation struct {
	Checkpoint *Checkpoint
	Error      *CheckpointLookupError
}

// DefaultCheckpointBackoff is the checkpoint poller's cadence. The SDK
// polls one checkpoint every 1 s ×1.5; this poller batches every waiting
// checkpoint in one request per round, so it can look sooner.
var DefaultCheckpointBackoff = Backoff{Initial: 250 * time.Millisecond, Factor: 1.5, Max: 5 * time.Second, Jitter: 0.2}

// CheckpointPoller is the client's shared checkpoint poller: every
// checkpoint the process waits on is read in the same checkpoints:batchGet
// request (≤ 100 ids each), as the StatusPoller does for sandboxes.
type CheckpointPoller struct {
	*batchPoller[string, CheckpointObservation]
}

// NewCheckpointPoller builds a checkpoint poller on c with cadence b.
func NewCheckpointPoller(c *Client, b Backoff) *CheckpointPoller {
	fetch := func(ctx context.Context, ids []string) (map[string]CheckpointObservation, error) {
		resp, err := c.BatchGetCheckpoints(ctx, ids)
		if err != nil {
			return nil, err
		}
		out := make(map[string]CheckpointObservation, len(ids))
		for i := range resp.Checkpoints {
			ck := resp.Checkpoints[i]
			out[ck.ID] = CheckpointObservation{Checkpoint: &ck}
		}
		for i := range resp.Errors {
			e := resp.Errors[i]
			out[e.CheckpointID] = CheckpointObservation{Error: &e}
		}
		return out, nil
	}
	failed := func(id string, err error) error {
		return fmt.Errorf("polling checkpoint %s: %w", id, err)
	}
	missing := func(id string) error {
		return fmt.Errorf("checkpoint %s: missing from the checkpoints:batchGet answer", id)
	}
	return &CheckpointPoller{newBatchPoller(b, strings.Compare, chunkedRound(MaxBatchCheckpointIDs, fetch, failed, missing))}
}

// CheckpointPoller returns the client's shared checkpoint poller
// (DefaultCheckpointBackoff).
func (c *Client) CheckpointPoller() *CheckpointPoller {
	st := c.resources()
	st.checkpointPollerOnce.Do(func() {
		if st.checkpointPoller == nil {
			st.checkpointPoller = NewCheckpointPoller(c, DefaultCheckpointBackoff)
		}
	})
	return st.checkpointPoller
}

// WaitCheckpointOptions tune WaitForCheckpoint.
type WaitCheckpointOptions struct {
	// Merged also waits, for a volume publish, until merge is no longer
	// pending.
	Merged bool
	// OnProgress is called when the observed state or merge changes (for
	// logs); optional. It runs on the poller's goroutine.
	OnProgress func(Checkpoint)
}

// WaitForCheckpoint waits through the shared checkpoint poller until the
// checkpoint is DURABLE (and merged, with Merged) and returns its record.
// It fails closed: FAILED or DELETING, or the checkpoint gone (NOT_FOUND:
// deleted, or lost with its sandbox before it was DURABLE) is a
// *CheckpointFailedError at once; ctx carries the only deadline, and when it
// ends first the error says which state the checkpoint was last seen in
// and wraps ctx's cause.
func (c *Client) WaitForCheckpoint(ctx context.Context, id string, o WaitCheckpointOptions) (*Checkpoint, error) {
	if err := ValidateCheckpointID(id); err != nil {
		return nil, err
	}
	var (
		mu   sync.Mutex
		last *Checkpoint
	)
	err := c.CheckpointPoller().Watch(ctx, id, nil, func(obs CheckpointObservation) (bool, error) {
		if obs.Error != nil {
			if obs.Error.Code == BatchCodeNotFound {
				return false, &CheckpointFailedError{CheckpointID: id, Gone: true, Reason: obs.Error.Message}
			}
			return false, fmt.Errorf("checkpoint %s: %s: %s", id, obs.Error.Code, obs.Error.Message)
		}
		ck := *obs.Checkpoint
		mu.Lock()
		changed := last == nil || last.State != ck.State || deref(last.Merge) != deref(ck.Merge)
		last = &ck
		mu.Unlock()
		if changed && o.OnProgress != nil {
			o.OnProgress(ck)
		}
		if IsTerminalCheckpointState(ck.State) {
			return false, &CheckpointFailedError{CheckpointID: id, State: ck.State, Reason: deref(ck.Error)}
		}
		return ck.Usable(o.Merged), nil
	})
	mu.Lock()
	defer mu.Unlock()
	switch {
	case err == nil:
		return last, nil
	case ctx.Err() != nil && last != nil:
		state := last.State
		if last.State == CheckpointDurable && o.Merged {
			state += " with its merge " + deref(last.Merge)
		}
		return nil, fmt.Errorf("checkpoint %s was still %s when the wait ended: %w", id, state, err)
	case ctx.Err() != nil:
		return nil, fmt.Errorf("checkpoint %s was never observed before the wait ended: %w", id, err)
	}
	return nil, err
}

// resourceState is the per-client state of the checkpoint, volume, network
// and image calls.
type resourceState struct {
	checkpointBatchUnsupported atomic.Bool
	checkpointPollerOnce       sync.Once
	checkpointPoller           *CheckpointPoller
}

// resources returns c's resourceState (a field of the Client, kept in one
// place so these calls add one line to it).
func (c *Client) resources() *resourceState { return &c.res }

// teamOr is team when set, else the configured team, else "".
func (c *Client) teamOr(team string) string {
	if team == "" && c.cfg.TeamID != nil {
		return *c.cfg.TeamID
	}
	return team
}
