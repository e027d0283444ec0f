package prime

// Pausing and resuming a VM sandbox. Both requests return once accepted;
// the status becomes PAUSED (or RUNNING) a few seconds later. A failed
// pause leaves the sandbox RUNNING with an error message; a failed resume
// leaves it PAUSED with one, an unrecoverable one moves it to ERROR. A
// resume is checked like a create and can be refused at a limit. A paused
// sandbox is billed for its disk only, its paused time counts toward
// timeout_minutes, and its egress policy can be replaced and applies on
// resume. The answers' codes and bodies are not published: any 2xx is
// accepted [I].

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
)

// ErrResumeRefused is wrapped by every *ResumeRefusedError.
var ErrResumeRefused = errors.New("resume refused")

// ResumeRefusedError reports a paused sandbox the platform did not resume:
// it refused the request (StatusCode set: a resume is checked like a
// create, so a limit on active sandboxes, CPU or memory can refuse it), or
// accepted it and the resume failed, leaving the sandbox PAUSED with an
// error message (StatusCode 0). The sandbox stays PAUSED either way.
type ResumeRefusedError struct {
	SandboxID  string
	StatusCode int
	Message    string
	// APIError is the refusal's answer, when there was one.
	APIError *APIError
}

func (e *ResumeRefusedError) Error() string {
	msg := fmt.Sprintf("sandbox %s was not resumed and stays PAUSED", e.SandboxID)
	if e.StatusCode != 0 {
		msg += fmt.Sprintf(" (HTTP %d)", e.StatusCode)
	}
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg + "; a resume is checked like a create, so an account limit (active sandboxes, CPU, memory) may refuse it until other sandboxes stop"
}

// Unwrap lets errors.Is find ErrResumeRefused and the refusal's sentinel.
func (e *ResumeRefusedError) Unwrap() []error {
	if e.APIError != nil {
		return []error{ErrResumeRefused, e.APIError}
	}
	return []error{ErrResumeRefused}
}

// PauseFailedError reports a pause that failed: the sandbox stays RUNNING
// with the platform's error message.
type PauseFailedError struct {
	SandboxID string
	Message   string
}

func (e *PauseFailedError) Error() string {
	return fmt.Sprintf("sandbox %s was not paused and stays RUNNING: %s", e.SandboxID, e.Message)
}

// PauseSandbox asks the platform to pause a running VM sandbox (memory and
// disk kept on its node). It returns once the request is accepted. A
// repeated pause is harmless, so transport failures are retried [I].
func (c *Client) PauseSandbox(ctx context.Context, id string) error {
	return c.do(ctx, call{method: http.MethodPost, path: sandboxPath(id) + "/pause", retry: retryIdempotent})
}

// ResumeSandbox asks the platform to resume a paused VM sandbox with its
// current egress policy. It returns once the request is accepted. A refusal
// (any 4xx but 401, 404, 422 and 429, which keep their usual meaning) is a
// *ResumeRefusedError.
func (c *Client) ResumeSandbox(ctx context.Context, id string) error {
	err := c.do(ctx, call{method: http.MethodPost, path: sandboxPath(id) + "/resume", retry: retryIdempotent})
	var apiErr *APIError
	if errors.As(err, &apiErr) && isRefusal(apiErr.StatusCode) {
		return &ResumeRefusedError{SandboxID: id, StatusCode: apiErr.StatusCode, Message: apiErr.Detail, APIError: apiErr}
	}
	return err
}

// isRefusal: a 4xx that is not about the key, the id, the request's shape
// or the rate.
func isRefusal(code int) bool {
	switch code {
	case http.StatusUnauthorized, http.StatusNotFound, http.StatusUnprocessableEntity, http.StatusTooManyRequests:
		return false
	}
	return code >= 400 && code < 500
}

// WaitTransitionOptions tune WaitForPaused and WaitForResumed.
type WaitTransitionOptions struct {
	// PriorErrorMessage is the sandbox's error message before the request
	// (nil: none). The same message seen again is not the request failing
	// [I: whether the platform clears it on a new request is not published].
	PriorErrorMessage *string
	// OnProgress is called when the observed status changes; optional.
	OnProgress func(SandboxStatus)
}

// WaitForPaused waits through the shared status poller until the sandbox is
// PAUSED. A new error message while it is still RUNNING is a failed pause
// (*PauseFailedError); a terminal status is a *SandboxFailedError. ctx
// carries the deadline; when it ends first the error names the last status.
func (c *Client) WaitForPaused(ctx context.Context, id string, o WaitTransitionOptions) error {
	return c.waitTransition(ctx, id, o, StatusPaused, func(s SandboxStatus) error {
		if s.Status == StatusRunning && newMessage(s.ErrorMessage, o.PriorErrorMessage) {
			return &PauseFailedError{SandboxID: id, Message: *s.ErrorMessage}
		}
		return nil
	})
}

// WaitForResumed waits through the shared status poller until the sandbox
// is RUNNING. A new error message while it is still PAUSED is a failed
// resume (*ResumeRefusedError); ERROR or another terminal status is a
// *SandboxFailedError.
func (c *Client) WaitForResumed(ctx context.Context, id string, o WaitTransitionOptions) error {
	return c.waitTransition(ctx, id, o, StatusRunning, func(s SandboxStatus) error {
		if s.Status == StatusPaused && newMessage(s.ErrorMessage, o.PriorErrorMessage) {
			return &ResumeRefusedError{SandboxID: id, Message: *s.ErrorMessage}
		}
		return nil
	})
}

func newMessage(msg, prior *string) bool {
	return msg != nil && *msg != "" && (prior == nil || *prior != *msg)
}

func (c *Client) waitTransition(ctx context.Context, id string, o WaitTransitionOptions, want string, failed func(SandboxStatus) error) error {
	var (
		mu   sync.Mutex
		last string
	)
	err := c.StatusPoller().Watch(ctx, id, nil, func(obs StatusObservation) (bool, error) {
		if obs.Error != nil {
			return false, fmt.Errorf("sandbox %s: %s: %s", id, obs.Error.Code, obs.Error.Message)
		}
		s := *obs.Status
		mu.Lock()
		changed := s.Status != last
		last = s.Status
		mu.Unlock()
		if changed && o.OnProgress != nil {
			o.OnProgress(s)
		}
		switch {
		case s.Status == want:
			return true, nil
		case IsTerminalStatus(s.Status):
			return false, &SandboxFailedError{SandboxID: id, Status: s.Status, ErrorType: deref(s.ErrorType), ErrorMessage: deref(s.ErrorMessage)}
		}
		return false, failed(s)
	})
	if err != nil && ctx.Err() != nil {
		mu.Lock()
		defer mu.Unlock()
		if last == "" {
			last = "not seen"
		}
		return fmt.Errorf("sandbox %s did not become %s before the wait ended (last status %s): %w", id, want, last, err)
	}
	return err
}

// PauseAndWait pauses a sandbox and waits until it is PAUSED: one status
// read (shared with the poller's round) for the sandbox's current error
// message, the request, then WaitForPaused. A sandbox already PAUSED is
// left alone.
func (c *Client) PauseAndWait(ctx context.Context, id string) error {
	prior, err := c.observeStatus(ctx, id)
	if err != nil {
		return err
	}
	if prior.Status == StatusPaused {
		return nil
	}
	if err := endedError(prior); err != nil {
		return err
	}
	if err := c.PauseSandbox(ctx, id); err != nil {
		return err
	}
	return c.WaitForPaused(ctx, id, WaitTransitionOptions{PriorErrorMessage: prior.ErrorMessage})
}

// ResumeAndWait resumes a sandbox and waits until it is RUNNING; a sandbox
// already RUNNING is left alone. A refusal is a *ResumeRefusedError.
func (c *Client) ResumeAndWait(ctx context.Context, id string) error {
	prior, err := c.observeStatus(ctx, id)
	if err != nil {
		return err
	}
	if prior.Status == StatusRunning {
		return nil
	}
	if err := endedError(prior); err != nil {
		return err
	}
	if err := c.ResumeSandbox(ctx, id); err != nil {
		return err
	}
	return c.WaitForResumed(ctx, id, WaitTransitionOptions{PriorErrorMessage: prior.ErrorMessage})
}

// endedError is a *SandboxFailedError for a sandbox that has ended: it
// can be neither paused nor resumed, and the platform's refusal of either
// would read as a pause or resume that failed (a resume refusal even as an
// account limit).
func endedError(s SandboxStatus) error {
	if !IsTerminalStatus(s.Status) {
		return nil
	}
	return &SandboxFailedError{SandboxID: s.SandboxID, Status: s.Status, ErrorType: deref(s.ErrorType), ErrorMessage: deref(s.ErrorMessage)}
}

// ErrPauseCheckpointUnlisted: the sandbox is paused, but the checkpoint the
// pause took could not be listed, so its caller cannot delete it later.
var ErrPauseCheckpointUnlisted = errors.New("the sandbox is paused, but the checkpoint its pause took could not be listed")

// PauseTakingCheckpoint is PauseAndWait that also returns the ID of the
// checkpoint the platform takes when it pauses a sandbox (disk and memory,
// which outlives the sandbox once DURABLE and is billed until deleted): the
// one checkpoint of the sandbox listed after the pause and not before. It
// is "" when none is new (a sandbox already PAUSED is not paused again), or
// more than one is (another checkpoint was taken meanwhile: not ours to
// guess). [I] The contract does not say when the pause checkpoint is
// listed; the mock lists it once PAUSED. A failed listing after the pause
// wraps ErrPauseCheckpointUnlisted: the sandbox is paused then.
func (c *Client) PauseTakingCheckpoint(ctx context.Context, id string) (string, error) {
	before, err := c.ListCheckpoints(ctx, ListCheckpointsOptions{SandboxID: id})
	if err != nil {
		return "", err
	}
	if err := c.PauseAndWait(ctx, id); err != nil {
		return "", err
	}
	after, err := c.ListCheckpoints(ctx, ListCheckpointsOptions{SandboxID: id})
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrPauseCheckpointUnlisted, err)
	}
	return newCheckpointID(before, after), nil
}

// newCheckpointID is the ID of the one checkpoint in after that is not in
// before; "" if there is none, or more than one.
func newCheckpointID(before, after []Checkpoint) string {
	seen := make(map[string]bool, len(before))
	for _, ck := range before {
		seen[ck.ID] = true
	}
	found := ""
	for _, ck := range after {
		if seen[ck.ID] {
			continue
		}
		if found != "" {
			return ""
		}
		found = ck.ID
	}
	return found
}
